"""Draws run 5's held-out set for the 64-token tile's short-row split (swap_short_split,
SWAP_TILE_MIN_ROW_BYTES; set from run 1's rows) before any of it runs: shapes of 33-64 tokens,
N 512..8192 in steps of 128, K 1024..16384 in steps of 1024, whose H200 plan (132 SMs, 4800 GB/s)
differs between the earlier tree (first argument: its src/, 29c2091) and this one, runs 1-3's
shapes excluded; a random 8 a dtype (seed 5). Writes the earlier plans as --keep-plans JSON
(second argument), prints the shapes and how the changes spread.
Drawn with the tree of 4e49fba as the new one.
Usage (repository root): python3 .../draw_short_split.py OLD_SRC OLD_PLANS_JSON [NEW_SRC]"""
import sys

from held_draw import draw

SEEN = ({(m, n, k) for m in (40, 64) for n in (1536, 2048, 2560, 3072, 4096, 4480, 5120, 5632,
                                                1024, 1280) for k in (4096, 8192, 14336)}
        | {(53, 1280, 2048), (38, 1792, 4096), (59, 2816, 4096), (58, 3584, 13312),
           (50, 1024, 11264), (55, 2816, 14336), (61, 4096, 3072), (33, 3328, 5120),
           (41, 3072, 4096), (44, 2048, 12288), (38, 2048, 6144), (58, 2048, 10240),
           (38, 1024, 5120), (35, 1024, 10240)})
cases = [(dt, m, n, k) for dt in ("fp8", "bf16") for m in range(33, 65) for n in range(512, 8193, 128)
         for k in range(1024, 16385, 1024) if (m, n, k) not in SEEN]
draw(sys.argv, cases, 4800.0, seed=5, per_dtype=8)
