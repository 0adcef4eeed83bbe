"""Draws run 2's held-out set for fp8's 128 x 128 ping-pong joining the short-K widths
(SHORT_K_WIDTHS, last: ties go to the wider) before any of it runs: every fp8 shape on a grid
(M 512..8192 and N 1024..28672 in steps of 256, K 1024..7168 in steps of 1024) whose H200 plan
(132 SMs, 4800 GB/s) differs between the earlier tree (first argument: its src/, 093c1e7) and
this one, run 1's seven shapes excluded; a random 10 (seed 128). Writes the earlier plans as
--keep-plans JSON (second argument) and prints the shapes.
Usage (repository root): python3 .../draw_pp128.py OLD_SRC OLD_PLANS_JSON [NEW_SRC]"""
import sys

from held_draw import draw_fp8

RUN1 = {"4096x4096x4096", "2048x4096x4096", "8192x4096x4096", "16384x4096x4096",
        "4096x4096x2048", "3072x4096x4096", "4096x4096x6144"}
SHAPES = [(m, n, k) for m in range(512, 8193, 256) for n in range(1024, 28673, 256)
          for k in range(1024, 7169, 1024)]
draw_fp8(sys.argv, SHAPES, RUN1, seed=128, count=10)
