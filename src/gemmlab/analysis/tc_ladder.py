"""Tensor-core GEMMs: the next rung of the BF16 tensor-core ladder the evidence points to.

The ladder (gemmlab's kernels, issue #10): wmma_bf16 → mma_sync_bf16 → cp_async_bf16 → wgmma_bf16 →
tma_bf16 → ws_bf16 → persistent_bf16. A kernel is on this ladder when its tensor pipe does a real share
of its work; which step comes next is read from the metrics (which tensor instructions run, what keeps
warps waiting, whether the grid ends in a partial wave), never from the kernel's name. A kernel whose
tensor path ran FP8 (sm__ops_path_tensor_src_fp8, where the export has it) is pointed at the FP8
ladder's persistent_fp8 instead of persistent_bf16, and never told to try FP8.
"""

from __future__ import annotations

from typing import Optional

from gemmlab.analysis.context import Context, fmt
from gemmlab.analysis.derived import MAX_TENSOR_PCT_FOR_FP32, uses_wgmma
from gemmlab.analysis.evidence import Finding, LadderStep
from gemmlab.analysis.rules.stalls import ineligible_stalls
from gemmlab.analysis.vocabulary import Category as C

RUNGS = ("wmma_bf16", "mma_sync_bf16", "cp_async_bf16", "wgmma_bf16", "tma_bf16", "ws_bf16",
         "persistent_bf16")

# Dense math per cycle of a full tensor pipe over a full FMA pipe on Hopper: 8x for TF32 (494.7 vs
# 66.9 TFLOP/s, H100 SXM datasheet), 16x for BF16/FP16, 32x for FP8. With the TF32 ratio, the smallest,
# a kernel whose tensor-pipe % times 8 exceeds its FMA-pipe % does most of its math on tensor cores
# even when both pipes are far from busy (the WMMA rung: tensor 7%, FMA 25%).
TENSOR_TO_FMA_RATE = 8.0

def _end(ctx: Context) -> str:
    """The advice for a tensor pipe busy past NVIDIA's 80% line: overlap, or - unless the kernel already
    runs FP8 (tensor_fp8_ops > 0) - a narrower input format."""
    share = tensor_share(ctx)
    busy = f"the tensor pipe is busy ({fmt(share)}% of peak)" if share is not None else "the tensor pipe is busy"
    overlap = ("what is left is the gaps between MMAs: overlap (a persistent grid whose epilogue drains "
               "through TMA stores during the next tile, the next tile's MMAs issued while one is stored)")
    if runs_fp8(ctx):
        return f"{busy} and already runs FP8 (e4m3): {overlap}"
    return (f"{busy} at this precision: {overlap}, or a narrower input format - FP8 (e4m3) doubles the "
            "dense tensor rate on Hopper if the accuracy allows")


def runs_fp8(ctx: Context) -> bool:
    """Whether the tensor path executed FP8-source math (False when the export cannot tell)."""
    ops = ctx.v("tensor_fp8_ops")
    return ops is not None and ops > 0


def _persistent(ctx: Context) -> str:
    """The persistent rung of the kernel's own ladder: FP8's when it runs FP8."""
    return "persistent_fp8" if runs_fp8(ctx) else "persistent_bf16"


def tensor_share(ctx: Context) -> Optional[float]:
    """% of peak of the busiest of the tensor-pipe metrics (HMMA/GMMA), None when the export has none."""
    vals = [v for v in (ctx.v("pipe_tensor_pct"), ctx.v("pipe_tensor_gmma_pct")) if v is not None]
    return max(vals) if vals else None


def on_tensor_cores(ctx: Context) -> bool:
    """True when the tensor pipe does a real share of the work (the line below which the FP32 ratios
    still apply, gemmlab.analysis.derived.MAX_TENSOR_PCT_FOR_FP32) or more of the math than the FMA
    pipe (TENSOR_TO_FMA_RATE)."""
    share = tensor_share(ctx)
    if share is None or share <= 0:
        return False
    fma = ctx.v("pipe_fma_pct")
    return share >= MAX_TENSOR_PCT_FOR_FP32 or (fma is not None and share * TENSOR_TO_FMA_RATE >= fma)


