"""A verdict that rests on a number near its line is not "high".

The analyzer's categories are decided by lines: NVIDIA's 60% (latency regime) and 80% (high throughput)
Speed-of-Light lines, DRAM's high line scaled to what it can sustain, CPIStall's 30% share of a stall
reason. A number a few points from its line can land on the other side in another capture of the same
kernel: on the labelled corpus the same launch's unit and pipe utilisations differ between the
``--set full`` capture and gemmlab's targeted one by up to 3.3 points (p90 2.5 for the SM, 3.3 for the
tensor pipe, 1.0 for DRAM; ``tests/fixtures/corpus``), and clocks drift between runs. Within
``MARGIN_POINTS`` of the line that decided it, a primary keeps its category but is at most "medium",
and says which number sits near which line.
"""

from __future__ import annotations

from typing import Optional

from gemmlab.analysis import limits
from gemmlab.analysis.context import Context, fmt
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import sol, stalls
from gemmlab.analysis.vocabulary import Category as C

# Half again the largest full-vs-targeted spread measured on the corpus (3.3 points): a number closer than
# this to its line could be read on the other side by another capture of the same launch.
MARGIN_POINTS = 5.0

LATENCY_SIDE = frozenset({C.LATENCY_BOUND, C.BARRIER_STALLS, C.GRID_TOO_SMALL, C.TAIL_EFFECT,
                          C.OCCUPANCY_REGISTERS, C.OCCUPANCY_SHARED_MEMORY, C.OCCUPANCY_BLOCK_SIZE})


def _unit_lines(ctx: Context, tri: sol.Triage, cat: C) -> list[tuple[str, Optional[float], float]]:
    """(what, value in %, line in %) for the unit whose level decided ``cat``."""
    if cat == C.TENSOR_BOUND:
        t = limits.tensor_pipe(ctx)
        return [("the tensor pipe", t[1] if t else None, sol.HIGH_PCT)]
    if cat == C.DRAM_BOUND:
        return [("DRAM", tri.pct.get("dram"), sol.DRAM_HIGH_PCT)]
    if cat == C.L2_BOUND:
        return [("L2", tri.pct.get("l2"), sol.HIGH_PCT)]
    if cat == C.L1_LSU_BOUND:
        return [("L1/TEX", tri.pct.get("l1"), sol.HIGH_PCT)]
    if cat == C.COMPUTE_BOUND:
        vals = [ctx.v(s) for s in limits.MATH_PIPES + ("issue_active_pct",)]
        vals = [v for v in vals if v is not None]
        return [("the busiest math pipe or the issue slots", max(vals) if vals else None, sol.HIGH_PCT)]
    return []


def near_line(ctx: Context, tri: sol.Triage, primary: Finding) -> Optional[str]:
    """Why ``primary`` sits within the margin of a line that decided it, or None."""
    cat = primary.category
    # "at its limit" is a claim about the 80% (DRAM: sustainable) line: near it, another capture may not
    # make it; a unit below its line is not claimed to be at its limit (its finding is medium already)
    checks = _unit_lines(ctx, tri, cat) if primary.at_limit else []
    if tri.regime == "latency" and cat in LATENCY_SIDE:
        # the regime line: a unit just below 60% could read above it elsewhere, and then that unit's
        # causes, not latency, would be weighed
        checks.append(("the busiest unit", tri.busiest, sol.LATENCY_BELOW_PCT))
    if cat in (C.LATENCY_BOUND, C.BARRIER_STALLS):
        share = _stall_share(ctx, cat)
        if share is not None:
            checks.append(("the stall reasons' share of the CPI", 100 * share, 100 * stalls.STALL_SHARE))
    for what, value, line in checks:
        if value is not None and abs(value - line) < MARGIN_POINTS:
            return f"{what} is at {fmt(value)}%, within {MARGIN_POINTS:.0f} points of the {fmt(line)}% line"
    return None


def _stall_share(ctx: Context, cat: C) -> Optional[float]:
    """The largest share that put the verdict over CPIStall's line (none left above it: no verdict)."""
    shares = stalls.waiting_shares(ctx, barrier=cat == C.BARRIER_STALLS)
    return max(shares) if shares else None


def temper(ctx: Context, tri: sol.Triage, primary: Finding) -> None:
    """Cap a high primary that sits near its line at medium, saying why."""
    if primary.confidence != Confidence.HIGH:
        return
    why = near_line(ctx, tri, primary)
    if why is None:
        return
    primary.confidence = Confidence.MEDIUM
    primary.summary = primary.summary.rstrip(".") + f". Confidence medium: {why}."
