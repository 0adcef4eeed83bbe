"""Print a few Nsight Compute details-page metrics per kernel from `ncu --csv --page details`
exports (a device-side digest, so the numbers come back in a command's output):

    python benchmarks/ncu_brief.py OUT/v1.csv OUT/v2.csv
    python benchmarks/ncu_brief.py --stalls OUT/v1_raw.csv   # from `--page raw`
"""

from __future__ import annotations

import csv
import sys

WANT = ("Duration", "SM Frequency", "DRAM Throughput", "Memory Throughput", "L2 Hit Rate",
        "Compute (SM) Throughput", "Achieved Occupancy", "Executed Ipc Active",
        "Warp Cycles Per Issued Instruction", "Issue Slots Busy")


def main(paths) -> int:
    for path in paths:
        with open(path, newline="") as f:
            rows = [r for r in csv.reader(f) if len(r) > 5]
        if not rows:
            print(f"{path}: no rows")
            continue
        head = rows[0]
        seen = set()
        for r in rows[1:]:
            d = dict(zip(head, r))
            key = (d.get("Kernel Name"), d.get("Metric Name"))
            if d.get("Metric Name") in WANT and key not in seen:
                seen.add(key)
                print(f"{path}: {d.get('Kernel Name', '')[:40]} {d['Metric Name']} = "
                      f"{d['Metric Value']} {d.get('Metric Unit', '')}")
    return 0


def stalls(path, top=6):
    """The largest warp-stall sample counts (smsp__pcsamp_warps_issue_stalled_*) of a
    `ncu --csv --page raw` export, per kernel."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 5]
    head = rows[0]
    for r in rows[2:]:
        d = dict(zip(head, r))
        got = []
        for k, v in d.items():
            if k.startswith("smsp__pcsamp_warps_issue_stalled_") and not k.endswith("_not_issued"):
                try:
                    got.append((float(v.replace(",", "")), k.removeprefix("smsp__pcsamp_warps_issue_stalled_")))
                except ValueError:
                    pass
        got.sort(reverse=True)
        total = sum(v for v, _ in got) or 1
        print(f"{path}: {d.get('Kernel Name', '')[:40]} stalls: "
              + ", ".join(f"{k} {100 * v / total:.0f}%" for v, k in got[:top]))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stalls"]:
        for p in sys.argv[2:]:
            stalls(p)
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