def copies_by_tma(ctx: Context) -> Optional[bool]:
    """Whether tiles arrive without per-thread global loads (TMA: cp.async.bulk.tensor issues no LSU
    requests; cp.async and plain loads do). None when the export has no request count."""
    req = ctx.v("gld_requests")
    return None if req is None else req == 0


def _top_stall(ctx: Context) -> str:
    top = ineligible_stalls(ctx)
    return f" (top stall {top[0].reason}, {fmt(100 * top[0].share)}% of the CPI)" if top else ""


def step_for(ctx: Context, f: Finding) -> Optional[LadderStep]:
    """The tensor-core ladder step that removes finding ``f`` (None: no step addresses it);
    gemmlab.analysis.gemm.next_rung takes the first one by rank."""
    c = f.category
    why = f"{c.value}: {f.summary}"
    wgmma = uses_wgmma(ctx)
    if c == C.TENSOR_BOUND and f.at_limit:
        return LadderStep(_persistent(ctx), _end(ctx), why)
    if wgmma is False:
        # HMMA-era kernel: on an sm_90 GPU the warpgroup MMA is the step that moves the ceiling.
        if c in (C.LATENCY_BOUND, C.BARRIER_STALLS) and not ctx.v("pipe_tensor_gmma_pct"):
            return LadderStep(
                "cp_async_bf16" if c == C.LATENCY_BOUND else "wgmma_bf16",
                "feed the MMAs from a multistage cp.async ring so global latency overlaps the math"
                + _top_stall(ctx) + "; on Hopper (sm_90a) move on to wgmma, which reads both operands "
                "from shared memory asynchronously and issues 64xN tiles per warpgroup", why)
        if c in (C.TENSOR_BOUND, C.SHARED_MEMORY_THROUGHPUT, C.SHARED_BANK_CONFLICTS, C.COMPUTE_BOUND,
                 C.OCCUPANCY_REGISTERS, C.INSTRUCTION_OVERHEAD):
            return LadderStep("wgmma_bf16", "mma.sync needs ldmatrix fragments in registers for every "
                              "MMA; on Hopper (sm_90a) wgmma reads A and B from 128-byte-swizzled shared "
                              "tiles through descriptors and keeps the accumulators asynchronous", why)
        return None
    if c in (C.LATENCY_BOUND, C.BARRIER_STALLS) and copies_by_tma(ctx):
        return LadderStep(_persistent(ctx), "the tiles already come by TMA, so what is left to hide is "
                          "between tiles and in L2: a persistent grid whose producer runs ahead across "
                          "tile boundaries, 2-CTA clusters sharing B through TMA multicast, and an epilogue "
                          "through TMA stores" + _top_stall(ctx), why)
    if c in (C.LATENCY_BOUND, C.BARRIER_STALLS):
        return LadderStep("ws_bf16", "hand the copies to TMA and specialise warps: one producer "
                          "warpgroup issues cp.async.bulk.tensor into a multistage mbarrier ring, consumer "
                          "warpgroups only wait on 'full' barriers and issue wgmma, no __syncthreads in the "
                          "main loop" + _top_stall(ctx), why)
    if c in (C.TAIL_EFFECT, C.GRID_TOO_SMALL):
        return LadderStep(_persistent(ctx), "a persistent grid (one CTA per SM walking the tiles) so the "
                          "last partial wave and each tile's prologue/epilogue overlap other tiles' math",
                          why)
    if c in (C.L2_BOUND, C.DRAM_BOUND):
        return LadderStep(_persistent(ctx), "grouped tile order for L2 reuse and 2-CTA clusters that "
                          "share each B tile through TMA multicast (half of B's L2->SM traffic)", why)
    if c == C.UNCOALESCED_GLOBAL_STORES:
        return LadderStep(_persistent(ctx), "write C through shared memory and TMA stores (whole 128-byte "
                          "rows) instead of per-thread fragment stores", why)
    if c in (C.SHARED_BANK_CONFLICTS, C.SHARED_MEMORY_THROUGHPUT):
        return LadderStep("tma_bf16", "let TMA write the tiles in the 128-byte swizzle wgmma's descriptors "
                          "describe (no thread-written tiles, no conflicts)", why)
    if c == C.TENSOR_BOUND:
        return LadderStep(_persistent(ctx), "keep the tensor pipe fed between tiles: persistent CTAs, "
                          "producer running ahead across tile boundaries, epilogue through TMA stores", why)
    return None
