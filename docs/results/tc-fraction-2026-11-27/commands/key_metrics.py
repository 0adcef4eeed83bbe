import sys
from gemmlab.profile.ncu_rep import ncu_report_module
mod = ncu_report_module()
M = ["gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
     "smsp__inst_executed.sum", "lts__t_sector_hit_rate.pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
     "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_write.sum", "lts__t_requests_op_write.sum",
     "lts__t_sectors_srcunit_tex_op_write.sum", "l1tex__m_xbar2l1tex_read_bytes.sum", "lts__t_sectors_op_read.sum",
     "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
     "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio",
     "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio","smsp__average_warps_issue_stalled_membar_per_issue_active.ratio",
     "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
     "smsp__inst_executed_op_shared_st.sum", "launch__registers_per_thread", "sm__warps_active.avg.pct_of_peak_sustained_active"]
reps = sys.argv[1:]
vals = {}
for r in reps:
    a = mod.load_report(r).range_by_idx(0).action_by_idx(0)
    vals[r] = {}
    for m in M:
        x = a.metric_by_name(m)
        vals[r][m] = x.as_double() if x is not None else float('nan')
print("%-72s" % "", "  ".join(r.split("/")[-1][:20].rjust(20) for r in reps))
for m in M:
    print("%-72s" % m[:72], "  ".join(("%.4g" % vals[r][m]).rjust(20) for r in reps))
