"""The SM side: a math pipe near peak, the tensor pipe near peak, or issue slots burnt on overhead.

compute_bound / tensor_bound — the busiest math pipe ≥ 80% of peak (NVIDIA's high-throughput
threshold); at that point the kernel does its math as fast as the pipe allows (at_limit) unless
the instructions themselves are unnecessary.

compute_bound below peak — the SM is the busiest unit and a math pipe carries it (the pipe is within
the co-limit margin, 10 points, of the SM's throughput: it is what keeps the SM busy), but the pipe is
below 80%. A scheduler issues at most one warp instruction per cycle and the FMA pipe accepts one
warp-FFMA per cycle per scheduler (128 FP32 lanes per SM on sm_80/sm_90), so the pipe's utilisation
is ≈ issue rate × FMA share of instructions, and its gap to peak splits into

* idle issue slots (1 − ``smsp__issue_active``): no warp eligible — few resident warps (occupancy)
  and the stall reasons that keep them ineligible (everything but selected / not_selected);
* issue slots spent on other instructions (issue rate × (1 − FFMA share)): index math, loads.

The finding names both, with the dominant stall. It leads only when no specific cause (a latency
reason above 30% of the CPI, overhead, shared-memory throughput, ...) reaches 5%: it characterises the
unit, like an at-limit finding (``diagnose``).

instruction_overhead — the schedulers issue on ≥ 0.8 of their cycles (NVIDIA's IssueSlot/CPIStall
boundary: beyond it issue bandwidth, not stalls, limits) while more than half of the issued
instructions are neither FP32 math nor memory instructions: loop counters, address arithmetic,
predicates. Impact: issue-busy fraction × overhead share, capped by the headroom of the next
busiest unit (once overhead is gone that unit becomes the limit).
"""

from __future__ import annotations

from gemmlab.analysis import derived as D, limits
from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import CO_LIMIT_POINTS, HIGH_PCT, LATENCY_BELOW_PCT, UNIT_LABELS, Triage
from gemmlab.analysis.rules.stalls import (ISSUE_BUSY, STALL_SHARE, LATENCY_REASONS, cpi, ineligible_stalls,
                                           issue_active, stall, stall_evidence)
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

# Below half of the issued instructions being FFMA, an FMA pipe "carrying the SM" is busy with other
# FMA-pipe work (IMAD address arithmetic, FMUL/FADD): its level then says little about useful math.
MIN_FFMA_SHARE_FOR_MATH = 0.5
# Non-math instructions worth naming as a share of issue slots: below 5% removing them cannot move the
# run time by the analyzer's minimum primary impact.
NAMED_OVERHEAD_SLOTS = 0.05

MATH_PIPES = (("pipe_fma_pct", "FMA"), ("pipe_alu_pct", "ALU"), ("pipe_fp64_pct", "FP64"),
              ("pipe_xu_pct", "XU (special functions)"))


def _pipes(ctx: Context, tri: Triage, out: Outcome) -> None:
    best = None
    for short, label in MATH_PIPES:
        v = ctx.v(short)
        if v is not None and (best is None or v > best[1]):
            best = (short, v, label)
    # HMMA/WGMMA, IMMA and DMMA each have their own utilisation; sm__inst_executed_pipe_tensor_op_gmma
    # counts WGMMA *instructions* (3-12% even at peak: each does a lot of work), so it is not one.
    busiest = limits.tensor_pipe(ctx)
    tensor = busiest[1] if busiest is not None else None
    if tensor is not None and tensor >= LATENCY_BELOW_PCT:
        short = busiest[0]
        out.findings.append(Finding(
            C.TENSOR_BOUND, f"Tensor-core bound: the tensor pipe runs at {fmt(tensor)}% of peak"
            + ("." if tensor >= HIGH_PCT else f", below the {HIGH_PCT:.0f}% line: busy, not at its limit."),
            # below NVIDIA's 80% line the pipe is not at its limit: the stalls decide, never "high" on its own
            Confidence.HIGH if tensor >= HIGH_PCT else Confidence.MEDIUM, 0.0,
            "not estimated: the math itself is the limit",
            [ctx.ev_any(short, f"{HIGH_PCT:.0f}% (NVIDIA high-throughput threshold)", "tensor pipe busy")],
            ["The tensor pipe is the limit: only lower precision (e.g. FP8) or less math helps; keep the "
             "pipe fed (async copies, deep pipelining) so it stays there."],
            at_limit=tensor >= HIGH_PCT))
    if best is not None and best[1] >= HIGH_PCT:
        short, v, label = best
        ev = [ctx.ev_any(short, f"{HIGH_PCT:.0f}% (NVIDIA high-throughput threshold)", f"{label} pipe busy")]
        ev += stall_evidence(ctx, ("math_pipe_throttle",), "warps wait for the busy pipe")
        recs = ["The math pipe is the limit: reduce instruction count (fewer, fused operations) or move the "
                "math to tensor cores (TF32/BF16 MMA) where precision allows."]
        if label == "ALU":
            recs.insert(0, "ALU (integer/logic) work dominates: simplify index arithmetic, hoist it out of loops.")
        out.findings.append(Finding(
            C.COMPUTE_BOUND, f"Compute bound: the {label} pipe runs at {fmt(v)}% of peak.", Confidence.HIGH, 0.0,
            "not estimated: the pipe does the kernel's work at its peak rate", ev, recs,
            at_limit=label in ("FMA", "FP64")))
    elif best is not None:
        _below_peak(ctx, tri, out, *best)


