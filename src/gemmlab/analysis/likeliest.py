"""The likelier candidate when no cause clears the bar: an answer at honest confidence instead of none.

``diagnose`` ranks causes by what a fix could win; when none reaches the minimum, or the export lacks the
metrics that separate the candidates (a details page has no sector counts or stall reasons for some
kernels), this module names the candidate the evidence in hand supports, at low confidence unless that
evidence is direct, with the candidates it could not rule out. The missing evidence and the command that
collects it stay with the diagnosis. It returns None when even that is not supported (no Speed of Light),
and the verdict is then ``inconclusive``.

What it can name, in order:

1. No unit above 60% (NVIDIA SOLBottleneck's latency regime) but the SM is the busiest unit, within the
   co-limit margin of the 60% line, and a math pipe carries it: compute_bound below peak (the pipes rule's
   finding) — the kernel does its math below peak with no single stall to blame.
2. The best-supported finding among the candidates: confidence first, then what a fix could win.
3. From Speed of Light alone: the SM the only busy unit → compute_bound; L1/TEX busy (the busiest unit,
   or the LSU the busiest pipe) where ncu's memory rules ran and flagged neither uncoalesced accesses nor
   bank conflicts → shared_memory_throughput for a kernel with shared memory, else l1_lsu_bound; no unit
   busy → latency_bound.
"""

from __future__ import annotations

from typing import Optional

from gemmlab.analysis.context import Context
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import sol, stalls
from gemmlab.analysis.vocabulary import Category as C

MIN_PRIMARY_IMPACT = 0.05  # a cause must plausibly explain ≥ 5% of the run to lead the diagnosis


def choose(ctx: Context, tri: sol.Triage, diff: list[C], unevaluated: list[C],
           findings: list[Finding]) -> Optional[Finding]:
    sm = tri.pct.get("sm")
    # the SM within the co-limit margin of NVIDIA's 60% line: at the edge of the throughput regime, so a
    # pipe that carries it is the likelier story than a latency the export cannot show; further below,
    # the SM is not near any limit and the idle issue slots (the waits) are the story
    edge = sm is not None and sm >= sol.LATENCY_BELOW_PCT - sol.CO_LIMIT_POINTS
    if not unevaluated:
        if tri.regime == "latency":
            return (sm_carried(tri, findings) if edge else None) or waiting(ctx, tri)
        if tri.regime == "throughput" and tri.hot == ["sm"] and sm is not None and sm >= sol.HIGH_PCT:
            # NVIDIA SOLBottleneck: the compute side at ≥ 80% is the limit; no pipe in the export carries it
            return _from_sol(C.COMPUTE_BOUND, f"Compute bound: {tri.summary()}; no pipe utilisation in this export "
                             "carries the SM (the special-function, uniform or branch units are not broken out).",
                             tri, "Collect the pipe utilisations (ComputeWorkloadAnalysis) and the instruction mix "
                             "(InstructionStats) to see which instructions fill the SM.")
        return None
    if tri.regime == "unknown":
        return None
    carried = sm_carried(tri, findings) if tri.regime == "latency" and edge else None
    if carried is not None:
        return carried  # a pipe carries the busiest unit: that evidence is in hand, whatever else is missing
    # a finding that explains less than the minimum share of the run cannot be the likelier cause of it
    # (an occupancy lever capped below the bar, a trace of excess sectors): then Speed of Light decides
    guesses = sorted((f for f in findings if f.category in diff and f.impact >= MIN_PRIMARY_IMPACT),
                     key=lambda f: (-f.confidence.rank, -f.impact))
    g = guesses[0] if guesses else _unit_guess(ctx, tri, diff)
    if g is None:
        return None
    others = [c.value for c in unevaluated if c != g.category]
    g.confidence = Confidence.LOW
    g.summary = (g.summary.rstrip(".") + ". Confidence low: the likelier candidate; this export lacks the metrics "
                 "that rule out " + ", ".join(others[:4]) + (" …" if len(others) > 4 else "")
                 + " (see missing evidence: a raw page of the same capture, or the command given, settles it).")
    g.candidates = [g.category.value] + others
    return g


