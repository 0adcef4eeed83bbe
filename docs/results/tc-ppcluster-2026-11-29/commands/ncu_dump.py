"""Dump the metrics of interest from each .ncu-rep given: JSON per report + a summary table."""
import json, sys, re
import ncu_report
PAT = re.compile(r"gpu__time_duration|pipe_tensor|lts__throughput|lts__t_bytes|lts__t_sectors_srcunit_tex|"
                 r"dram__throughput|dram__bytes_read|sm__throughput|l1tex__m_xbar2l1tex|issue_stalled.*per_issue_active|"
                 r"launch__|sm__cycles_elapsed.avg|smsp__inst_executed.sum|sm__warps_active|"
                 r"lts__t_sector_hit_rate|gpc__cycles_elapsed.max|smsp__cycles_active|tma|multicast")
out = {}
for f in sys.argv[1:]:
    ctx = ncu_report.load_report(f)
    for r in range(ctx.num_ranges()):
        rg = ctx.range_by_idx(r)
        for i in range(rg.num_actions()):
            a = rg.action_by_idx(i)
            d = {}
            for n in a.metric_names():
                if PAT.search(n):
                    m = a.metric_by_name(n)
                    try:
                        d[n] = m.as_double()
                    except Exception:
                        try: d[n] = m.as_string()
                        except Exception: pass
            out[f"{f}:{r}:{i}:{a.name()[:80]}"] = d
json.dump(out, sys.stdout, indent=0)
