"""The diagnosis of one kernel launch: triage, every rule family, a primary with honest confidence,
ranked secondary findings, the missing evidence and the ncu command that collects it.

How the primary is chosen (``docs/analyzer.md`` has the long form):

1. Speed of Light names the unit(s) that limit the kernel, or the latency regime.
2. Each unit has a differential: the categories that can explain it (``rules.sol.DIFFERENTIAL``).
3. The primary is the differential finding with the largest estimated impact; if none reaches
   ``MIN_PRIMARY_IMPACT``, the unit's at-limit finding (the unit is busy with necessary work).
4. Confidence starts from the primary's own evidence and drops to medium when a competing family in
   the differential could not be evaluated, when the runner-up is almost as large, or when Speed of
   Light is missing. With no finding and unevaluated families the verdict is ``inconclusive``
   (low) — never "none".
"""

from __future__ import annotations


from dataclasses import dataclass
from typing import Optional, Sequence

from gemmlab.analysis import gemm, library, likeliest, limits, margins
from gemmlab.analysis.context import Context, fmt
from gemmlab.analysis.evidence import Confidence, Diagnosis, Finding, MissingEvidence
from gemmlab.analysis.likeliest import MIN_PRIMARY_IMPACT
from gemmlab.analysis.rules import (Outcome, atomics, coalescing, divergence, launch, local, memory, occupancy,
                                    pipes, shared, sol, stalls)
from gemmlab.analysis.vocabulary import UNIT_BOUND, WASTE, Category
from gemmlab.errors import UserError
from gemmlab.profile import command as cmd
from gemmlab.profile import evidence_command
from gemmlab.profile import metrics as M
from gemmlab.profile.records import KernelLaunch

FAMILIES = (coalescing, shared, memory, pipes, local, atomics, divergence, stalls, occupancy, launch)
FAMILY_OF = {c: fam for fam in FAMILIES for c in fam.CATEGORIES}

AMBIGUOUS_RATIO = 0.8  # runner-up within 80% of the primary's impact: the ranking is not clear-cut
MIN_SECONDARY_IMPACT = 0.01  # below 1% a finding that no rule flagged as waste is not reported
# What to ask for when the unit-level counters are all present yet no rule names a cause: the
# per-instruction view (SourceCounters: sampled stall reasons and memory counts per SASS line) shows which
# instructions hold the warps. An inconclusive verdict always comes with something to collect.
BEYOND_COUNTERS = (
    MissingEvidence("source_counters", ("smsp__pcsamp_warps_issue_stalled_*", "memory_l1_wavefronts_shared",
                                        "memory_l2_theoretical_sectors_global"), "SourceCounters",
                    "the unit-level counters are complete but no rule found a cause above 5%: the per-instruction "
                    "stall samples and access counts (ncu Source page, --import-source yes) show which "
                    "instructions hold the warps"),
    MissingEvidence("warp_state", ("smsp__average_warps_issue_stalled_*_per_issue_active.ratio",), "WarpStateStats",
                    "every stall reason's share, re-measured with the source view"),
)
SOL_NEEDS = {
    "sm_pct": "Compute (SM) throughput: which side of the GPU limits the kernel",
    "mem_pct": "Memory throughput: the busiest memory unit",
    "l1tex_pct": "L1/TEX throughput: on-chip memory traffic",
    "l2_pct": "L2 throughput",
    "dram_pct": "DRAM throughput",
}


@dataclass(frozen=True)
class AnalyzeOptions:
    """How to analyse: GEMM detection override and how the collect command names the program."""

    gemm: Optional[bool] = None  # None: decide from the kernel name
    app_argv: Optional[tuple[str, ...]] = None  # program (and arguments) for the ncu command
    launch_skip: int = 1  # skip the warm-up launch of the kernel
    launch_count: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.launch_skip, int) or self.launch_skip < 0:
            raise UserError(f"launch_skip={self.launch_skip!r}: expected an integer ≥ 0")
        if not isinstance(self.launch_count, int) or self.launch_count < 1:
            raise UserError(f"launch_count={self.launch_count!r}: expected an integer ≥ 1")
        if self.app_argv is not None and (not self.app_argv or not self.app_argv[0].strip()):
            raise UserError(f"app_argv={self.app_argv!r}: expected the program and its arguments")


