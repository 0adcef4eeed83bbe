"""The 33-64-token tables: per shape, % of cuBLAS at its best of the rules' plan (093c1e7's), the
swapped kernel at 1 / 2 / 4 CTAs a strip, 64 x 64 and the plan without the swapped kernel; the
slice of K a swapped CTA streams (bytes a row) at 2 and 4 CTAs. Usage (repository root):
python3 docs/results/tc-swap64-2026-11-29/commands/swap_table.py JSON..."""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for f in sys.argv[1:]:
    d = json.load(open(f))
    dtype = "fp8" if "fp8" in Path(f).name else "bf16"
    keep = json.load(open(HERE / ("keep_held.json" if "held" in f else "keep_tune.json")))[dtype]
    esize = 1 if dtype == "fp8" else 2
    print("==", f, d["meta"]["device"], d["meta"]["date"])
    print(f"{'shape':16} {'rules':17} {'%':>6} | {'k1':>6} {'k2':>6} {'k4':>6} | {'64x64':>6} | "
          f"{'without':18} {'%':>6} | slice KB k2/k4 | best")
    for s in d["shapes"]:
        M, N, K = s["shape"]
        key = f"{M}x{N}x{K}"
        v = {x["ran"]: 100 * x["vs_cublas"] for x in s["variants"]}
        disp = next(x for x in s["variants"] if x["variant"] == "dispatch")
        names = keep[key]
        ks = {n.split("_")[2]: v.get(n) for n in names if n.startswith("swap")}
        without = names[-1]
        f1 = lambda x: "%6.1f" % x if x is not None else "     -"  # noqa: E731
        best = max(v, key=v.get)
        print(f"{key:16} {disp['ran']:17} {100 * disp['vs_cublas']:6.1f} | {f1(ks.get('k1'))} "
              f"{f1(ks.get('k2'))} {f1(ks.get('k4'))} | {f1(v.get('64x64'))} | {without:18} "
              f"{f1(v.get(without))} | {K * esize / 2 / 1024:5.1f} / {K * esize / 4 / 1024:4.1f} | "
              f"{best} {v[best]:.1f}" + ("" if all(x.get("ok") for x in s["variants"]) else " WRONG"))
