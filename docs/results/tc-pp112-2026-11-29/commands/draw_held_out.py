"""Draws run 2's held-out shapes (before they ran): every fp8 shape on a grid (M 256..8192 and N
1024..28672 in steps of 256, K 2048/4096/6144/8192) whose H200 plan (132 SMs, 4800 GB/s) differs
between the earlier tree (first argument: its src/) and this one, split by the earlier plan's kind
(a ping-pong tile: pingpong_width's path; cooperative: pingpong_short_k's), a random 10 of each
(seed 112), tuning shapes excluded. Writes the earlier plans as --keep-plans JSON (second
argument) and prints the shape list.
Usage: python3 draw_held_out.py OLD_SRC OLD_PLANS_JSON"""
import json
import random
import sys

from plans_of import plans

TUNING = {"2048x1792x4096", "256x14592x4096", "1024x18432x4096", "1536x9472x4096",
          "512x27904x4096", "256x9472x4096", "1536x1536x8192", "4096x4096x4096",
          "8192x4096x4096", "512x9472x4096", "1536x6144x4096", "2048x5888x4096",
          "6144x7936x4096"}
SHAPES = [(m, n, k) for m in range(256, 8193, 256) for n in range(1024, 28673, 256)
          for k in (2048, 4096, 6144, 8192)]

old, new = plans(sys.argv[1], SHAPES), plans("src", SHAPES)
changed = sorted(k for k in old if old[k] != new[k] and k not in TUNING)
width = [k for k in changed if old[k].endswith("pp")]
short_k = [k for k in changed if not old[k].endswith("pp")]
print(f"{len(changed)} changed: {len(width)} from a ping-pong plan, {len(short_k)} cooperative")
rng = random.Random(112)
pick = rng.sample(width, 10) + rng.sample(short_k, 10)
json.dump({"fp8": {k: old[k] for k in pick}, "new": {k: new[k] for k in pick}},
          open(sys.argv[2], "w"), indent=1)
for k in pick:
    print(k, old[k], "->", new[k])
print(";".join(k.replace("x", ",") for k in pick))
