"""Run 2's tuning tables: per shape, % of cuBLAS at its best of the earlier tree's plan (093c1e7)
and this tree's rules' plan, then every other plan timed, best first (keep_run2.json).
Usage (repository root): python3 docs/results/tc-swap64-2026-11-29/commands/q_table.py JSON..."""
import json
import sys
from pathlib import Path

keep = json.load(open(Path(__file__).resolve().parent / "keep_run2.json"))
for f in sys.argv[1:]:
    d = json.load(open(f))
    dtype = "fp8" if "fp8" in Path(f).name else "bf16"
    print("==", f, d["meta"]["device"], d["meta"]["date"])
    for s in d["shapes"]:
        key = "x".join(map(str, s["shape"]))
        v = {x["ran"]: 100 * x["vs_cublas"] for x in s["variants"]}
        new = next(x["ran"] for x in s["variants"] if x["variant"] == "dispatch")
        old = keep["old"][f"{dtype} {key}"]
        rest = sorted((n for n in v if n not in (old, new)), key=lambda n: -v[n])
        ok = "" if all(x.get("ok") for x in s["variants"]) else " WRONG"
        print(f"{key:16} old {old:17} {v.get(old, float('nan')):6.1f} | new {new:17} {v[new]:6.1f} "
              f"{v[new] - v.get(old, float('nan')):+6.1f} | " + ", ".join(f"{n} {v[n]:.1f}" for n in rest) + ok)
