"""Run 1's A/B table: % of cuBLAS at its best / kernel median / cuBLAS median per L2 promotion
setting and pass (the rules' plan), from r1/*.json.  python commands/ab_table.py r1"""
import glob
import json
import os
import re
import sys

rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1] if len(sys.argv) > 1 else "r1", "*.json"))):
    dt, pr, ps = re.match(r"(fp8|bf16)_(\w+?)_(\d)\.json", os.path.basename(f)).groups()
    for rec in json.load(open(f))["shapes"]:
        v = rec["variants"][0]
        rows.setdefault((dt, "x".join(map(str, rec["shape"]))), {}).setdefault(pr, []).append(
            f"{v['vs_cublas'] * 100:.1f} ({v['median_s'] * 1e6:.2f} us; cuBLAS {rec['cublas_median_s'] * 1e6:.2f})")
print("dtype shape | L2_256B (main before) passes 1, 2 | NONE | L2_128B")
for (dt, s), v in rows.items():
    print(f"{dt} {s}")
    for pr in ("L2_256B", "NONE", "L2_128B"):
        print(f"    {pr:8} " + "   ".join(v.get(pr, [])))
