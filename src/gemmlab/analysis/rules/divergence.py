"""Warp divergence: fewer than 24 of 32 threads active (or not predicated off) per instruction.

NVIDIA's ThreadDivergence rule: reported when the average active threads per executed instruction,
or the not-predicated-off threads, fall below 24; its estimate is (1 − threads/32) × compute
throughput. gemmlab uses the same threshold and estimate (× the SM busy fraction).
"""

from __future__ import annotations

from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import Triage
from gemmlab.analysis.rules.stalls import stall_evidence
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.WARP_DIVERGENCE,)
NEEDS = {
    "thread_inst_per_inst": "active threads per executed instruction (32 = none diverged)",
}

THREADS_FLAG = 24.0  # NVIDIA ThreadDivergence


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    t, p = ctx.v("thread_inst_per_inst"), ctx.v("thread_inst_pred_on_per_inst")
    rule = ctx.facts.divergence
    out = Outcome("divergence", CATEGORIES, evaluated=t is not None or rule is not None)
    if not out.evaluated:
        out.needs.update(NEEDS)
        return out
    threads = min(v for v in (t, p) if v is not None) if (t is not None or p is not None) else rule.value
    if threads >= THREADS_FLAG:
        return out
    busy = tri.busy("sm") or 1.0
    impact = (1.0 - threads / 32.0) * busy
    if t is not None:
        ev = [ctx.ev("thread_inst_per_inst", f"{THREADS_FLAG:.0f} of 32 (NVIDIA ThreadDivergence)",
                     "inactive lanes do no work but the instruction still takes an issue slot")]
        if p is not None:
            ev.append(ctx.ev("thread_inst_pred_on_per_inst", f"{THREADS_FLAG:.0f} of 32", "predicated-off lanes"))
        conf = Confidence.HIGH
    else:
        ev = [ctx.from_rule(rule, "thread_inst_per_inst", "thread", f"{THREADS_FLAG:.0f}", "active threads")]
        conf = Confidence.MEDIUM
    if ctx.v("branch_uniform_pct") is not None:
        ev.append(ctx.ev("branch_uniform_pct", "100%", "branches whose threads all go the same way"))
    ev += stall_evidence(ctx, ("branch_resolving",), "waiting on branch resolution")
    out.findings.append(Finding(
        C.WARP_DIVERGENCE, f"Warp divergence: on average only {fmt(threads)} of 32 threads execute each instruction.",
        conf, impact, f"(1 − {fmt(threads)}/32) × SM busy {pct(busy)} (NVIDIA ThreadDivergence estimate)", ev,
        ["Make branch conditions uniform per warp (sort or bin work so a warp's threads take the same path); "
         "handle edge tiles in a separate, predicated pass.",
         "Check the block size is a multiple of 32 and that early-exit threads are not most of a warp."]))
    return out
