"""Runs 8-9's tables: each serving-batch shape's rules' plan (tree ffdfd2a) against 64 x 64 and
the plan the rules give without the swapped kernel (commands/plans_r9.json), % of cuBLAS at its
best. Usage (repository root): python3 docs/results/tc-pp112-2026-11-29/commands/serving.py
[JSON...] (default: run 9's four files)"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
plans = json.load(open(HERE / "plans_r9.json"))
files = sys.argv[1:] or [str(HERE.parent / f"r9/{k}_{d}.json")
                         for k in ("tune", "held") for d in ("fp8", "bf16")]
for f in files:
    d = json.load(open(f))
    dtype = "fp8" if "fp8" in Path(f).name else "bf16"
    print("==", Path(f).parent.name + "/" + Path(f).name, d["meta"]["device"], d["meta"]["date"])
    for s in d["shapes"]:
        key = "x".join(map(str, s["shape"]))
        v = {x["ran"]: 100 * x["vs_cublas"] for x in s["variants"]}
        disp = next(x for x in s["variants"] if x["variant"] == "dispatch")
        without = plans[dtype].get(key, ["", ""])[1]
        print("%-5s %-15s rules %-17s %5.1f | 64x64 %5s | without swap %-19s %5s | correct %s" % (
            dtype, key, disp["ran"], 100 * disp["vs_cublas"],
            "%.1f" % v["64x64"] if "64x64" in v else "-", without,
            "%.1f" % v[without] if without in v else "-",
            all(x.get("ok") for x in s["variants"])))
