"""Global-memory coalescing: loads and stores that touch more 32-byte sectors than their bytes need.

A warp's access is served in 32-byte sectors. 32 threads reading consecutive 4-byte words touch 4
sectors (8 for 8-byte, 16 for 16-byte accesses); one sector per thread (32 per request) means a
stride between threads. The exact measure is the per-instruction theoretical vs ideal sector count
(NVIDIA's UncoalescedGlobalAccess rule, SourceCounters); sectors per request and bytes used per
sector are the table-level signs of it.

Impact: the excess sectors' share of each memory level's traffic × that level's busy fraction
(the approach of NVIDIA's UncoalescedGlobalAccess estimate), taking the largest level.
"""

from __future__ import annotations

from typing import Optional

from gemmlab.analysis import derived as D
from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import Triage
from gemmlab.analysis.rules.stalls import stall_evidence
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES)
NEEDS = {
    "gld_sectors": "global load sectors: with requests, sectors/request vs the ideal 4/8/16",
    "gld_requests": "global load requests (warp-level load instructions)",
    "gst_sectors": "global store sectors: with requests, sectors/request vs the ideal",
    "gst_requests": "global store requests",
    "gld_bytes_per_sector": "bytes used per load sector (32 ideal): separates waste from vector width",
    "gst_bytes_per_sector": "bytes used per store sector (32 ideal)",
    "gl_sectors_theoretical": "exact per-instruction sectors requested (loads and stores)",
    "gl_sectors_ideal": "exact per-instruction sectors a coalesced pattern needs",
}

# Flag a direction when at least 10% of its sectors are excess: the same 10% NVIDIA uses for
# shared-memory bank conflicts; below it the waste is within what alignment and edge tiles cause.
WASTE_FLAG = 0.10


def _l1_traffic(ctx: Context) -> Optional[float]:
    """L1 traffic in 32-byte sector units (shared wavefronts count 4 sectors each)."""
    gld = ctx.v("gld_sectors")
    if gld is None:
        return None
    smem = ctx.v("smem_wavefronts") or 0.0
    loc = (ctx.v("local_ld_sectors") or 0.0) + (ctx.v("local_st_sectors") or 0.0)
    return gld + (ctx.v("gst_sectors") or 0.0) + loc + D.WAVEFRONT_SECTORS * smem


