"""Draws the H100 check of this session's swapped-kernel rules before it runs (no H100 was lent):
shapes of 17-128 tokens, N 512..8192 in steps of 64, K 1024..16384 in steps of 1024, whose H100
plan (132 SMs, 3350 GB/s) differs between the earlier tree (first argument: its src/, 093c1e7)
and this one (cluster residency, the 64-token short-row split); a random 8 a dtype (seed 100).
Writes the earlier plans as --keep-plans JSON (second argument), prints the shapes.
Drawn with the tree of fdfcced as the new one.
Usage (repository root): python3 .../draw_h100.py OLD_SRC OLD_PLANS_JSON [NEW_SRC]"""
import sys

from held_draw import draw

cases = [(dt, m, n, k) for dt in ("fp8", "bf16") for m in range(17, 129) for n in range(512, 8193, 64)
         for k in range(1024, 16385, 1024)]
draw(sys.argv, cases, 3350.0, seed=100, per_dtype=8)