def diagnose_all(launches: Sequence[KernelLaunch], options: AnalyzeOptions = AnalyzeOptions()) -> list[Diagnosis]:
    """One diagnosis per launch, in file order."""
    return [diagnose(k, options) for k in launches]


def diagnose(launch: KernelLaunch, options: AnalyzeOptions = AnalyzeOptions()) -> Diagnosis:
    ctx = Context(launch)
    tri = sol.triage(ctx)
    outcomes = [f.evaluate(ctx, tri) for f in FAMILIES]
    findings = _dedupe([f for o in outcomes for f in o.findings])
    diff = tri.differential() if tri.regime != "unknown" else list(Category)
    unevaluated = [c for o in outcomes if not o.evaluated for c in o.categories if c in diff]

    primary = limits.choose(ctx, tri, findings) or _choose_primary(ctx, tri, findings, diff, unevaluated)
    rest = [f for f in findings if f is not primary]
    rest = [f for f in rest
            if f.impact >= MIN_SECONDARY_IMPACT or f.category in WASTE or f.category in UNIT_BOUND or f.at_limit
            or f.category in limits.OCCUPANCY]  # a low occupancy stays visible, with why it costs little
    limits.temper(ctx, tri, primary, rest)
    margins.temper(ctx, tri, primary)
    rest.sort(key=lambda f: (-f.impact, f.category.value))

    missing = _missing(ctx, tri, outcomes, diff)
    if primary.category == Category.INCONCLUSIVE and not missing:
        missing = list(BEYOND_COUNTERS)
    is_gemm = options.gemm if options.gemm is not None else gemm.looks_like_gemm(launch.name, launch.demangled)
    owner = library.owner(launch.name, launch.demangled)  # the name shapes the advice, never the category
    ladder = (gemm.next_rung(ctx, primary, rest) if is_gemm and owner is None
              and primary.category != Category.INCONCLUSIVE else None)
    if ladder is not None:
        primary.ladder = ladder
    argv, purpose, note, profile_line = _collect(launch, primary, missing, options)
    return Diagnosis(
        kernel_id=launch.id, name=launch.name, demangled=launch.demangled, source=launch.source,
        format=launch.format, is_gemm=is_gemm, triage=tri.to_dict(), primary=primary, findings=rest,
        missing_evidence=missing, collect_command=cmd.render(argv), collect_argv=argv, collect_purpose=purpose,
        collect_note=note, collect_profile=profile_line, ladder=ladder, library=owner,
        recommendations=(_library_recommendations(owner, primary) if owner else _recommendations(primary, rest, ladder)))


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per category (the larger impact wins)."""
    best: dict[Category, Finding] = {}
    for f in findings:
        if f.category not in best or f.impact > best[f.category].impact:
            best[f.category] = f
    return list(best.values())


def _characterises_unit(f: Finding) -> bool:
    """A finding that says how busy a math pipe is rather than why it is not busier (compute_bound at or
    below peak, tensor_bound): it leads only when no specific cause (a stall, overhead, waste) reaches
    the minimum impact — its impact is the pipe's whole gap to peak, which those causes divide."""
    return f.category in (Category.COMPUTE_BOUND, Category.TENSOR_BOUND)


