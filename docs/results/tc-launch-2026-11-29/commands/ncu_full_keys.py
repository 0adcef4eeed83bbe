"""Run 2's --set full reports (one launch each, clocks locked to base): launch shape, duration,
DRAM and L2 traffic, instructions - read with ncu_report (no GPU needed).

    tar xJf r2/ncu_reports.tar.xz && python commands/ncu_full_keys.py ncu
"""
import glob
import os
import sys

import ncu_report

KEYS = ("gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "sm__cycles_active.avg",
        "dram__bytes_read.sum", "dram__bytes_read.sum.per_second", "lts__t_sectors_srcunit_tex_op_read.sum",
        "lts__t_sector_hit_rate.pct", "launch__grid_size", "launch__block_size",
        "launch__cluster_dim_x", "launch__cluster_dim_y", "launch__registers_per_thread",
        "launch__shared_mem_per_block_dynamic", "smsp__inst_executed.sum")
for path in sorted(glob.glob(os.path.join(sys.argv[1] if len(sys.argv) > 1 else "ncu", "*.ncu-rep"))):
    rng = ncu_report.load_report(path).range_by_idx(0)
    for i in range(rng.num_actions()):
        a = rng.action_by_idx(i)
        print(f"== {os.path.basename(path)}: {a.name()}")
        for k in KEYS:
            m = a.metric_by_name(k)
            if m is not None:
                print(f"   {k:45s} {m.as_double():.4g}")
