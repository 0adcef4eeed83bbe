"""GEMM kernels: recognise them, and name the next rung of the SGEMM optimisation ladder.

The ladder (gemmlab's kernels, after the seed articles): naive_uncoalesced → coalesced → smem_tiled
→ blocktile_1d → blocktile_2d → vectorized → bank_conflict_free → warptiling → double_buffered →
autotuned. The rung is chosen from what the metrics show, not from the kernel's name: a finding
maps to the change that removes it.
"""

from __future__ import annotations

import functools
import re
from typing import Callable, Optional

from gemmlab.analysis import derived as D
from gemmlab.analysis.context import Context, fmt
from gemmlab.analysis.evidence import Finding, LadderStep
from gemmlab.analysis.rules.stalls import ineligible_stalls
from gemmlab.analysis.vocabulary import Category as C

RUNGS = ("naive_uncoalesced", "coalesced", "smem_tiled", "blocktile_1d", "blocktile_2d", "vectorized",
         "bank_conflict_free", "warptiling", "double_buffered", "autotuned")

# "gemm" but not gemmlab's own prefix: gemmlab_example_relu is no GEMM (its ladder kernels are
# recognised by name below).
_GEMM_NAME = re.compile(r"gemm(?!lab)|matmul|mat_mul|matrixmul|(^|[_:])mm($|_)|sgemv|cutlass.*gemm|xmma|wgmma",
                        re.IGNORECASE)
_LADDER_PREFIX = "gemmlab_"

# Conflict-free shared wavefronts per warp-FFMA at or above which each FMA still pulls its own
# operand from shared memory (one output per thread: ≥ 1 wavefront for B alone; wide loads of A only
# shave the A half). Only register reuse (several outputs per thread) brings it below 1.
ONE_OUTPUT_PER_THREAD_WAVEFRONTS = 1.0


@functools.lru_cache(maxsize=4096)  # a pure function of the names; captures repeat them
def looks_like_gemm(name: str, demangled: str = "") -> bool:
    return bool(_GEMM_NAME.search(name) or _GEMM_NAME.search(demangled) or _ladder_kernel(name))


def _ladder_kernel(name: str) -> bool:
    """gemmlab's own rungs launch as ``gemmlab_<rung>`` (``_scalar`` twins, autotune candidates)."""
    if not name.startswith(_LADDER_PREFIX):
        return False
    from gemmlab.kernels import registry  # the registry is plain Python: no GPU needed

    rest = name[len(_LADDER_PREFIX):]
    return any(rest == n or rest.startswith(n + "_") for n in registry.names())


def _uses_shared(ctx: Context) -> Optional[bool]:
    ld, static, dyn = ctx.v("smem_ld_inst"), ctx.v("smem_static"), ctx.v("smem_dynamic")
    if ld is not None:
        return ld > 0
    if static is not None or dyn is not None:
        return (static or 0) + (dyn or 0) > 0
    return None


def next_rung(ctx: Context, primary: Finding, findings: list[Finding]) -> Optional[LadderStep]:
    """The ladder step that removes the highest-ranked finding that a ladder step addresses: on the
    BF16 tensor-core ladder when the tensor pipe does the work (gemmlab.analysis.tc_ladder), on the
    SGEMM ladder otherwise."""
    from gemmlab.analysis import tc_ladder

    step_for = tc_ladder.step_for if tc_ladder.on_tensor_cores(ctx) else _step_for
    return first_step(ctx, primary, findings, step_for)


def first_step(ctx: Context, primary: Finding, findings: list[Finding],
               step_for: Callable[[Context, Finding], Optional[LadderStep]]) -> Optional[LadderStep]:
    """The step ``step_for`` gives for the primary finding, else for the others by impact."""
    for f in [primary] + sorted(findings, key=lambda x: -x.impact):
        step = step_for(ctx, f)
        if step is not None:
            return step
    return None


# Beyond the last rung: the FP32 CUDA cores' peak. The tensor-core figures are gemmlab's anchors on the
# H100 it measures on (docs: cuBLAS SGEMM 51.4 vs TF32 384 TFLOP/s at 4096, BF16 743).
LADDER_END = ("the FP32 ladder ends at autotuned: past the FMA pipe's peak the next step is tensor cores "
              "(TF32 or BF16 via mma.sync / wgmma; cuBLAS TF32 runs ~7.5× cuBLAS FP32 on the H100) if the "
              "precision allows")

# The stall that keeps warps ineligible, mapped to the ladder step that removes it.
_STALL_RUNG = {
    "long_scoreboard": ("double_buffered", "prefetch the next k-tile with cp.async while this one is multiplied, "
                        "so global-load latency (long_scoreboard) overlaps the FMAs"),
    "barrier": ("double_buffered", "a multi-stage cp.async ring needs one barrier per stage instead of two per "
                "tile, so warps wait less at __syncthreads()"),
    "short_scoreboard": ("warptiling", "warp-level tiles: each warp loads its A/B fragments from shared memory "
                         "into registers once and reuses them across its sub-tiles, so fewer shared loads wait"),
    "mio_throttle": ("warptiling", "warp-level tiles with LDS.128 fragment loads: fewer shared-memory "
                     "instructions per FMA keep the MIO queue from filling"),
}


def _compute_step(ctx: Context, f: Finding, why: str) -> LadderStep:
    """compute_bound: at the pipe's peak the ladder has ended; below it, the step that removes the
    stall keeping warps ineligible, else tuning the configuration (occupancy, ILP) at the last rung."""
    if not f.at_limit:
        top = ineligible_stalls(ctx)
        if top and top[0].reason in _STALL_RUNG:
            rung, action = _STALL_RUNG[top[0].reason]
            return LadderStep(rung, f"{action} (top stall {top[0].reason}, {fmt(100 * top[0].share)}% of the CPI)",
                              why)
        return LadderStep("autotuned", "autotune block/warp tile sizes, pipeline stages and blocks per SM for "
                          "more eligible warps and more FMAs per non-FMA instruction; " + LADDER_END, why)
    return LadderStep("autotuned", "the FMA pipe runs at its peak: only fewer instructions per FMA are left at "
                      "this precision; " + LADDER_END, why)


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
        return _compute_step(ctx, f, why)
    if c in (C.TAIL_EFFECT, C.GRID_TOO_SMALL, C.OCCUPANCY_SHARED_MEMORY, C.OCCUPANCY_BLOCK_SIZE):
        return LadderStep("autotuned", "autotune the tile sizes (block count vs waves, shared memory per "
                          "block) for this problem size", why)
    return None
