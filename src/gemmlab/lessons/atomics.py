"""Lesson "atomics": count the elements equal to K, one global atomicAdd per match vs one per block.

The article measured 1.34x on a Pascal MX330 and "essentially no difference" (1.01x) on an Ampere
A4000. It states neither the array length nor how many elements match; the sweep is the fraction
of elements equal to K, which sets how many atomics contend for the one counter (0: none, 1: all).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemmlab.lessons.base import Comparison, LaunchContext, Lesson, LessonCheck, Param, Point, Variant, grid1d
from gemmlab.lessons.check import exact, poisoned

BLOCK = 256  # power of two: the article's reduction halves blockDim.x
BLOCKS_PER_SM = 8  # grid of the grid-stride kernel: 8 x 256 threads = a full H100/H200 SM (2048 threads)
K_VALUE = 7
VALUES = 1000  # non-matching elements are drawn from 0..999 without K


class Atomics(Lesson):
    name = "atomics"
    title = "Atomic contention (atomicAdd per match vs shared-memory reduction + one atomic per block)"
    idea = ("Thousands of threads incrementing one global counter serialise on it; counting locally, "
            "reducing in shared memory and adding once per block removes the contention.")
    source = "atomics.cu"
    variants = (
        Variant("atomic_per_match", "the article's count_equal_naive: atomicAdd(output, 1) per match", ("count_equal_naive",)),
        Variant("block_reduce", "the article's count_equal_optimized: grid-stride count, SMEM reduction, one atomic per block",
                ("count_equal_optimized",)),
    )
    comparisons = (Comparison("atomic_per_match", "block_reduce", "shared-memory reduction + one atomic per block"),)
    size_label = "array length N"
    default_size, min_size, max_size = 1 << 25, 1, 1 << 30
    param = Param("fraction", "fraction of elements equal to K", float, 0.0, 1.0, 0.1, (0.0, 0.01, 0.1, 0.5, 1.0))
    expected_category = "atomics (hot-spot global atomic)"
    odd_sizes = (1, 255, 100003)

    def inputs(self, xp: Any, rng: Any, pt: Point) -> dict:
        n = pt.size
        x = (rng.random(n, dtype=xp.float32) * VALUES).astype(xp.int32)
        x = xp.where(x == K_VALUE, K_VALUE + 1, x)
        match = rng.random(n, dtype=xp.float32) < pt.value
        return {"x": xp.where(match, K_VALUE, x).astype(xp.int32)}

    def outputs(self, xp: Any, pt: Point) -> dict:
        count, guard = poisoned(xp, 1, xp.int32)
        count[...] = 0  # atomicAdd accumulates: the counter must start at zero
        return {"count": count, "guard": guard}

    def grid(self, variant: str, ctx: LaunchContext, n: int) -> int:
        g = grid1d(n, BLOCK)
        return g if variant == "atomic_per_match" else max(1, min(g, ctx.sm_count * BLOCKS_PER_SM))

    def launch(self, variant: str, ctx: LaunchContext, ins: dict, outs: dict, pt: Point) -> None:
        fn = ctx.kernels[self.variant(variant).kernels[0]]
        args = (ins["x"], outs["count"], np.int32(pt.size), np.int32(K_VALUE))
        smem = 0 if variant == "atomic_per_match" else BLOCK * 4
        fn((self.grid(variant, ctx, pt.size),), (BLOCK,), args, shared_mem=smem)

    def check(self, variant: str, ins: dict, outs: dict, pt: Point, xp: Any) -> LessonCheck:
        expected = xp.asarray([int((ins["x"] == K_VALUE).sum())], dtype=xp.int32)
        return exact(outs["count"], expected, xp, outs["guard"])

    def nbytes(self, variant: str, pt: Point) -> int:
        return 4 * pt.size

    def info(self, variant: str, ctx: LaunchContext, pt: Point) -> dict:
        return {"grid": [self.grid(variant, ctx, pt.size), 1, 1], "block": [BLOCK, 1, 1], "K": K_VALUE}
