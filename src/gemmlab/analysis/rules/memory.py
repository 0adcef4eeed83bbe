"""A memory unit busy with necessary traffic: L1/LSU (no reuse), L2, DRAM.

These findings say the unit is saturated by accesses that are already efficient (coalesced,
conflict-free), so the usual access-pattern fixes will not help: the traffic itself must shrink
(reuse through shared memory or registers, fusion, smaller types) or the algorithm must change.

l1_lsu_bound — L1/TEX or the LSU pipe ≥ 60% of peak (NVIDIA SOL) with global accesses making up
most of the L1 work. The LSU takes one warp-level memory instruction per cycle per SM while the
FMA pipes take four warp-FFMA, so more than 1/4 global request per FFMA means the kernel re-reads
operands from memory instead of reusing them. Impact: busy × global share × coalesced part ×
(1 − balance / requests per FFMA); without an FFMA count, the same without the last factor (upper
bound).
"""

from __future__ import annotations

from gemmlab.analysis import derived as D
from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding, lowest
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import HIGH_PCT, LATENCY_BELOW_PCT, Triage, high_pct
from gemmlab.analysis.rules.stalls import stall_evidence
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.L1_LSU_BOUND, C.L2_BOUND, C.DRAM_BOUND)
NEEDS = {
    "l1tex_pct": "L1/TEX throughput (% of peak)",
    "l2_pct": "L2 throughput (% of peak)",
    "dram_pct": "DRAM throughput (% of peak)",
    "pipe_lsu_pct": "LSU pipe utilisation: memory instructions issued vs one per cycle per SM",
    "gld_requests": "global load requests: requests per FFMA vs the 1/4 balance",
    "gld_hit_rate": "L1 hit rate of global loads: high means data is re-read from cache, not reused",
}

GLOBAL_DOMINANT = 0.5  # global/local accesses are at least half of the L1 data-pipe work
WASTE_OK = 0.10  # below the coalescing rule's 10% flag the traffic counts as necessary


def _l1_lsu(ctx: Context, tri: Triage, out: Outcome) -> None:
    l1 = tri.busy("l1")
    lsu_pct = ctx.v("pipe_lsu_pct")
    if lsu_pct is None:
        lsu_pct = ctx.v("lsuin_requests_pct")
    busy_candidates = [b for b in (l1, None if lsu_pct is None else lsu_pct / 100.0) if b is not None]
    if not busy_candidates:
        return
    busy = max(busy_candidates)
    if busy * 100 < LATENCY_BELOW_PCT:
        return
    shares = D.l1_shares(ctx)
    if shares is None:
        return
    global_share = shares.global_ld + shares.global_st + shares.local
    if global_share < GLOBAL_DOMINANT:
        return
    ld = D.global_load_waste(ctx)
    if ld is None:  # "bound by necessary traffic" needs the coalescing evidence that it is necessary
        return
    w = ld.fraction
    useful = 1.0 - w
    ev = [e for e in tri.evidence if e.metric == "l1tex_pct"]
    if ctx.v("pipe_lsu_pct") is not None:
        ev.append(ctx.ev("pipe_lsu_pct", f"{HIGH_PCT:.0f}% (NVIDIA high-throughput threshold)",
                         "one memory instruction per cycle per SM: the LSU issue limit"))
    ev += shares.evidence
    ev += ld.evidence[:2]  # what rules out (or measures) the coalescing alternative
    ffma = D.fp32_math(ctx)
    req = ctx.v("gld_requests")
    conf = lowest(shares.confidence, ld.confidence)
    balance = D.balance_ratio(ctx)
    if ffma is not None and ffma.value > 0 and req is not None:
        per_ffma = (req + (ctx.v("gst_requests") or 0.0)) / ffma.value
        ev += ffma.evidence + [ctx.derived(
            "global_requests_per_ffma", f"({ctx.names('gld_requests')} + stores) / warp-level FFMA", per_ffma,
            "request/FFMA", f"{fmt(balance)} at FMA-pipe balance (1 LSU instruction vs 4 warp-FFMA per cycle "
            "per SM)", "more means operands are re-loaded from memory for every FMA instead of reused")]
        if per_ffma <= balance:
            return
        excess = 1.0 - balance / per_ffma
        impact = busy * global_share * useful * excess
        basis = (f"L1/LSU busy {pct(busy)} × global share {pct(global_share)} × coalesced part {pct(useful)} "
                 f"× requests above FMA balance {pct(excess)}")
        detail = f"{fmt(per_ffma)} global memory instructions per FFMA (balance {fmt(balance)})"
    else:
        impact = busy * global_share * useful
        basis = (f"L1/LSU busy {pct(busy)} × global share {pct(global_share)} × coalesced part {pct(useful)} "
                 "(upper bound: FFMA count missing)")
        conf = conf.cap(Confidence.MEDIUM)
        detail = "global accesses dominate its work"
    hit = ctx.v("gld_hit_rate")
    if hit is not None:
        ev.append(ctx.ev("gld_hit_rate", "high = the same data is read again and again",
                         "hits mean the kernel re-reads data it could keep in shared memory or registers"))
        if hit >= 50:
            detail += f"; {fmt(hit)}% of load sectors hit in L1 (data re-read, not reused)"
    ev += stall_evidence(ctx, ("lg_throttle",), "LSU queue full: too many memory instructions")
    at_limit = busy * 100 >= HIGH_PCT and w < WASTE_OK
    out.findings.append(Finding(
        C.L1_LSU_BOUND, f"L1/LSU bound: L1/TEX or the LSU pipe at {fmt(100 * busy)}% of peak; {detail}.",
        conf, impact, basis, ev,
        ["Reuse each loaded value many times: tile through shared memory (each element loaded once per "
         "block) and keep operands in registers.",
         "Use wider loads (float4) so one instruction moves 16 bytes per thread."],
        at_limit=at_limit))


