"""Draws run 4's held-out set for fp8's 128 x 128 ping-pong as the short-K fallback (in place of
the cooperative tile where no other ping-pong width replaces it, up to PP128_MAX_KTILES = 24
k-tiles; set from runs 1-3) before any of it runs: every fp8 shape (M 512..8192 and N
1024..28672 in steps of 256, K 1024/2048/3072) whose H200 plan differs between the earlier tree
(first argument: its src/, 093c1e7) and this one, runs 1-3's shapes excluded; a random 10 (seed
33). Writes the earlier plans (second argument), prints the shapes.
Usage (repository root): python3 .../draw_pp128c.py OLD_SRC OLD_PLANS_JSON [NEW_SRC]"""
import json
import sys
from pathlib import Path

from held_draw import draw_fp8

HERE = Path(__file__).resolve().parent
SEEN = (set(json.load(open(HERE / "old_plans_pp128.json"))["fp8"])
        | set(json.load(open(HERE / "old_plans_pp128k.json"))["fp8"]) | {"4096x4096x2048"})
SHAPES = [(m, n, k) for m in range(512, 8193, 256) for n in range(1024, 28673, 256)
          for k in (1024, 2048, 3072)]
draw_fp8(sys.argv, SHAPES, SEEN, seed=33, count=10)
