"""Lesson "coalescing": B[idx] = A[idx * stride], stride 1 (coalesced) vs the article's 100.

The article gives no measurement, only the claim that a stride of 100 wastes 31/32 of the
bandwidth. Both variants run one kernel (``read_strided``); the sweep is the stride, since the
waste grows with it until each thread of a warp sits in its own 32-byte sector (stride >= 8).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from gemmlab.lessons.base import Comparison, LaunchContext, Lesson, LessonCheck, Param, Point, Variant, grid1d
from gemmlab.lessons.check import exact, poisoned

BLOCK = 256
MAX_INPUT_BYTES = 8 << 30  # the strided input is n * stride floats; beyond 8 GiB refuse


class Coalescing(Lesson):
    name = "coalescing"
    title = "Memory coalescing (A[idx] vs the article's A[idx * 100])"
    idea = ("A warp reading 32 consecutive floats is served by one 128-byte request; reading every "
            "stride-th float scatters it over up to 32 sectors, most of whose bytes are thrown away.")
    source = "coalescing.cu"
    variants = (
        Variant("strided", "read_strided with the sweep's stride (the article's A[idx * 100])", ("read_strided",)),
        Variant("coalesced", "read_strided with stride 1: A[idx], one 128-byte request per warp", ("read_strided",)),
    )
    comparisons = (Comparison("strided", "coalesced", "coalesced (stride-1) reads"),)
    size_label = "elements read n"
    default_size, min_size, max_size = 1 << 23, 1, 1 << 28
    param = Param("stride", "stride", int, 1, 1024, 100, (2, 4, 8, 32, 100))
    expected_category = "uncoalesced_global_loads"
    odd_sizes = (1, 1000, 100003)

    def point_error(self, pt: Point) -> Optional[str]:
        need = 4 * pt.size * int(pt.value)
        if need > MAX_INPUT_BYTES:
            return f"the strided input needs {need / 2**30:.1f} GiB (n * stride floats); at most 8 GiB, use a smaller --size"
        return None

    def stride(self, variant: str, pt: Point) -> int:
        return 1 if variant == "coalesced" else int(pt.value)

    def inputs(self, xp: Any, rng: Any, pt: Point) -> dict:
        return {"a": rng.random(pt.size * int(pt.value), dtype=xp.float32) * 2 - 1}

    def outputs(self, xp: Any, pt: Point) -> dict:
        b, guard = poisoned(xp, pt.size, xp.float32)
        return {"b": b, "guard": guard}

    def launch(self, variant: str, ctx: LaunchContext, ins: dict, outs: dict, pt: Point) -> None:
        fn = ctx.kernels["read_strided"]
        args = (ins["a"], outs["b"], np.int32(pt.size), np.int32(self.stride(variant, pt)))
        fn((grid1d(pt.size, BLOCK),), (BLOCK,), args)

    def check(self, variant: str, ins: dict, outs: dict, pt: Point, xp: Any) -> LessonCheck:
        s = self.stride(variant, pt)
        return exact(outs["b"], ins["a"][::s][: pt.size], xp, outs["guard"])

    def nbytes(self, variant: str, pt: Point) -> int:
        return 8 * pt.size  # 4 bytes read and 4 written per element: the useful bytes

    def info(self, variant: str, ctx: LaunchContext, pt: Point) -> dict:
        return {"grid": [grid1d(pt.size, BLOCK), 1, 1], "block": [BLOCK, 1, 1], "stride": self.stride(variant, pt)}