def _below_peak(ctx: Context, tri: Triage, out: Outcome, short: str, v: float, label: str) -> None:
    """compute_bound, not at limit: the math pipe carries a busy SM but stays below 80% of peak."""
    sm = ctx.v("sm_pct")
    # the SM must be the unit that limits (throughput), or, with no unit above 60%, the busiest one: the
    # finding then characterises a kernel no single stall explains (diagnose._sm_carried)
    busiest = tri.regime == "latency" and sm is not None and all(
        x is None or x <= sm for k, x in tri.pct.items() if k not in ("sm", "memory"))
    if not ((tri.regime == "throughput" and "sm" in tri.hot) or busiest) or sm is None or v < sm - CO_LIMIT_POINTS:
        return
    ev = [ctx.ev_any(short, f"{HIGH_PCT:.0f}% (NVIDIA high-throughput threshold); within {CO_LIMIT_POINTS:.0f} "
                 f"points of the SM's {fmt(sm)}%", f"the {label} pipe is what keeps the SM busy")]
    conf = Confidence.HIGH
    doubts: list[str] = []
    gap = 1.0 - v / 100.0
    parts: list[str] = []
    recs: list[str] = []
    issue = issue_active(ctx)
    share = None
    if label == "FMA":
        ffma, inst = D.ffma_warp_inst(ctx), ctx.v("inst_executed")
        if ffma is not None and inst:
            share = ffma.value / inst
            ev += ffma.evidence + [ctx.ev("inst_executed", "—", "all warp instructions"), ctx.derived(
                "ffma_inst_share", f"warp-level FFMA / {ctx.names('inst_executed')}", share, "fraction",
                f"≥ {MIN_FFMA_SHARE_FOR_MATH:.0%}: FP32 math dominates what the pipe does",
                "the rest of the issue slots go to index math, loads and control")]
            if share < MIN_FFMA_SHARE_FOR_MATH:
                conf = Confidence.MEDIUM
                doubts.append(f"only {pct(share)} of instructions are FFMA: the FMA pipe also runs IMAD address "
                              "arithmetic or FMUL/FADD, so part of its load may be overhead")
        else:
            conf = Confidence.MEDIUM
            doubts.append("the FFMA count is missing, so FP32 math cannot be told from IMAD address arithmetic "
                          "on the FMA pipe")
    if issue is None:
        conf = Confidence.MEDIUM
        doubts.append("issue activity is missing, so the gap cannot be split into idle and busy issue slots")
    else:
        ev.append(ctx.ev("issue_active", "1 instruction per cycle per scheduler (peak)",
                         "the FMA pipe takes one warp instruction per cycle per scheduler, so it can only be as "
                         "busy as the schedulers issue"))
        idle = 1.0 - issue
        other = issue * (1.0 - share) if share is not None else None
        for k, why in (("warps_active", "resident warps per scheduler (of 16 on sm_90): the pool that hides latency"),
                       ("warps_eligible", "warps ready to issue per scheduler per cycle: below ~1 the slot often "
                                          "finds none"), ("occ_theoretical", "theoretical occupancy")):
            if ctx.v(k) is not None:
                ev.append(ctx.ev(k, "—", why))
        top = ineligible_stalls(ctx)
        total = cpi(ctx)
        if not top or total is None:
            conf = Confidence.MEDIUM
            doubts.append("the warp-state stall reasons are missing, so the cause of the idle slots is unknown")
        idle_text = f"{pct(idle)} of issue slots find no eligible warp"
        act, elig = ctx.v("warps_active"), ctx.v("warps_eligible")
        if act is not None and elig is not None:
            idle_text += f" ({fmt(elig, 4)} eligible of {fmt(act, 4)} resident warps per scheduler"
            occ = ctx.v("occ_theoretical")
            idle_text += f", theoretical occupancy {fmt(occ)}%)" if occ is not None else ")"
        if top and total:
            named = [s for s in top[:3] if s.share > 0.05]
            if named:
                idle_text += "; top stalls " + ", ".join(f"{s.reason} {pct(s.share)}" for s in named) +                     " of the cycles between a warp's instructions"
            for s in named:
                ev.append(s.evidence)
            dominant = [s for s in top if s.share > STALL_SHARE and s.reason in LATENCY_REASONS
                        and s.reason != "math_pipe_throttle"]
            if dominant:
                idle_text += f" — {dominant[0].reason} alone is above {STALL_SHARE:.0%} of the CPI (see latency_bound)"
            else:
                idle_text += (f" — no single stall reason reaches {STALL_SHARE:.0%} of the CPI (NVIDIA CPIStall), "
                              "so no one latency explains the gap")
            ns = stall(ctx, "not_selected")
            if ns is not None and ns.share > 0.05:
                e = ns.evidence
                ev.append(type(e)(e.metric, e.ncu_name, e.value, e.unit, "— (not a stall)",
                                  f"{pct(ns.share)} of a warp's cycles it was eligible but another warp issued: "
                                  "in those cycles the slot was used", e.source))
        parts.append(idle_text)
        if other is not None:
            parts.append(f"{pct(other)} of issue slots go to non-FFMA instructions ({fmt(1 / share)} instructions "
                         "per FFMA)")
        # what to do: the larger part of the gap first
        idle_recs = _idle_recommendations(ctx, top if top and total else [])
        other_recs = ["Cut non-FMA instructions per FMA: a larger per-thread register tile (more FMAs per shared "
                      "load and per address computation), wide LDS.128/float4 loads, offsets precomputed outside "
                      "the k-loop."] if other is not None and other >= NAMED_OVERHEAD_SLOTS else []
        recs = idle_recs + other_recs if other is None or idle >= other else other_recs + idle_recs
    headroom = tri.headroom
    impact = gap
    basis = f"{label} pipe idle {pct(gap)} of active cycles (upper bound: the same math at the pipe's peak)"
    if headroom is not None and headroom < impact:
        impact = headroom
        basis += f", capped by the busiest unit's headroom {pct(headroom)}"
    summary = (f"Compute bound, below peak: the {label} pipe carries the busiest unit ({UNIT_LABELS['sm']} "
               f"{fmt(sm)}%) at {fmt(v)}% of peak" + (f", and {pct(share)} of instructions are FFMA" if share else "")
               + ". What keeps it from peak: " + ("; ".join(parts) if parts else "unknown") + ".")
    if doubts:
        summary += " Confidence medium: " + "; ".join(doubts) + "."
    out.findings.append(Finding(C.COMPUTE_BOUND, summary, conf, impact, basis, ev, recs, at_limit=False))


