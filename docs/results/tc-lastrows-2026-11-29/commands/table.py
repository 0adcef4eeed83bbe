"""A run's A/B table: per shape and variant, % of cuBLAS at its best in each pass (the median of
the rounds' ratios) and the median time for HEAD (base) and this tree (new), and what ran on
each side (one name where both ran the same plan).

    python docs/results/tc-rows-2026-11-29/commands/table.py docs/results/tc-rows-2026-11-29/r1
"""
import collections
import glob
import json
import sys

d = sys.argv[1]
for dt in ("bf16", "fp8"):
    tab = collections.defaultdict(dict)
    for t in ("base", "new"):
        for f in sorted(glob.glob(f"{d}/{dt}_{t}_*.json")):
            for rec in json.load(open(f))["shapes"]:
                s = "x".join(map(str, rec["shape"]))
                for v in rec["variants"]:
                    tab[(s, v["variant"])].setdefault(t, []).append(
                        (100 * v.get("vs_cublas", float("nan")), v.get("ok"), v["ran"],
                         v.get("median_s", 0) * 1e6))
    if not tab:
        continue
    print(f"## {dt}: % of cuBLAS at its best, pass 1 / pass 2 (base = HEAD, new = this tree); "
          f"median us over the passes")
    print(f"{'shape':<16} {'variant':<15} {'ran (base -> new)':<42} {'base':>14} {'new':>14} "
          f"{'base us':>8} {'new us':>8}")
    for (s, v), r in tab.items():
        b, n = r.get("base", []), r.get("new", [])
        fmt = lambda xs: " / ".join(f"{x[0]:.1f}" for x in xs)
        us = lambda xs: f"{sorted(x[3] for x in xs)[len(xs) // 2]:.1f}" if xs else "-"
        rb, rn = (b[0][2] if b else "-"), (n[0][2] if n else "-")
        ran = rn if rb == rn else f"{rb} -> {rn}"
        ok = all(x[1] for x in b + n)
        print(f"{s:<16} {v:<15} {ran:<42} {fmt(b):>14} {fmt(n):>14} {us(b):>8} {us(n):>8}"
              + ("" if ok else "  WRONG"))
    print()
