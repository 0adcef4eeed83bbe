"""Run 5's stream-once table: per shape, % of cuBLAS at its best in each process (pass) for the
rules' plan of bd20fad (128 x 64 split 2 where the H200's stream-once rule ran it) and forced
64 x 64 / 128 x 64 split 2, with the fastest median time over the passes.

    python docs/results/tc-lastrows-2026-11-29/commands/once_table.py docs/results/tc-lastrows-2026-11-29/r5
"""
import collections
import json
import sys

d = sys.argv[1]
for dt in ("bf16", "fp8"):
    tab = collections.defaultdict(lambda: collections.defaultdict(list))
    for p in (1, 2):
        for rec in json.load(open(f"{d}/once_{dt}_{p}.json"))["shapes"]:
            s = "x".join(map(str, rec["shape"]))
            for v in rec["variants"]:
                tab[s][v["variant"]].append((100 * v.get("vs_cublas", float("nan")), v["ran"],
                                             v.get("median_s", 0) * 1e6, v.get("ok")))
    print(f"## {dt}: % of cuBLAS at its best, pass 1 / pass 2 [what ran] (fastest median us)")
    for s, vs in tab.items():
        cells = []
        for k, xs in vs.items():
            cell = (f"{k} [{xs[0][1]}]: " + " / ".join(f"{x[0]:.1f}" for x in xs)
                    + f" ({min(x[2] for x in xs):.1f} us)")
            cells.append(cell + ("" if all(x[3] for x in xs) else " WRONG"))
        print(f"{s:<16} " + "  ".join(cells))
    print()
