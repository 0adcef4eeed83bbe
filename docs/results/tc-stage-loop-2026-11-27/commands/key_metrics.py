import sys
from gemmlab.profile.ncu_rep import ncu_report_module
mod = ncu_report_module()
M = ["gpu__time_duration.sum", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", "smsp__inst_executed.sum",
     "sm__cycles_elapsed.avg.per_second", "lts__t_sector_hit_rate.pct", "l1tex__m_xbar2l1tex_read_bytes.sum.per_second",
     "dram__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
     "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
     "smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio", "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"]
reps = sys.argv[1:]
vals = {}
for r in reps:
    a = mod.load_report(r).range_by_idx(0).action_by_idx(0)
    vals[r] = {}
    for m in M:
        x = a.metric_by_name(m)
        vals[r][m] = x.as_double() if x is not None else float('nan')
print("%-70s" % "", "  ".join(r.split("/")[-1][:26].rjust(26) for r in reps))
for m in M:
    print("%-70s" % m, "  ".join(("%.3f" % vals[r][m]).rjust(26) for r in reps))
