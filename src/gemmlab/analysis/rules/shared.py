"""Shared memory: bank conflicts, and conflict-free traffic that is simply too much.

Shared memory has 32 banks of 4 bytes; the L1 data pipe serves one 128-byte wavefront per cycle
per SM. A warp access whose threads hit the same bank at different addresses needs extra wavefronts
(a bank conflict; NVIDIA's SharedMemoryConflicts rule flags ≥ 10% of wavefronts). Without
conflicts, the pipe can still be saturated when every FFMA needs its operands from shared memory:
the FMA pipes do 4 warp-FFMA per cycle per SM while the data pipe delivers 1 wavefront, so more
than 1/4 wavefront per warp-FFMA makes shared memory, not math, the limit. The fix for that is
register reuse (several outputs per thread), not padding.

Impacts: conflicts — L1 busy × shared share of L1 × excess-wavefront fraction. Throughput —
L1 busy × shared share × conflict-free part × (1 − balance / wavefronts per FFMA): the part of the
shared traffic above what the FMA pipe could consume.
"""

from __future__ import annotations

from gemmlab.analysis import derived as D
from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding, lowest
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import HIGH_PCT, Triage
from gemmlab.analysis.rules.stalls import STALL_SHARE, stall, stall_evidence
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.SHARED_BANK_CONFLICTS, C.SHARED_MEMORY_THROUGHPUT)
NEEDS = {
    "smem_ld_wavefronts": "shared load wavefronts: with conflicts, the bank-conflict share",
    "smem_st_wavefronts": "shared store wavefronts",
    "smem_ld_conflicts": "shared load bank conflicts",
    "smem_st_conflicts": "shared store bank conflicts",
    "smem_ld_inst": "shared load instructions: shared loads per FFMA",
    "smem_st_inst": "shared store instructions",
    "l1_wavefronts_pct": "L1 data-pipe wavefronts (% of peak): the denominator of the shared share",
    "l1_shared_wavefronts_pct": "shared-memory wavefronts (% of peak): how much of L1 is shared memory",
    "ffma_rate": "FP32 FMA count: shared wavefronts per FFMA vs the 1/4 balance",
}

CONFLICT_FLAG = 0.10  # NVIDIA SharedMemoryConflicts: bank conflicts ≥ 10% of wavefronts
# Shared memory dominates L1 when it is at least half of the data-pipe work.
SHARED_DOMINANT = 0.5
# Report shared throughput when the L1 data pipe is at least moderately busy (NVIDIA SOL 60%).
BUSY_FLAG = 0.6


