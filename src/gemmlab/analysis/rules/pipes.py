"""The SM side: a math pipe near peak, the tensor pipe near peak, or issue slots burnt on overhead.

compute_bound / tensor_bound — the busiest math pipe ≥ 80% of peak (NVIDIA's high-throughput
threshold); at that point the kernel does its math as fast as the pipe allows (at_limit) unless
the instructions themselves are unnecessary.

instruction_overhead — the schedulers issue on ≥ 0.8 of their cycles (NVIDIA's IssueSlot/CPIStall
boundary: beyond it issue bandwidth, not stalls, limits) while more than half of the issued
instructions are neither FP32 math nor memory instructions: loop counters, address arithmetic,
predicates. Impact: issue-busy fraction × overhead share, capped by the headroom of the next
busiest unit (once overhead is gone that unit becomes the limit).
"""

from __future__ import annotations

from gemmlab.analysis import derived as D
from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import HIGH_PCT, LATENCY_BELOW_PCT, Triage
from gemmlab.analysis.rules.stalls import ISSUE_BUSY, stall_evidence
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.COMPUTE_BOUND, C.TENSOR_BOUND, C.INSTRUCTION_OVERHEAD)
NEEDS = {
    "pipe_fma_pct": "FMA pipe utilisation",
    "pipe_alu_pct": "ALU pipe utilisation",
    "pipe_tensor_pct": "tensor pipe utilisation",
    "issue_active": "issue slots used per scheduler (max 1)",
    "inst_executed": "warp instructions executed: with the FFMA count, the share of overhead instructions",
    "ffma_rate": "FP32 FMA count: the useful math",
}

# More than half of the issued instructions are neither FP32 math nor memory: with the issue slots
# full, that overhead is then the largest share of what the schedulers spend their cycles on.
OVERHEAD_FLAG = 0.5

MATH_PIPES = (("pipe_fma_pct", "FMA"), ("pipe_alu_pct", "ALU"), ("pipe_fp64_pct", "FP64"),
              ("pipe_xu_pct", "XU (special functions)"))


def _pipes(ctx: Context, tri: Triage, out: Outcome) -> None:
    best = None
    for short, label in MATH_PIPES:
        v = ctx.v(short)
        if v is not None and (best is None or v > best[1]):
            best = (short, v, label)
    tensor = max([v for v in (ctx.v("pipe_tensor_pct"), ctx.v("pipe_tensor_gmma_pct")) if v is not None],
                 default=None)
    if tensor is not None and tensor >= LATENCY_BELOW_PCT:
        short = "pipe_tensor_pct" if ctx.v("pipe_tensor_pct") == tensor else "pipe_tensor_gmma_pct"
        out.findings.append(Finding(
            C.TENSOR_BOUND, f"Tensor-core bound: the tensor pipe runs at {fmt(tensor)}% of peak.",
            Confidence.HIGH, 0.0, "not estimated: the math itself is the limit",
            [ctx.ev(short, f"{HIGH_PCT:.0f}% (NVIDIA high-throughput threshold)", "tensor pipe busy")],
            ["The tensor pipe is the limit: only lower precision (e.g. FP8) or less math helps; keep the "
             "pipe fed (async copies, deep pipelining) so it stays there."],
            at_limit=tensor >= HIGH_PCT))
    if best is not None and best[1] >= HIGH_PCT:
        short, v, label = best
        ev = [ctx.ev(short, f"{HIGH_PCT:.0f}% (NVIDIA high-throughput threshold)", f"{label} pipe busy")]
        ev += stall_evidence(ctx, ("math_pipe_throttle",), "warps wait for the busy pipe")
        recs = ["The math pipe is the limit: reduce instruction count (fewer, fused operations) or move the "
                "math to tensor cores (TF32/BF16 MMA) where precision allows."]
        if label == "ALU":
            recs.insert(0, "ALU (integer/logic) work dominates: simplify index arithmetic, hoist it out of loops.")
        out.findings.append(Finding(
            C.COMPUTE_BOUND, f"Compute bound: the {label} pipe runs at {fmt(v)}% of peak.", Confidence.HIGH, 0.0,
            "not estimated: the pipe does the kernel's work at its peak rate", ev, recs,
            at_limit=label in ("FMA", "FP64")))


def _overhead(ctx: Context, tri: Triage, out: Outcome) -> None:
    issue, inst = ctx.v("issue_active"), ctx.v("inst_executed")
    ffma = D.fp32_math(ctx)
    if issue is None or inst is None or ffma is None or inst <= 0:
        return
    if issue < ISSUE_BUSY:
        return
    mem = sum(ctx.v(s) or 0.0 for s in ("gld_requests", "gst_requests", "smem_ld_inst", "smem_st_inst",
                                         "local_ld_inst", "local_st_inst"))
    essential = ffma.value + mem
    overhead = max(0.0, 1.0 - essential / inst)
    if overhead <= OVERHEAD_FLAG:
        return
    others = [tri.busy(u) for u in ("l1", "l2", "dram") if tri.busy(u) is not None]
    cap = 1.0 - max(others) if others else 1.0
    impact = min(issue * overhead, cap)
    basis = f"issue busy {pct(issue)} × overhead share {pct(overhead)}"
    if issue * overhead > cap:
        basis += f", capped by the next busiest unit's headroom {pct(cap)}"
    ev = [ctx.ev("issue_active", f"{ISSUE_BUSY} (NVIDIA IssueSlot/CPIStall boundary)",
                 "at or above it the issue rate, not stalls, limits the kernel"),
          ctx.ev("inst_executed", "—", "all warp instructions")] + ffma.evidence + [ctx.derived(
              "overhead_inst_fraction", "1 − (warp FFMA + memory instructions) / warp instructions", overhead,
              "fraction", f"{OVERHEAD_FLAG:.0%}", "instructions that are neither math nor memory: loop "
              "control and address arithmetic"),
          ctx.derived("inst_per_ffma", f"{ctx.names('inst_executed')} / warp-level FFMA", inst / ffma.value,
                      "inst/FFMA", "≈ 1–1.5 for a register-tiled SGEMM inner loop",
                      "instructions the schedulers must issue per unit of useful math")]
    if ctx.v("pipe_alu_pct") is not None:
        ev.append(ctx.ev("pipe_alu_pct", "—", "integer/logic work: address and loop arithmetic"))
    out.findings.append(Finding(
        C.INSTRUCTION_OVERHEAD,
        f"Instruction overhead: schedulers issue {fmt(issue)} per cycle but {pct(overhead)} of instructions are "
        f"neither FP32 math nor memory ({fmt(inst / ffma.value)} instructions per FFMA).",
        Confidence.HIGH, impact, basis, ev,
        ["Unroll the inner loop (#pragma unroll with a compile-time trip count) so loop control disappears and "
         "shared-memory addresses become immediate offsets.",
         "Hoist index arithmetic out of the inner loop; use pointer increments instead of recomputing indices."]))


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    have_pipes = any(ctx.v(s) is not None for s, _ in MATH_PIPES)
    out = Outcome("pipes", CATEGORIES, evaluated=have_pipes and ctx.has("issue_active", "inst_executed"))
    for k, why in NEEDS.items():
        if ctx.v(k) is None:
            out.needs[k] = why
    if D.ffma_warp_inst(ctx) is not None:
        out.needs.pop("ffma_rate", None)
    _pipes(ctx, tri, out)
    _overhead(ctx, tri, out)
    return out
