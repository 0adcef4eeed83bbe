"""Lesson "bank_conflicts": column reads of the article's __shared__ float A[32][32] vs A[32][33].

The article gives no measurement. A matrix transpose needs exactly the article's column-wise
read; ``rows`` (a copy through the same tile, conflict-free on both sides) shows the speed a
conflict-free tile reaches. The sweep is the matrix size.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemmlab.lessons.base import Comparison, LaunchContext, Lesson, LessonCheck, Param, Point, Variant, grid1d
from gemmlab.lessons.check import exact, poisoned

TILE, ROWS = 32, 8


class BankConflicts(Lesson):
    name = "bank_conflicts"
    title = "Shared-memory bank conflicts (A[32][32] column reads vs padded A[32][33])"
    idea = ("Reading a column of a 32x32 float tile sends all 32 threads of a warp to one bank (a 32-way "
            "conflict, served one after another); one padding column spreads them over all 32 banks.")
    source = "bank_conflicts.cu"
    variants = (
        Variant("columns_32x32", "transpose through __shared__ float A[32][32]: column reads, 32-way conflict", ("transpose_tile_32x32",)),
        Variant("columns_32x33", "the same transpose through the padded A[32][33]: conflict-free", ("transpose_tile_32x33",)),
        Variant("rows", "copy through A[32][32], row reads only: no conflict, the same bytes", ("tile_copy_rows",)),
    )
    comparisons = (Comparison("columns_32x32", "columns_32x33", "padding the tile to [32][33]"),
                   Comparison("columns_32x32", "rows", "row-wise reads (a copy, for scale)"))
    size_label = "matrix size n (n x n floats)"
    default_size, min_size, max_size = 4096, 1, 16384
    param = Param("size", "matrix size n", int, 1, 16384, 4096, (1024, 4096, 8192), is_size=True)
    expected_category = "shared_bank_conflicts"
    odd_sizes = (1, 33, 1000)

    def inputs(self, xp: Any, rng: Any, pt: Point) -> dict:
        return {"a": rng.random((pt.size, pt.size), dtype=xp.float32) * 2 - 1}

    def outputs(self, xp: Any, pt: Point) -> dict:
        b, guard = poisoned(xp, pt.size * pt.size, xp.float32)
        return {"b": b.reshape(pt.size, pt.size), "guard": guard}

    def launch(self, variant: str, ctx: LaunchContext, ins: dict, outs: dict, pt: Point) -> None:
        fn = ctx.kernels[self.variant(variant).kernels[0]]
        g = grid1d(pt.size, TILE)
        fn((g, g), (TILE, ROWS), (ins["a"], outs["b"], np.int32(pt.size)))

    def check(self, variant: str, ins: dict, outs: dict, pt: Point, xp: Any) -> LessonCheck:
        want = ins["a"] if variant == "rows" else xp.ascontiguousarray(ins["a"].T)
        return exact(outs["b"], want, xp, outs["guard"])

    def nbytes(self, variant: str, pt: Point) -> int:
        return 8 * pt.size * pt.size

    def info(self, variant: str, ctx: LaunchContext, pt: Point) -> dict:
        g = grid1d(pt.size, TILE)
        return {"grid": [g, g, 1], "block": [TILE, ROWS, 1], "tile": "32x33" if variant == "columns_32x33" else "32x32"}