# What to do about the stall that keeps warps ineligible (ncu's stall reason descriptions).
_STALL_ADVICE = {
    "long_scoreboard": "global-memory latency: prefetch the next tile while computing this one (multi-stage "
                       "cp.async pipeline)",
    "barrier": "__syncthreads() waits: fewer barriers per k-tile (more pipeline stages, one barrier per stage)",
    "short_scoreboard": "shared-memory result latency: load the next fragments into registers while the current "
                        "FMAs run (register double buffering)",
    "mio_throttle": "a full MIO queue: fewer, wider shared-memory loads (LDS.128) per FMA",
    "wait": "fixed-latency dependencies: more independent FMAs between dependent instructions (more accumulators, "
            "interleaved loads)",
    "dispatch_stall": "dispatch stalls (ncu: the dispatcher holds back a ready instruction because of pipeline or "
                      "register-port conflicts): more eligible warps per scheduler let it pick another warp",
    "no_instruction": "instruction-fetch misses: a smaller unrolled loop body",
    "lg_throttle": "a full LSU queue: fewer, wider global loads",
}


def _idle_recommendations(ctx: Context, top: list) -> list[str]:
    recs = []
    occ = ctx.v("occ_theoretical")
    if occ is not None and occ < 50.0:
        recs.append(f"Hide latency with more warps or more ILP: theoretical occupancy is {fmt(occ)}%, so few warps "
                    "per scheduler cover each stall; fit more blocks per SM (fewer registers or less shared memory "
                    "per block, see the occupancy finding) or give each warp more independent instructions.")
    else:
        recs.append("Give each warp more independent instructions (ILP) so a stalled warp leaves others ready.")
    if top:
        advice = _STALL_ADVICE.get(top[0].reason)
        if advice:
            recs.append(f"Top stall {top[0].reason}: {advice}.")
    return recs


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
