"""Draws the held-out set for fp8's 128 x 128 ping-pong fallback up to 32 k-tiles (K 3200-4096)
before any of it runs: every fp8 shape (M 512..8192, N 1024..28672 in steps of 256, K 3200..4096
in steps of 128) whose H200 plan differs between the earlier tree (PP128_MAX_KTILES = 24) and
this one; runs 1-2's tuning shapes excluded; a random 12 (seed 41)."""
import sys
sys.path.insert(0, "docs/results/tc-swap64-2026-11-29/commands")
from held_draw import draw_fp8

SEEN = {"4096x4096x4096", "8192x4096x4096", "2048x4096x4096", "3072x4096x4096"}
SHAPES = [(m, n, k) for m in range(512, 8193, 256) for n in range(1024, 28673, 256)
          for k in range(3200, 4097, 128)]
draw_fp8(sys.argv, SHAPES, SEEN, seed=41, count=12)
