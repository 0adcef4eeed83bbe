"""Run 3's Nsight Compute CSVs (5 launches each) as one table: per kernel, shape and clock control,
the median (min-max) kernel duration, SM clock and DRAM read rate.

    python commands/ncu_medians.py r3
"""
import collections
import csv
import glob
import os
import statistics
import sys

d = sys.argv[1] if len(sys.argv) > 1 else "r3"
print(f"{'file':40s} {'kernel':48s} {'us: median (min-max)':>24s} {'SM MHz':>7s} {'DRAM read TB/s':>15s}")
for path in sorted(glob.glob(os.path.join(d, "ncu_*.csv"))):
    rows = [r for r in csv.reader(open(path)) if len(r) > 10]
    h = rows[0]
    name, val, kern = h.index("Metric Name"), h.index("Metric Value"), h.index("Kernel Name")
    m = collections.defaultdict(list)
    for r in rows[1:]:
        m[r[name]].append(float(r[val].replace(",", "")))
    t = [x / 1e3 for x in m["gpu__time_duration.sum"]]  # ns -> us
    rd = statistics.median(b / (x * 1e-6) / 1e12 for b, x in zip(m["dram__bytes_read.sum"], t))
    clk = statistics.median(m["sm__cycles_elapsed.avg.per_second"]) / 1e6
    print(f"{os.path.basename(path)[4:-4]:40s} {rows[1][kern][:48]:48s} "
          f"{statistics.median(t):8.2f} ({min(t):.2f}-{max(t):.2f}) {clk:7.0f} {rd:15.2f}")
