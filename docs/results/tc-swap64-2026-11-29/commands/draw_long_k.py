"""Draws the held-out set for 128 x 112's long-K margin (long_k_margin) before any of it runs:
every fp8 shape on tc-pp112's run-5 grid (M 512..8192 and N 1024..28672 in steps of 256, K
8192/12288/16384/28672) whose H200 plan (132 SMs, 4800 GB/s) differs between the earlier tree
(first argument: its src/, 093c1e7) and this one, tc-pp112's run 4-5 shapes excluded; a random 12
(seed 112). Writes the earlier plans as --keep-plans JSON (second argument), prints the shapes.
Usage (repository root): python3 docs/results/tc-swap64-2026-11-29/commands/draw_long_k.py
OLD_SRC OLD_PLANS_JSON [NEW_SRC]"""
import json
import sys
from pathlib import Path

from held_draw import draw_fp8

PP112 = Path(__file__).resolve().parents[2] / "tc-pp112-2026-11-29" / "commands"
RUN4 = {"3840x18432x16384", "8192x7936x8192", "5120x16128x16384", "1792x25344x8192",
        "3840x11776x16384", "3584x2560x8192", "6656x4096x8192", "1536x25856x8192",
        "1536x23040x16384", "1024x4608x16384", "1792x3840x8192", "1792x6144x16384",
        "5376x4864x8192", "6144x1792x16384"}
RUN5 = set(json.load(open(PP112 / "old_plans_r5.json"))["fp8"])
SHAPES = [(m, n, k) for m in range(512, 8193, 256) for n in range(1024, 28673, 256)
          for k in (8192, 12288, 16384, 28672)]
draw_fp8(sys.argv, SHAPES, RUN4 | RUN5, seed=112, count=12)
