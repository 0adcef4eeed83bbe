"""Lesson "occupancy": the same memory-bound kernel at full occupancy vs one block per SM.

The article gives no measurement, only the rules: registers, shared memory per block and block
size limit occupancy, and occupancy hides latency. ``one_block_per_sm`` requests as much dynamic
shared memory as a block may have (unused), so only one block fits per SM; ``full`` requests none.
The sweep is the block size (the article: "Too low (e.g., 64) -> you'll never saturate the SM").
Each row records the occupancy the driver computes for its launch and the registers per thread.
"""

from __future__ import annotations

from typing import Any, Optional

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

A, B = 1.5, -0.25
STATIC_SMEM_LIMIT = 48 * 1024  # above this a launch needs the dynamic-shared-memory opt-in


def _block_rule(v: int) -> Optional[str]:
    return None if v % 32 == 0 else "must be a multiple of 32 (whole warps)"


class Occupancy(Lesson):
    name = "occupancy"
    title = "Occupancy (full vs one block per SM, by block size)"
    idea = ("A memory-bound kernel needs many loads in flight per SM; when shared memory (or registers, or "
            "tiny blocks) caps the resident warps, latency is no longer hidden.")
    source = "occupancy.cu"
    variants = (
        Variant("one_block_per_sm", "scale_shift with the largest dynamic shared memory a block may have: 1 block/SM", ("scale_shift",)),
        Variant("full", "scale_shift with no shared memory: as many blocks per SM as threads and registers allow", ("scale_shift",)),
    )
    comparisons = (Comparison("one_block_per_sm", "full", "full occupancy instead of one block per SM"),)
    size_label = "elements n"
    default_size, min_size, max_size = 1 << 25, 1, 1 << 30
    param = Param("block", "block size", int, 32, 1024, 256, (32, 64, 128, 256, 1024), rule=_block_rule)
    expected_category = "latency_bound (low occupancy)"
    odd_sizes = (1, 1000, 100003)

    def smem(self, variant: str, ctx: LaunchContext) -> int:
        return ctx.smem_per_block_optin if variant == "one_block_per_sm" else 0

    def inputs(self, xp: Any, rng: Any, pt: Point) -> dict:
        return {"x": rng.random(pt.size, dtype=xp.float32) * 2 - 1}

    def outputs(self, xp: Any, pt: Point) -> dict:
        y, guard = poisoned(xp, pt.size, xp.float32)
        return {"y": y, "guard": guard}

    def launch(self, variant: str, ctx: LaunchContext, ins: dict, outs: dict, pt: Point) -> None:
        fn = ctx.kernels["scale_shift"]
        smem = self.smem(variant, ctx)
        if smem > STATIC_SMEM_LIMIT and getattr(fn, "max_dynamic_shared_size_bytes", 0) < smem:
            fn.max_dynamic_shared_size_bytes = smem
        block = int(pt.value)
        fn((grid1d(pt.size, block),), (block,),
           (ins["x"], outs["y"], np.float32(A), np.float32(B), np.int32(pt.size)), shared_mem=smem)

    def check(self, variant: str, ins: dict, outs: dict, pt: Point, xp: Any) -> LessonCheck:
        x = ins["x"].astype(xp.float64)
        ref = A * x + B
        # a*x + b in FP32, with or without FMA: within gamma_2 * (|a x| + |b|) (Higham, §3.1)
        bound = gamma(2) * (abs(A) * xp.abs(x) + abs(B))
        return within(outs["y"], ref, bound, xp, outs["guard"])

    def nbytes(self, variant: str, pt: Point) -> int:
        return 8 * pt.size

    def info(self, variant: str, ctx: LaunchContext, pt: Point) -> dict:
        block = int(pt.value)
        out = {"grid": [grid1d(pt.size, block), 1, 1], "block": [block, 1, 1], "dynamic_smem_bytes": self.smem(variant, ctx)}
        out.update(resident(ctx.kernels.get("scale_shift"), block, self.smem(variant, ctx), ctx))
        return out


def resident(fn: Any, block: int, smem: int, ctx: LaunchContext) -> dict:
    """What the driver says fits on one SM for this launch (GPU only; {} when it cannot say)."""
    try:
        from cupy.cuda import driver

        if smem > STATIC_SMEM_LIMIT and getattr(fn, "max_dynamic_shared_size_bytes", 0) < smem:
            fn.max_dynamic_shared_size_bytes = smem
        blocks = int(driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, block, smem))
        max_warps = int(ctx.extra.get("max_threads_per_sm", 2048)) // 32
        warps = blocks * ((block + 31) // 32)
        return {"blocks_per_sm": blocks, "warps_per_sm": warps, "theoretical_occupancy_pct": 100.0 * warps / max_warps,
                "registers_per_thread": int(fn.num_regs)}
    except Exception:  # no CuPy, no driver entry point: the row simply lacks these numbers
        return {}