def _choose_primary(ctx: Context, tri: sol.Triage, findings: list[Finding], diff: list[Category],
                    unevaluated: list[Category]) -> Finding:
    # a low-confidence finding is a guess: it is named among the candidates, never the verdict
    cands = sorted((f for f in findings if f.category in diff and f.confidence != Confidence.LOW),
                   key=lambda f: -f.impact)
    causes = [f for f in cands if not _characterises_unit(f)]
    best = causes[0] if causes and causes[0].impact >= MIN_PRIMARY_IMPACT else None
    if best is not None and best.category == Category.LATENCY_BOUND and tri.regime == "latency":
        # a grid that cannot fill the GPU (fewer blocks than SMs, or less than one wave) leaves the busy SMs
        # too few warps to hide latency: the waits are its symptom, and more blocks is the fix
        grid = next((f for f in causes if f.category == Category.GRID_TOO_SMALL
                     and f.impact >= MIN_PRIMARY_IMPACT), None)
        best = grid or best
    if best is None:
        limits = [f for f in cands if f.category in UNIT_BOUND]
        limits.sort(key=lambda f: (not f.at_limit, -f.impact))
        best = limits[0] if limits else None
    if best is not None and best.category in BUSY_UNIT and not best.at_limit and stalls.unit_below_high(tri):
        # below its high-throughput line the unit is busy, not the limit for certain: when warps spend more of
        # their cycles waiting (latency, barriers) than on that unit's own back-pressure, waiting leads
        waiting = max((f for f in findings if f.category in (Category.LATENCY_BOUND, Category.BARRIER_STALLS)
                       and f.impact >= MIN_PRIMARY_IMPACT), key=lambda f: f.impact, default=None)
        own = stalls.own_share(ctx, tri)
        if waiting is not None and _stall_share(ctx, waiting) > own:
            best = waiting
        elif waiting is None and stalls.spread_waiting_share(ctx, tri) > own:
            # no single wait reaches CPIStall's 30%, but together the waits outweigh the unit's own
            # back-pressure: latency_bound at medium, the unit stays listed
            best = likeliest.waiting(ctx, tri) or best
    if best is None:
        return (likeliest.choose(ctx, tri, diff, unevaluated, findings)
                or _inconclusive(tri, diff, unevaluated, findings))
    conf = best.confidence
    reasons = []
    competing = [c for c in unevaluated if c != best.category]
    if competing and tri.regime == "throughput":
        # within a busy unit the causes' impacts are disjoint shares of its busy time: an unevaluated
        # cause can claim at most what the primary leaves unexplained, and cannot overturn a primary
        # larger than that (it stays listed as missing evidence)
        busy = max((tri.busy(u) or 0.0) for u in tri.hot)
        if busy - best.impact < best.impact:
            competing = []
    if competing:
        conf = conf.cap(Confidence.MEDIUM)
        reasons.append("could not rule out " + ", ".join(c.value for c in competing[:4])
                       + (" …" if len(competing) > 4 else ""))
    runner = next((f for f in cands if f is not best and not _characterises_unit(f)), None)
    if runner is not None and best.impact > 0 and runner.impact >= AMBIGUOUS_RATIO * best.impact:
        conf = conf.cap(Confidence.MEDIUM)
        reasons.append(f"{runner.category.value} is nearly as large ({fmt(100 * runner.impact)}% vs "
                       f"{fmt(100 * best.impact)}%)")
    if tri.regime == "unknown":
        conf = conf.cap(Confidence.MEDIUM)
        reasons.append("Speed of Light metrics are missing, so the busiest unit is unknown")
    if reasons:
        best.summary = best.summary.rstrip(".") + f". Confidence {conf.value}: " + "; ".join(reasons) + "."
        best.confidence = conf
    return best


# Findings that say "this unit is busy with this work" rather than name a waste.
BUSY_UNIT = frozenset({Category.SHARED_MEMORY_THROUGHPUT, Category.L1_LSU_BOUND, Category.L2_BOUND})


def _stall_share(ctx: Context, f: Finding) -> float:
    """The share of the CPI the waiting finding rests on: its reasons above CPIStall's 30% line."""
    shares = stalls.waiting_shares(ctx, barrier=f.category == Category.BARRIER_STALLS)
    return sum(x for x in shares if x > stalls.STALL_SHARE)


def _inconclusive(tri: sol.Triage, diff: list[Category], unevaluated: list[Category],
                  findings: list[Finding]) -> Finding:
    guesses = sorted((f for f in findings if f.category in diff), key=lambda f: -f.impact)
    cands = [f.category for f in guesses]
    cands += [c for c in diff if c in unevaluated and c not in cands]
    cands = cands or list(diff)
    if tri.regime == "throughput":
        where = f"{tri.summary()}; the metrics that tell its possible causes apart are missing"
    elif tri.regime == "latency":
        where = f"{tri.summary()}; the stall, occupancy and launch metrics that explain it are missing"
    else:
        where = "no Speed of Light metrics, and not enough other counters to name a cause"
    if not unevaluated:
        where = (f"{tri.summary()}; every rule for this unit could decide, and none found a cause above "
                 f"{fmt(100 * MIN_PRIMARY_IMPACT)}% of the run or a pipe carrying the unit")
    if guesses:
        g = guesses[0]
        where += f"; best guess {g.category.value} ({g.confidence.value} confidence: {g.summary.rstrip('.')})"
    return Finding(
        Category.INCONCLUSIVE, f"Inconclusive: {where}. Candidates: " + ", ".join(c.value for c in cands) + ".",
        Confidence.LOW, 0.0, "not estimated: the cause is not identified", list(tri.evidence),
        ["Collect the missing evidence with the ncu command given for this kernel, then analyse that report."],
        candidates=[c.value for c in cands])


