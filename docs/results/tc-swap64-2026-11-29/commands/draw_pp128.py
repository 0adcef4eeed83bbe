"""Draws run 2's held-out set for fp8's 128 x 128 ping-pong joining the short-K widths
(SHORT_K_WIDTHS, last: ties go to the wider) before any of it runs: every fp8 shape on a grid
(M 512..8192 and N 1024..28672 in steps of 256, K 1024..7168 in steps of 1024) whose H200 plan
(132 SMs, 4800 GB/s) differs between the earlier tree (first argument: its src/, 093c1e7) and
this one, run 1's seven shapes excluded; a random 10 (seed 128). Writes the earlier plans as
--keep-plans JSON (second argument) and prints the shapes.
Usage (repository root): python3 .../draw_pp128.py OLD_SRC OLD_PLANS_JSON"""
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tc-pp112-2026-11-29" / "commands"))
from plans_of import plans  # noqa: E402

RUN1 = {"4096x4096x4096", "2048x4096x4096", "8192x4096x4096", "16384x4096x4096",
        "4096x4096x2048", "3072x4096x4096", "4096x4096x6144"}
SHAPES = [(m, n, k) for m in range(512, 8193, 256) for n in range(1024, 28673, 256)
          for k in range(1024, 7169, 1024)]
old, new = plans(sys.argv[1], SHAPES), plans("src", SHAPES)
changed = sorted(k for k in old if old[k] != new[k] and k not in RUN1)
moves = {}
for k in changed:
    moves[(old[k], new[k])] = moves.get((old[k], new[k]), 0) + 1
print(f"{len(changed)} of {len(SHAPES)} changed")
for (a, b), n in sorted(moves.items(), key=lambda x: -x[1]):
    print(f"  {a} -> {b}: {n}")
pick = random.Random(128).sample(changed, 10)
json.dump({"fp8": {k: old[k] for k in pick}, "new": {k: new[k] for k in pick}},
          open(sys.argv[2], "w"), indent=1)
for k in pick:
    print(k, old[k], "->", new[k])
print(";".join(k.replace("x", ",") for k in pick))
