"""Lesson "fusion": the article's SAXPY variant Y = a*X + b as two kernels vs one fused kernel.

The article gives no measurement. Two kernels move 20 bytes per element (X read, Temp written,
Temp read, b read, Y written), the fused one 12; for short vectors the second launch costs more
than the bytes. The sweep is the vector length.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemmlab.lessons.base import (
    Comparison,
    LaunchContext,
    Lesson,
    LessonCheck,
    Param,
    Point,
    Variant,
    grid1d,
)
from gemmlab.lessons.check import poisoned, within
from gemmlab.numerics.bounds import gamma

BLOCK = 256
A = 1.5


class Fusion(Lesson):
    name = "fusion"
    title = "Kernel fusion (kernel_scale + kernel_add vs kernel_fused)"
    idea = ("Fusing two elementwise kernels keeps the intermediate in a register: 12 instead of 20 bytes "
            "of DRAM traffic per element, and one launch instead of two.")
    source = "fusion.cu"
    variants = (
        Variant("two_kernels", "the article's kernel_scale (Temp = a*X) then kernel_add (Y = Temp + b)", ("kernel_scale", "kernel_add")),
        Variant("fused", "the article's kernel_fused: Y[i] = a*X[i] + b[i], Temp in a register", ("kernel_fused",)),
    )
    comparisons = (Comparison("two_kernels", "fused", "fusing the two kernels"),)
    size_label = "vector length n"
    default_size, min_size, max_size = 1 << 24, 1, 1 << 28
    param = Param("size", "vector length n", int, 1, 1 << 28, 1 << 24, (1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 26), is_size=True)
    expected_category = "dram_bound (two_kernels moves 5/3 of the bytes); launch-bound when n is small"
    odd_sizes = (1, 1000, 100003)

    def inputs(self, xp: Any, rng: Any, pt: Point) -> dict:
        n = pt.size
        return {"x": rng.random(n, dtype=xp.float32) * 2 - 1, "b": rng.random(n, dtype=xp.float32) * 2 - 1}

    def outputs(self, xp: Any, pt: Point) -> dict:
        y, guard = poisoned(xp, pt.size, xp.float32)
        return {"y": y, "guard": guard, "temp": xp.empty(pt.size, dtype=xp.float32)}

    def launch(self, variant: str, ctx: LaunchContext, ins: dict, outs: dict, pt: Point) -> None:
        n, a, g = np.int32(pt.size), np.float32(A), (grid1d(pt.size, BLOCK),)
        if variant == "two_kernels":
            ctx.kernels["kernel_scale"](g, (BLOCK,), (ins["x"], a, outs["temp"], n))
            ctx.kernels["kernel_add"](g, (BLOCK,), (outs["temp"], ins["b"], outs["y"], n))
        else:
            ctx.kernels["kernel_fused"](g, (BLOCK,), (ins["x"], a, ins["b"], outs["y"], n))

    def check(self, variant: str, ins: dict, outs: dict, pt: Point, xp: Any) -> LessonCheck:
        x, b = ins["x"].astype(xp.float64), ins["b"].astype(xp.float64)
        # fl(fl(a x) + b) or fma(a, x, b): both within gamma_2 * (|a x| + |b|) (Higham, §3.1)
        bound = gamma(2) * (abs(A) * xp.abs(x) + xp.abs(b))
        return within(outs["y"], A * x + b, bound, xp, outs["guard"])

    def nbytes(self, variant: str, pt: Point) -> int:
        return (20 if variant == "two_kernels" else 12) * pt.size

    def info(self, variant: str, ctx: LaunchContext, pt: Point) -> dict:
        return {"grid": [grid1d(pt.size, BLOCK), 1, 1], "block": [BLOCK, 1, 1],
                "launches": len(self.variant(variant).kernels)}