def _missing(ctx: Context, tri: sol.Triage, outcomes: list[Outcome], diff: list[Category]) -> list[MissingEvidence]:
    want: dict[str, str] = {}
    for short, why in SOL_NEEDS.items():
        if ctx.v(short) is None:
            want[short] = why
    for o in outcomes:
        if any(c in diff for c in o.categories):
            for short, why in o.needs.items():
                want.setdefault(short, why)
    out = []
    for short, why in want.items():
        d = M.definition(short)
        out.append(MissingEvidence(short, d.names, d.section, why))
    return out


def _collect(launch: KernelLaunch, primary: Finding, missing: list[MissingEvidence],
             options: AnalyzeOptions) -> tuple[list[str], str, str, str]:
    """What to collect next - the missing evidence, or (nothing missing) the primary's evidence to
    re-measure after a change - as the ncu command that collects it (built by
    ``gemmlab.profile.evidence_command``), its purpose, a note on it and, when ``gemmlab profile``'s
    default collection covers every metric, the ``gemmlab profile`` line that runs the same thing."""
    sections: list[str] = []
    metrics: list[str] = []
    if missing:
        purpose = "missing-evidence"
        shorts = [m.metric for m in missing]
        for m in missing:
            if m.section:
                sections.append(m.section)
            else:
                metrics.append(m.ncu_names[0])
    else:  # nothing missing: how to re-measure the primary's evidence after a change
        purpose = "re-measure"
        family = FAMILY_OF.get(primary.category)
        shorts = list(family.NEEDS) if family is not None else []
        shorts += [e.metric for e in primary.evidence]
        sections = ["SpeedOfLight"] + [M.METRICS[s].section for s in shorts
                                       if s in M.METRICS and M.METRICS[s].section]
    cmd = evidence_command.build(launch, shorts=shorts, sections=sections, metrics=metrics,
                                 all_needed=bool(missing), app_argv=options.app_argv,
                                 launch_skip=options.launch_skip, launch_count=options.launch_count)
    return cmd.argv, purpose, cmd.note, cmd.profile_line


def _library_recommendations(owner: str, primary: Finding) -> list[str]:
    """A library's kernel: advice for its caller, never source edits to code the user does not own."""
    if primary.category == Category.INCONCLUSIVE:
        return primary.recommendations + library.caller_advice(owner, primary)[1:]
    return library.caller_advice(owner, primary)


def _recommendations(primary: Finding, rest: list[Finding], ladder) -> list[str]:
    recs: list[str] = []
    if ladder is not None:
        recs.append(f"Next rung: {ladder.rung} — {ladder.action}.")
    # a unit named as the limit while a cause explains part of its load: the cause's fix comes first,
    # since it removes load from that very unit (its own advice follows)
    explains = sorted((f for f in rest if f.category in limits.EXPLAINS.get(primary.category, ())
                       and f.recommendations and f.impact >= MIN_SECONDARY_IMPACT), key=lambda f: -f.impact)
    if explains and primary.category in UNIT_BOUND:
        recs.append(f"[{explains[0].category.value}] {explains[0].recommendations[0]}")
    recs += primary.recommendations
    if ladder is not None and primary.category == Category.COMPUTE_BOUND and gemm.LADDER_END not in ladder.action:
        recs.append(gemm.LADDER_END[0].upper() + gemm.LADDER_END[1:] + ".")
    for f in rest:
        if f.recommendations and f.impact >= MIN_SECONDARY_IMPACT:
            recs.append(f"[{f.category.value}] {f.recommendations[0]}")
    seen, out = set(), []
    for r in recs:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out
