"""Draws run 7's shapes (before they ran; run 6's shapes excluded): every fp8 shape on a
grid (M 512..16384 in steps of 256, N 1280..28800 in steps of 160, K 2048/4096/6144/8192/16384)
whose H200 plan (132 SMs, 4800 GB/s) differs between the earlier tree (first argument: its src/,
a87cc89) and this one (run 6's rule, and the narrow width tried where the wide pick falls short); a
random 16 (seed 7). Writes the earlier plans as --keep-plans JSON (second argument).
Usage: python3 draw_held_out_r7.py OLD_SRC OLD_PLANS_JSON"""
import json
import random
import sys

from plans_of import plans

SHAPES = [(m, n, k) for m in range(512, 16385, 256) for n in range(1280, 28801, 160)
          for k in (2048, 4096, 6144, 8192, 16384)]

old, new = plans(sys.argv[1], SHAPES), plans("src", SHAPES)
R6 = set(json.load(open("docs/results/tc-pp112-2026-11-29/commands/old_plans_r6.json"))["fp8"])
changed = sorted(k for k in old if old[k] != new[k] and k not in R6)
print(f"{len(changed)} of {len(SHAPES)} changed")
pick = random.Random(7).sample(changed, 16)
json.dump({"fp8": {k: old[k] for k in pick}, "new": {k: new[k] for k in pick}},
          open(sys.argv[2], "w"), indent=1)
for k in pick:
    print(k, old[k], "->", new[k])
print(";".join(k.replace("x", ",") for k in pick))
