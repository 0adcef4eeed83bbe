"""Draws run 5's held-out shapes (before they ran): every fp8 shape on a grid (M 512..8192 and N
1024..28672 in steps of 256, K 8192/12288/16384/28672) whose H200 plan (132 SMs, 4800 GB/s)
differs between the earlier tree (first argument: its src/, 3f182d4) and this one (LONG_K_MARGIN),
tuning shapes excluded; a random 18 (seed 64). Writes the earlier plans as --keep-plans JSON
(second argument) and prints the shape list.
Usage: python3 draw_held_out_r5.py OLD_SRC OLD_PLANS_JSON"""
import json
import random
import sys

from plans_of import plans

TUNING = {"3840x18432x16384", "8192x7936x8192", "5120x16128x16384", "1792x25344x8192",
          "3840x11776x16384", "3584x2560x8192", "6656x4096x8192", "1536x25856x8192",
          "1536x23040x16384", "1024x4608x16384", "1792x3840x8192", "1792x6144x16384",
          "5376x4864x8192", "6144x1792x16384"}
SHAPES = [(m, n, k) for m in range(512, 8193, 256) for n in range(1024, 28673, 256)
          for k in (8192, 12288, 16384, 28672)]

old, new = plans(sys.argv[1], SHAPES), plans("src", SHAPES)
changed = sorted(k for k in old if old[k] != new[k] and k not in TUNING)
print(f"{len(changed)} of {len(SHAPES)} changed")
pick = random.Random(64).sample(changed, 18)
json.dump({"fp8": {k: old[k] for k in pick}, "new": {k: new[k] for k in pick}},
          open(sys.argv[2], "w"), indent=1)
for k in pick:
    print(k, old[k], "->", new[k])
print(";".join(k.replace("x", ",") for k in pick))