def waiting(ctx: Context, tri: sol.Triage) -> Optional[Finding]:
    """Every rule could decide and none found a cause, no unit is above 60% (NVIDIA SOLBottleneck's latency
    regime) and the schedulers leave issue slots idle: the warps wait, on several reasons none of which
    reaches CPIStall's 30% on its own. latency_bound, medium: the regime and the idle slots are measured,
    the single cause is not."""
    issue = stalls.issue_active(ctx)
    top = stalls.ineligible_stalls(ctx)[:3]
    if issue is None or issue >= stalls.ISSUE_BUSY or not top:
        return None
    what = ", ".join(f"{s.reason} {s.share:.0%}" for s in top)
    f = _from_sol(C.LATENCY_BOUND, f"Latency bound: {tri.summary()}; the schedulers find no eligible warp in "
                  f"{1 - issue:.0%} of cycles and the waits spread over several reasons ({what} of the CPI), none "
                  "above NVIDIA's 30% line on its own.", tri,
                  "Overlap more: deeper software pipelining (more stages in flight), more independent work per "
                  "warp, or more warps where the footprint allows; the ncu Source page shows which instructions wait.")
    f.confidence = Confidence.MEDIUM
    f.evidence += [s.evidence for s in top]
    return f


def _unit_guess(ctx: Context, tri: sol.Triage, diff: list[C]) -> Optional[Finding]:
    if tri.regime == "throughput" and tri.hot == ["sm"] and C.COMPUTE_BOUND in diff:
        return _from_sol(C.COMPUTE_BOUND, f"Compute bound: {tri.summary()}; the export does not say which SM "
                         "sub-unit (pipe, issue slots) carries it.", tri,
                         "Collect the pipe utilisations (ComputeWorkloadAnalysis) and the instruction mix to see "
                         "which instructions fill the SM.")
    # L1 busy, and ncu's memory-workload rules ran (the section's metrics are in the export) without
    # flagging uncoalesced accesses or bank conflicts: necessary traffic saturates L1
    if (tri.regime == "throughput" and "l1" in tri.hot and ctx.v("l1_hit_pct") is not None
            and ctx.facts.global_excess_sectors is None and not ctx.facts.shared_conflicts):
        pipes = {s: ctx.v(s) for s in ("pipe_lsu_pct", "pipe_fma_pct", "pipe_alu_pct", "pipe_fp64_pct",
                                       "pipe_xu_pct", "pipe_tensor_pct") if ctx.v(s) is not None}
        lsu_top = bool(pipes) and max(pipes, key=pipes.get) == "pipe_lsu_pct"
        if tri.hot[0] == "l1" or lsu_top:
            lsu = f"; the LSU issues memory instructions at {pipes['pipe_lsu_pct']:.1f}% of its peak" if lsu_top else ""
            smem = (ctx.v("smem_static") or 0.0) + (ctx.v("smem_dynamic") or 0.0)
            if smem > 0 and C.SHARED_MEMORY_THROUGHPUT in diff:  # a tiled kernel: its L1 work is shared loads
                return _from_sol(C.SHARED_MEMORY_THROUGHPUT, f"Shared-memory throughput: {tri.summary()}{lsu}; the "
                                 "kernel uses shared memory and ncu flags no bank conflicts, but the export does not "
                                 "split L1's work between shared and global traffic.", tri,
                                 "Reuse operands from registers: compute several outputs per thread so each shared "
                                 "load feeds several FMAs.")
            if C.L1_LSU_BOUND in diff:
                return _from_sol(C.L1_LSU_BOUND, f"L1/LSU bound: {tri.summary()}{lsu}; no shared memory, and ncu flags "
                                 "no uncoalesced access: the kernel's global accesses fill L1.", tri,
                                 "Reuse each loaded value many times (tiles in shared memory, operands in registers) "
                                 "so fewer memory instructions reach L1.")
    if tri.regime == "latency" and C.LATENCY_BOUND in diff:
        return _from_sol(C.LATENCY_BOUND, f"Latency bound: {tri.summary()}.", tri,
                         "Collect the stall reasons (WarpStateStats or SourceCounters sampling) to see which latency "
                         "the warps wait on, then raise parallelism where it is: more warps, more independent work "
                         "per thread, fewer dependent loads.")
    return None


def _from_sol(cat: C, summary: str, tri: sol.Triage, advice: str) -> Finding:
    return Finding(cat, summary, Confidence.LOW, 0.0, "not estimated: the export lacks what would size it",
                   list(tri.evidence), [advice])


def sm_carried(tri: sol.Triage, findings: list[Finding]) -> Optional[Finding]:
    """No unit is above 60%, but the SM is the busiest unit and a math pipe carries it (compute_bound below
    peak, from the pipes rule): that characterisation, not "inconclusive"."""
    sm = tri.pct.get("sm")
    others = [v for k, v in tri.pct.items() if k not in ("sm", "memory") and v is not None]
    if sm is None or (others and sm < max(others)):
        return None
    f = next((f for f in findings if f.category == C.COMPUTE_BOUND), None)
    if f is not None:
        # below the 60% line the SM is at no limit: the pipe characterises the run, it does not bound it
        f.confidence = Confidence.MEDIUM
    return f