def _impact(ctx: Context, tri: Triage, w: D.Waste, store: bool) -> tuple[float, str]:
    """Largest over memory levels of busy fraction × excess share of that level's traffic."""
    best, basis = 0.0, ""
    l1, l2 = tri.busy("l1"), tri.busy("l2")
    if tri.regime == "throughput":
        # less traffic in a unit that is not a limit recovers no time: weigh only the busy levels (L2
        # also stands for DRAM, whose traffic is what misses in L2)
        hot = set(tri.hot)
        l1 = l1 if hot & {"l1", "memory"} else None
        l2 = l2 if hot & {"l2", "dram", "memory"} else None
    traffic = _l1_traffic(ctx)
    if w.excess is not None and traffic:
        if l1 is not None:
            v = l1 * w.excess / traffic
            if v > best:
                best, basis = v, (f"L1/TEX busy {pct(l1)} × excess sectors {fmt(w.excess)} / L1 "
                                  f"traffic {fmt(traffic)} sectors")
        l2_total = ctx.v("l2_sectors_total")
        if l2 is not None and l2_total:
            # loads that hit in L1 never reach L2; stores are write-through
            reach = 1.0 if store else 1.0 - (ctx.v("gld_hit_rate") or 0.0) / 100.0
            v = l2 * min(1.0, w.excess * reach / l2_total)
            if v > best:
                best, basis = v, (f"L2 busy {pct(l2)} × excess sectors reaching L2 "
                                  f"{fmt(w.excess * reach)} / L2 sectors {fmt(l2_total)}")
    f = ctx.facts
    if not basis and l1 is not None and w.excess and f.global_total_sectors and f.shared_wavefronts:
        # the rule texts give absolute counts: global sectors (UncoalescedGlobalAccess) and shared
        # wavefronts (SharedMemoryConflicts, one wavefront = 4 sectors of L1 data-pipe work)
        traffic = f.global_total_sectors + D.WAVEFRONT_SECTORS * sum(f.shared_wavefronts.values())
        best = l1 * min(1.0, w.excess / traffic)
        basis = (f"L1/TEX busy {pct(l1)} × excess sectors {fmt(w.excess)} / L1 traffic {fmt(traffic)} sectors "
                 "(global sectors and shared wavefronts as ncu's rules count them)")
    if not basis:
        # no absolute counts: NVIDIA's form, busiest memory unit × excess fraction — bounded by ncu's
        # count of excessive sectors over all global sectors when the rule text gives it
        units = [u for u in (l1, l2, tri.busy("dram"), tri.busy("memory")) if u is not None]
        busy = max(units) if units else 1.0
        frac = w.fraction
        total = ctx.facts.global_excess_sectors
        if total is not None and total.value < frac:
            frac = total.value
        best = busy * frac
        basis = (f"busiest memory unit {pct(busy)} × excess fraction {pct(frac)} "
                 "(upper bound: the export has no sector counts to weigh this traffic against the rest)")
        floor = _l2_sectors_floor(ctx)
        excess = w.excess
        if not excess and total is not None and f.global_total_sectors:
            excess = total.value * f.global_total_sectors  # ncu's count of excessive sectors, loads and stores
        if excess and floor and excess / floor < frac:
            # every DRAM byte passes through L2, so L2 moved at least the DRAM bytes: the excess sectors are
            # at most that share of its traffic (the rest of it — TMA, shared stores, hits — the LSU rule
            # does not count)
            best = busy * excess / floor
            basis = (f"busiest memory unit {pct(busy)} × excess sectors {fmt(excess)} / at least "
                     f"{fmt(floor)} L2 sectors (the DRAM bytes, which all pass through L2; upper bound: the "
                     "export has no L2 sector count)")
    return best, basis


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    out = Outcome("coalescing", CATEGORIES, evaluated=False)
    ld, st = D.global_load_waste(ctx), D.global_store_waste(ctx)
    out.evaluated = ld is not None and st is not None
    for key in ("gld_sectors", "gld_requests", "gst_sectors", "gst_requests"):
        if ctx.v(key) is None:
            out.needs[key] = NEEDS[key]
    if not ctx.has("gl_sectors_theoretical", "gl_sectors_ideal"):
        out.needs["gl_sectors_theoretical"] = NEEDS["gl_sectors_theoretical"]
        out.needs["gl_sectors_ideal"] = NEEDS["gl_sectors_ideal"]
    for key in ("gld_bytes_per_sector", "gst_bytes_per_sector"):
        if ctx.v(key) is None:
            out.needs[key] = NEEDS[key]

    if ld is not None and ld.fraction >= WASTE_FLAG:
        impact, basis = _impact(ctx, tri, ld, store=False)
        spr = ctx.v("gld_sectors") / ctx.v("gld_requests") if ctx.has("gld_sectors", "gld_requests") \
            and ctx.v("gld_requests") else None
        what = f"{pct(ld.fraction)} of global-load sectors are excess"
        if spr is not None:
            what += f" ({fmt(spr)} sectors per request vs 4 for coalesced 4-byte loads)"
        ev = ld.evidence + stall_evidence(ctx, ("lg_throttle", "long_scoreboard"),
                                          "L1 queue / memory latency stalls caused by the extra sectors")
        out.findings.append(Finding(
            C.UNCOALESCED_GLOBAL_LOADS, f"Uncoalesced global loads: {what}.", ld.confidence, impact, basis,
            ev, ["Make consecutive threads (threadIdx.x) read consecutive addresses: map threadIdx.x "
                 "to the contiguous (column) index of row-major arrays.",
                 "If a strided read is unavoidable, stage the tile through shared memory with coalesced "
                 "loads and read it transposed from there."],
            ncu_estimate=ld.ncu_estimate, ncu_rule=ld.ncu_rule))
    if st is not None and st.fraction >= WASTE_FLAG:
        impact, basis = _impact(ctx, tri, st, store=True)
        spr = ctx.v("gst_sectors") / ctx.v("gst_requests") if ctx.has("gst_sectors", "gst_requests") \
            and ctx.v("gst_requests") else None
        what = f"{pct(st.fraction)} of global-store sectors are excess"
        if spr is not None:
            what += f" ({fmt(spr)} sectors per request vs 4 for coalesced 4-byte stores)"
        ev = st.evidence + stall_evidence(ctx, ("drain", "lg_throttle"),
                                          "stores waiting to drain at kernel end / LSU queue full")
        out.findings.append(Finding(
            C.UNCOALESCED_GLOBAL_STORES, f"Uncoalesced global stores: {what}.", st.confidence, impact, basis,
            ev, ["Have consecutive threads write consecutive addresses; for register-tiled outputs, "
                 "write rows with float4 (each thread's TN outputs contiguous) or stage the output tile "
                 "through shared memory and write it coalesced."],
            ncu_estimate=st.ncu_estimate, ncu_rule=st.ncu_rule))
    if ld is not None and st is not None:
        conf = min(ld.confidence, st.confidence, key=lambda c: c.rank)
        out.evaluated = conf.rank >= Confidence.MEDIUM.rank
    return out


def _l2_sectors_floor(ctx: Context) -> Optional[float]:
    """The fewest 32-byte sectors L2 can have moved: the DRAM bytes (rate × duration on a details page),
    since every DRAM transfer passes through L2. None when neither is in the export."""
    rd, wr = ctx.v("dram_bytes_read"), ctx.v("dram_bytes_write")
    if rd is not None and wr is not None:
        total = rd + wr
    else:
        rate, dur = ctx.v("dram_bytes_per_s"), ctx.v("duration")
        if rate is None or dur is None:
            return None
        total = rate * dur * 1e-9
    return total / D.SECTOR_BYTES if total > 0 else None
