"""GEMM kernels: recognise them, and name the next rung of the SGEMM optimisation ladder.

The ladder (gemmlab's kernels, after the seed articles): naive_uncoalesced → coalesced → smem_tiled
→ blocktile_1d → blocktile_2d → vectorized → bank_conflict_free → warptiling → double_buffered →
autotuned. The rung is chosen from what the metrics show, not from the kernel's name: a finding
maps to the change that removes it.
"""

from __future__ import annotations

import re
from typing import Optional

from gemmlab.analysis import derived as D
from gemmlab.analysis.context import Context, fmt
from gemmlab.analysis.evidence import Finding, LadderStep
from gemmlab.analysis.vocabulary import Category as C

RUNGS = ("naive_uncoalesced", "coalesced", "smem_tiled", "blocktile_1d", "blocktile_2d", "vectorized",
         "bank_conflict_free", "warptiling", "double_buffered", "autotuned")

_GEMM_NAME = re.compile(r"gemm|matmul|mat_mul|matrixmul|(^|[_:])mm($|_)|sgemv|cutlass.*gemm|xmma|wgmma",
                        re.IGNORECASE)

# Conflict-free shared wavefronts per warp-FFMA at or above which each FMA still pulls its own
# operand from shared memory (one output per thread: ≥ 1 wavefront for B alone; wide loads of A only
# shave the A half). Only register reuse (several outputs per thread) brings it below 1.
ONE_OUTPUT_PER_THREAD_WAVEFRONTS = 1.0


def looks_like_gemm(name: str, demangled: str = "") -> bool:
    return bool(_GEMM_NAME.search(name) or _GEMM_NAME.search(demangled))


def _uses_shared(ctx: Context) -> Optional[bool]:
    ld, static, dyn = ctx.v("smem_ld_inst"), ctx.v("smem_static"), ctx.v("smem_dynamic")
    if ld is not None:
        return ld > 0
    if static is not None or dyn is not None:
        return (static or 0) + (dyn or 0) > 0
    return None


def next_rung(ctx: Context, primary: Finding, findings: list[Finding]) -> Optional[LadderStep]:
    """The ladder step that removes the highest-ranked finding that a ladder step addresses."""
    for f in [primary] + sorted(findings, key=lambda x: -x.impact):
        step = _step_for(ctx, f)
        if step is not None:
            return step
    return None


def _step_for(ctx: Context, f: Finding) -> Optional[LadderStep]:
    c = f.category
    why = f"{c.value}: {f.summary}"
    if c == C.UNCOALESCED_GLOBAL_LOADS:
        return LadderStep("coalesced", "coalesce: map threadIdx.x to the contiguous column of B and C "
                          "(consecutive threads read consecutive addresses)", why)
    if c == C.L1_LSU_BOUND:
        if _uses_shared(ctx) is False or _uses_shared(ctx) is None:
            return LadderStep("smem_tiled", "tile through shared memory: load A and B tiles once per block "
                              "and reuse them from shared memory", why)
        return LadderStep("blocktile_1d", "compute several outputs per thread in registers so each global "
                          "or shared load feeds several FMAs", why)
    if c == C.SHARED_MEMORY_THROUGHPUT:
        wf, ffma = ctx.v("smem_wavefronts_ideal"), D.ffma_warp_inst(ctx)
        if wf is None:
            wf = ctx.v("smem_ld_wavefronts")
        ratio = wf / ffma.value if wf is not None and ffma is not None and ffma.value > 0 else None
        if ratio is None or ratio >= ONE_OUTPUT_PER_THREAD_WAVEFRONTS:
            return LadderStep("blocktile_1d", "compute several outputs per thread in registers (1D blocktiling: "
                              "a column of TM outputs per thread reuses each B value TM times)"
                              + (f"; now {fmt(ratio)} shared wavefronts per FFMA" if ratio is not None else ""), why)
        return LadderStep("blocktile_2d", "2D blocktiling: a TM×TN register tile per thread (outer product) "
                          f"needs (TM+TN)/(TM·TN) shared loads per FFMA; now {fmt(ratio)} wavefronts per FFMA", why)
    if c == C.SHARED_BANK_CONFLICTS:
        return LadderStep("bank_conflict_free", "pad the shared tile's row stride by one element (e.g. float "
                          "As[BM][BK + 1]), or swizzle / store A transposed, so a warp's shared loads hit distinct "
                          "banks", why)
    if c == C.UNCOALESCED_GLOBAL_STORES:
        return LadderStep("vectorized", "vectorize: write C (and load A/B) with float4 so each thread's "
                          "contiguous outputs go out in one 16-byte access", why)
    if c == C.OCCUPANCY_REGISTERS:
        return LadderStep("warptiling", "warptiling: organise the block's register tiles per warp and cut "
                          "registers per thread (or __launch_bounds__) to fit more warps", why)
    if c in (C.LATENCY_BOUND, C.BARRIER_STALLS):
        return LadderStep("double_buffered", "double-buffer the shared tiles (cp.async) so the next tile "
                          "loads while this one is multiplied", why)
    if c == C.INSTRUCTION_OVERHEAD:
        return LadderStep("autotuned", "unroll the inner k-loop and autotune tile sizes so loop and address "
                          "arithmetic stop competing with FFMA", why)
    if c == C.COMPUTE_BOUND:
        return LadderStep("autotuned", "the FP32 pipes are the limit: autotune the last few percent, or move "
                          "to tensor cores (TF32 MMA) for more", why)
    if c in (C.TAIL_EFFECT, C.GRID_TOO_SMALL, C.OCCUPANCY_SHARED_MEMORY, C.OCCUPANCY_BLOCK_SIZE):
        return LadderStep("autotuned", "autotune the tile sizes (block count vs waves, shared memory per "
                          "block) for this problem size", why)
    return None