def _unit_bound(ctx: Context, tri: Triage, out: Outcome, unit: str) -> None:
    busy = tri.busy(unit)
    if busy is None or busy * 100 < LATENCY_BELOW_PCT or unit not in tri.hot:
        return
    ld, st = D.global_load_waste(ctx), D.global_store_waste(ctx)
    waste = max([w.fraction for w in (ld, st) if w is not None] or [0.0])
    known = ld is not None and st is not None
    ev = [e for e in tri.evidence if e.metric == ("l2_pct" if unit == "l2" else "dram_pct")]
    if unit == "l2":
        for k, why in (("l2_hit_pct", "L2 hits: traffic served by L2 rather than DRAM"),
                       ("gld_hit_rate", "low L1 hit rate sends loads on to L2")):
            if ctx.v(k) is not None:
                ev.append(ctx.ev(k, "—", why))
        cat = C.L2_BOUND
        recs = ["Raise L1/shared-memory reuse so fewer requests reach L2 (larger tiles, shared-memory staging).",
                "Check for atomics and uncoalesced accesses, which multiply L2 traffic."]
        what = "L2"
    else:
        for k, why in (("dram_bytes_read", "bytes read from DRAM"), ("dram_bytes_write", "bytes written")):
            if ctx.v(k) is not None:
                ev.append(ctx.ev(k, "—", why))
        cat = C.DRAM_BOUND
        recs = ["Move fewer bytes: fuse with neighbouring kernels, use smaller types, and reuse data from "
                "L2/shared memory (tiling raises arithmetic intensity).",
                "At this DRAM utilisation, access-pattern tweaks no longer help; only less traffic does."]
        what = "DRAM"
    at_limit = busy * 100 >= high_pct(unit) and waste < WASTE_OK
    # "at its limit" needs the unit at its high-throughput line: below it the unit is busy, not the limit
    # for certain (the stall table may show warps waiting instead), so the finding is not "high" on its own
    below = busy * 100 < high_pct(unit)
    out.findings.append(Finding(
        cat, f"{what} bound: {what} bandwidth at {fmt(100 * busy)}% of peak"
        + (" with efficient accesses" if known and waste < WASTE_OK else "")
        + (f", below its {high_pct(unit):.0f}% high-throughput line." if below else "."),
        Confidence.HIGH if known and not below else Confidence.MEDIUM, 0.0,
        "not estimated: what is recoverable depends on how much traffic better reuse or fusion removes",
        ev, recs, at_limit=at_limit))


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    out = Outcome("memory", CATEGORIES, evaluated=tri.regime != "unknown")
    for k in ("pipe_lsu_pct", "gld_requests", "gld_hit_rate"):
        if ctx.v(k) is None:
            out.needs[k] = NEEDS[k]
    if D.l1_shares(ctx) is None and ("l1" in tri.hot or "memory" in tri.hot):
        out.evaluated = False
    _l1_lsu(ctx, tri, out)
    _unit_bound(ctx, tri, out, "l2")
    _unit_bound(ctx, tri, out, "dram")
    return out
