"""Section 3's table: run 1's rows at 33-64 tokens, every split swapped plan (2 or more CTAs a
strip, within the SMs) against 64 x 64 at the same shape, by how many times 64 x 64's CTAs the
split runs (capped at the H200's swap_fill_ctas, 89) and the KB of a row of B (K x element
size). Prints: ratio, KB a row, split minus 64 x 64 (% of cuBLAS points), dtype, shape, plan.
Usage (repository root): python3 docs/results/tc-swap64-2026-11-29/commands/short_rows.py"""
import json
from pathlib import Path

R = Path(__file__).resolve().parents[1]
rows = []
for run, keep in (("tune", "keep_tune.json"), ("held", "keep_held.json")):
    for dtype in ("fp8", "bf16"):
        d = json.load(open(R / "r1" / f"{run}_{dtype}.json"))
        for s in d["shapes"]:
            M, N, K = s["shape"]
            v = {x["ran"]: 100 * x["vs_cublas"] for x in s["variants"]}
            strips = -(-N // 64)
            for name, val in v.items():
                if not name.startswith("swap") or "_k1_" in name or "64x64" not in v:
                    continue
                ks = int(name.split("_")[2][1:])
                if strips * ks > 132:
                    continue
                ratio = min(89, strips * ks) / min(89, strips)
                kb = K * (1 if dtype == "fp8" else 2) // 1024
                rows.append((round(ratio, 2), kb, round(val - v["64x64"], 1), dtype,
                             f"{M}x{N}x{K}", name))
for r in sorted(rows):
    print(*r)
