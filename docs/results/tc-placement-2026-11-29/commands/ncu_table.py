"""Runs 3-4's Nsight Compute CSVs (ncu --csv --metrics, three launches each) as one table, on the
CPU: duration, SM clock, DRAM bytes, L2 sectors the SMs asked for and missed, sectors over the L2
fabric (medians of the launches):

    python docs/results/tc-placement-2026-11-29/commands/ncu_table.py DIR
"""
import csv
import glob
import os
import statistics
import sys

SCALE = {"byte": 1e-6, "Kbyte": 1e-3, "Mbyte": 1.0, "Gbyte": 1e3,
         "ns": 1e-3, "us": 1.0, "ms": 1e3, "nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "hz": 1e-9, "Khz": 1e-6,
         "Mhz": 1e-3, "Ghz": 1.0, "sector": 1e-6}
COLS = [("gpu__time_duration.sum", "us"), ("sm__cycles_elapsed.avg.per_second", "GHz"),
        ("dram__bytes_read.sum", "DRAM read MB"), ("dram__bytes_write.sum", "DRAM write MB"),
        ("lts__t_sectors_srcunit_tex.sum", "L2 sectors M"),
        ("lts__t_sectors_srcunit_tex_lookup_miss.sum", "L2 misses M"),
        ("lts__t_sectors_srcunit_ltcfabric.sum", "fabric sectors M")]


def read(path):
    vals = {}
    lines = [ln for ln in open(path) if ln.startswith('"')]
    for row in csv.DictReader(lines):
        try:
            x = float(row["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        vals.setdefault(row["Metric Name"], []).append(x * SCALE.get(row["Metric Unit"], 1.0))
    return vals


def main(folder):
    files = sorted(glob.glob(os.path.join(folder, "ncu_*.csv")))
    print("| shape | variant | " + " | ".join(c for _, c in COLS) + " |")
    print("| --- | --- |" + " --- |" * len(COLS))
    for f in files:
        shape, variant = os.path.basename(f)[4:-4].split("_", 1)
        vals = read(f)
        cells = [f"{statistics.median(vals[m]):.2f}" if m in vals else "-" for m, _ in COLS]
        print(f"| {shape} | {variant} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