def _from_stalls(ctx: Context, tri: Triage, out: Outcome) -> None:
    """A page without shared-memory counters: L1 busy while the MIO queue (shared-memory instructions)
    holds the warps, and ncu's SharedMemoryConflicts rule did not fire, points at conflict-free shared
    traffic — at low confidence, so it can be named as the likelier candidate."""
    l1 = tri.busy("l1")
    mio = stall(ctx, "mio_throttle") or stall(ctx, "short_scoreboard")
    if l1 is None or l1 < BUSY_FLAG or mio is None or mio.share <= STALL_SHARE or ctx.facts.shared_conflicts:
        return
    out.findings.append(Finding(
        C.SHARED_MEMORY_THROUGHPUT,
        f"Shared-memory throughput (likely): L1/TEX at {fmt(100 * l1)}% while warps wait on the MIO queue "
        f"({mio.reason} {pct(mio.share)} of their cycles) and ncu reports no bank conflicts; the shared-memory "
        "wavefront counts that would confirm it are missing.",
        Confidence.LOW, l1 * mio.share, f"L1/TEX busy {pct(l1)} × {mio.reason} share {pct(mio.share)} (upper bound)",
        [e for e in tri.evidence if e.metric == "l1tex_pct"] + [mio.evidence],
        ["Reuse operands from registers: compute several outputs per thread (1D/2D register blocking) so "
         "each shared load feeds several FMAs."]))


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    out = Outcome("shared", CATEGORIES, evaluated=False)
    for k, why in NEEDS.items():
        if ctx.v(k) is None:
            out.needs[k] = why
    if D.no_shared_memory(ctx):
        out.needs.clear()
        out.evaluated = True  # no shared-memory instructions: neither category can apply
        return out
    waste = D.shared_conflict_waste(ctx)
    shares = D.l1_shares(ctx)
    l1 = tri.busy("l1")
    out.evaluated = waste is not None and (shares is not None or l1 is None)
    if waste is None:
        _from_stalls(ctx, tri, out)
        return out
    share = shares.shared if shares is not None else 1.0
    busy = l1 if l1 is not None else (tri.busy("memory") or 1.0)
    share_ev = shares.evidence if shares is not None else []
    # without the L1 split the conflicts are still established; only the impact becomes an upper bound
    share_conf = shares.confidence if shares is not None else Confidence.MEDIUM

    if waste.fraction >= CONFLICT_FLAG:
        impact = busy * share * waste.fraction
        basis = (f"L1/TEX busy {pct(busy)} × shared share of L1 {pct(share)} × excess wavefronts "
                 f"{pct(waste.fraction)}" + ("" if shares is not None else
                                             " (upper bound: the shared share of L1 is unknown, taken as 100%)"))
        nway = None
        inst = ctx.v("smem_ld_inst")
        wf = ctx.v("smem_ld_wavefronts")
        if inst and wf is not None:
            nway = wf / inst
        summary = f"Shared-memory bank conflicts: {pct(waste.fraction)} of shared wavefronts are excess"
        if nway is not None:
            summary += f" ({fmt(nway)} wavefronts per shared load instruction)"
        ev = waste.evidence + share_ev + [e for e in tri.evidence if e.metric == "l1tex_pct"] + stall_evidence(
            ctx, ("mio_throttle", "short_scoreboard"), "shared-memory queue / result stalls")
        out.findings.append(Finding(
            C.SHARED_BANK_CONFLICTS, summary + ".", lowest(waste.confidence, share_conf.cap(Confidence.HIGH)),
            impact, basis, ev,
            ["Pad the shared tile's row stride by one element (e.g. float As[BM][BK + 1]) or swizzle the "
             "index so the threads of a warp hit different banks.",
             "For a tile read down its columns, store it transposed into shared memory so warps read rows."],
            ncu_estimate=waste.ncu_estimate, ncu_rule=waste.ncu_rule))

    # conflict-free shared traffic vs the FMA pipe
    ffma = D.fp32_math(ctx)
    wf_total = ctx.v("smem_wavefronts_ideal")
    if wf_total is None:
        parts = [ctx.v("smem_ld_wavefronts"), ctx.v("smem_st_wavefronts")]
        if None not in parts:
            wf_total = sum(parts) * (1.0 - waste.fraction)  # type: ignore[arg-type]
    if l1 is None or shares is None or share < SHARED_DOMINANT or l1 < BUSY_FLAG:
        return out
    useful = 1.0 - waste.fraction
    atom_wf, all_wf = ctx.v("smem_atom_wavefronts"), ctx.v("smem_wavefronts")
    if atom_wf and all_wf:
        # shared atomics (and their same-address replays) are the atomics rule's business, not operand loads
        useful *= max(0.0, 1.0 - atom_wf / all_wf)
    balance = D.balance_ratio(ctx)
    # the conflict measure comes first: it is what rules out (or sizes) the bank-conflict alternative
    ev = [e for e in tri.evidence if e.metric == "l1tex_pct"] + list(share_ev) + waste.evidence[:1]
    if ffma is not None and ffma.value > 0 and wf_total is not None:
        per_ffma = wf_total / ffma.value
        ev += ffma.evidence + [ctx.derived(
            "smem_wavefronts_per_ffma", "conflict-free shared wavefronts / warp-level FFMA", per_ffma,
            "wavefront/FFMA", f"{fmt(balance)} at FMA-pipe balance (1 wavefront vs 4 warp-FFMA per cycle per SM)",
            "above the balance the shared-memory pipe, not the FMA pipe, sets the pace")]
        excess = max(0.0, 1.0 - balance / per_ffma) if per_ffma > 0 else 0.0
        impact = l1 * share * useful * excess
        basis = (f"L1/TEX busy {pct(l1)} × shared share {pct(share)} × conflict-free part {pct(useful)} × "
                 f"traffic above FMA balance {pct(excess)}")
        conf = lowest(share_conf, waste.confidence, ffma_conf(ffma))
        if per_ffma <= balance:
            return out  # shared traffic already within what the FMA pipe can consume
        summary = (f"Shared-memory throughput: {fmt(per_ffma)} shared wavefronts per FFMA (balance "
                   f"{fmt(balance)}) keep L1/TEX at {fmt(100 * l1)}% — operands come from shared memory, "
                   "not registers")
    else:
        impact = l1 * share * useful
        basis = (f"L1/TEX busy {pct(l1)} × shared share {pct(share)} × conflict-free part {pct(useful)} "
                 "(upper bound: FFMA count missing)")
        conf = lowest(share_conf, waste.confidence, Confidence.MEDIUM)
        summary = (f"Shared-memory throughput: shared memory is {pct(share)} of the L1/TEX work and L1/TEX "
                   f"runs at {fmt(100 * l1)}%")
    ev += stall_evidence(ctx, ("mio_throttle", "short_scoreboard"), "shared-memory instruction queue stalls")
    lds = ctx.v("smem_ld_inst")
    if lds is not None and ffma is not None and ffma.value > 0:
        ev.append(ctx.derived("smem_ld_inst_per_ffma", f"{ctx.names('smem_ld_inst')} / warp-level FFMA",
                              lds / ffma.value, "inst/FFMA", "≈ 2 for one output per thread; (TM+TN)/(TM·TN) "
                              "with TM×TN register tiles", "how many shared loads feed each FMA"))
    at_limit = l1 * 100 >= HIGH_PCT and waste.fraction < CONFLICT_FLAG
    out.findings.append(Finding(
        C.SHARED_MEMORY_THROUGHPUT, summary + ".", conf, impact, basis, ev,
        ["Reuse operands from registers: compute several outputs per thread (1D/2D register blocking) so "
         "each shared load feeds several FMAs.",
         "Use wider shared loads (LDS.64/LDS.128 via float2/float4) so fewer instructions move the same bytes."],
        at_limit=at_limit))
    return out


def ffma_conf(q: D.Quantity) -> Confidence:
    return q.confidence
