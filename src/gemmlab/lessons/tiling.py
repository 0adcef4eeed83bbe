"""Lesson "tiling": the article's naive matmul vs its 16x16 shared-memory tiled kernel vs cuBLAS.

The article measured tiling at 2.35x on a Pascal MX330 and 0.90x (slower) on an Ampere A4000. It
does not print its matrix size; 1024 is the size its cuBLAS time implies (2*1024^3 FLOP in
0.206 ms is 10.4 TFLOP/s on a 19.2 TFLOP/s A4000; 2048 would need 83 TFLOP/s). The sweep is the
matrix size, because whether tiling wins depends on how much of B the L2 cache holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemmlab.bench.check import evaluate, reference
from gemmlab.lessons.base import Comparison, LaunchContext, Lesson, LessonCheck, Param, Point, Variant, grid1d
from gemmlab.lessons.check import poisoned

TILE = 16  # the article's TILE_SIZE; the naive kernel gets the same 16x16 block


class Tiling(Lesson):
    name = "tiling"
    title = "Shared-memory tiling (naive vs 16x16 tiled matmul vs cuBLAS)"
    idea = ("Each 16x16 block loads tiles of A and B into shared memory once and reuses them 16 times, "
            "instead of every thread reading its row and column from global memory.")
    source = "tiling.cu"
    variants = (
        Variant("naive", "the article's matrix_multiplication_naive: N global loads of A and B per output", ("matrix_multiplication_naive",)),
        Variant("tiled", "the article's matrix_multiplication_smem: 16x16 tiles in shared memory", ("matrix_multiplication_smem",)),
        Variant("cublas", "cuBLAS SGEMM, true FP32 (TF32 off): the practical ceiling", ()),
    )
    comparisons = (Comparison("naive", "tiled", "16x16 shared-memory tiling"),
                   Comparison("naive", "cublas", "cuBLAS instead of the naive kernel"))
    size_label = "matrix size n (M = N = K)"
    default_size, min_size, max_size = 1024, 1, 8192
    param = Param("size", "matrix size n", int, 1, 8192, 1024, (256, 512, 1024, 2048), is_size=True)
    metric = "flops"
    expected_category = "memory_bound (naive: L1/L2 traffic of uncached B columns)"
    odd_sizes = (1, 17, 1000)

    def inputs(self, xp: Any, rng: Any, pt: Point) -> dict:
        n = pt.size
        return {"a": rng.random((n, n), dtype=xp.float32) * 2 - 1, "b": rng.random((n, n), dtype=xp.float32) * 2 - 1}

    def outputs(self, xp: Any, pt: Point) -> dict:
        c, guard = poisoned(xp, pt.size * pt.size, xp.float32)
        return {"c": c.reshape(pt.size, pt.size), "guard": guard}

    def launch(self, variant: str, ctx: LaunchContext, ins: dict, outs: dict, pt: Point) -> None:
        a, b, c, n = ins["a"], ins["b"], outs["c"], np.int32(pt.size)
        if variant == "cublas":
            from gemmlab.runtime import cublas

            cublas.sgemm(a, b, c)
            return
        fn = ctx.kernels[self.variant(variant).kernels[0]]
        g = grid1d(pt.size, TILE)
        fn((g, g), (TILE, TILE), (a, b, c, n, n, n))

    def check(self, variant: str, ins: dict, outs: dict, pt: Point, xp: Any) -> LessonCheck:
        ref, absref = reference(ins["a"], ins["b"], 1.0, 0.0, xp=xp)
        r = evaluate(outs["c"], ref, absref, pt.size, guard=outs["guard"], xp=xp)
        return LessonCheck(r.ok, r.reason, int(outs["c"].size), r.n_unwritten, r.n_nonfinite, r.n_over_bound,
                           r.n_guard_written, r.max_abs_err, r.rel_err)

    def flops(self, pt: Point) -> int:
        return 2 * pt.size**3

    def nbytes(self, variant: str, pt: Point) -> int:
        return 3 * 4 * pt.size**2  # A, B read once and C written once: the minimum, for reference

    def info(self, variant: str, ctx: LaunchContext, pt: Point) -> dict:
        if variant == "cublas":
            return {"library": "cublasSgemm"}
        g = grid1d(pt.size, TILE)
        return {"grid": [g, g, 1], "block": [TILE, TILE, 1]}
