"""Quantities several rules share, each computed from the best evidence present.

Every function returns ``None`` when the record cannot support the quantity, or a value with the
evidence it rests on and how much to trust it (exact counters → high; ratios that need an
assumption or ncu's rounded rule text → medium or low).

Hardware constants (per SM, sm_70 … sm_90; the ncu peaks are used instead when present):

* the L1/shared data pipe moves one 128-byte wavefront per cycle (32 banks × 4 bytes);
* the LSU accepts one warp-level memory instruction per cycle (``l1tex__lsuin_requests`` peak);
* the FMA pipes execute 128 FP32 FMA thread-instructions per cycle
  (``sm__sass_thread_inst_executed_op_ffma_pred_on.avg.peak_sustained`` = 128 on sm_80/sm_90),
  i.e. 4 warp-level FFMA per cycle.

So a kernel whose FP32 FMAs should be the limit may issue at most 1/4 memory instruction — and
move at most 1/4 L1 wavefront — per warp-level FFMA: the *balance ratio* below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Evidence

WARP = 32
SECTOR_BYTES = 32
WAVEFRONT_SECTORS = 4  # one L1 data-pipe wavefront carries 128 bytes = 4 sectors
DEFAULT_FFMA_PEAK_PER_SM = 128.0  # FP32 FMA thread-instructions per cycle per SM, sm_80/sm_90
IDEAL_SECTORS_PER_REQUEST_4B = 4.0  # a warp reading 32 consecutive 4-byte words touches 4 sectors
MAX_IDEAL_SECTORS_PER_REQUEST = 16.0  # 16-byte vector accesses: 512 bytes = 16 sectors per request


@dataclass
class Quantity:
    """A derived value with its evidence and the confidence it supports."""

    value: float
    evidence: list[Evidence] = field(default_factory=list)
    confidence: Confidence = Confidence.HIGH
    note: str = ""


def ffma_warp_inst(ctx: Context) -> Optional[Quantity]:
    """Warp-level FP32 FMA instructions (thread-level FFMA / 32)."""
    thread = ctx.v("ffma_thread_inst")
    if thread is not None:
        ev = ctx.ev("ffma_thread_inst", "—", "FP32 FMA work: the useful math of an SGEMM")
        return Quantity(thread / WARP, [ev])
    rate, cycles = ctx.v("ffma_rate"), ctx.v("sm_cycles_elapsed")
    if rate is None or cycles is None:
        return None
    count = rate * cycles / WARP
    ev = ctx.derived("ffma_warp_inst", f"{ctx.names('ffma_rate')} × {ctx.names('sm_cycles_elapsed')} / 32",
                     count, "inst", "—", "FP32 FMA work in warp instructions: the useful math of an SGEMM")
    return Quantity(count, [ev])


# FP32 FMA counts as "the kernel's math" only when it is at least 5% of the warp instructions and the
# tensor pipe is nearly idle (< 10%); otherwise (tensor-core, FP16, integer kernels) ratios per FFMA
# would measure the wrong work and are not used.
MIN_FFMA_INST_SHARE = 0.05
MAX_TENSOR_PCT_FOR_FP32 = 10.0


def uses_wgmma(ctx: Context) -> Optional[bool]:
    """Whether the tensor work is issued as wgmma: any warpgroup-MMA (GMMA) instruction at all - an
    mma.sync / WMMA kernel issues none, and one wgmma does the work of many HMMAs, so its instruction
    rate stays in single-digit % of peak even when the tensor pipe is saturated. None when the export
    cannot tell."""
    gmma = ctx.v("pipe_tensor_gmma_pct")
    return None if gmma is None else gmma > 0


def fp32_math(ctx: Context) -> Optional[Quantity]:
    """The warp-level FFMA count when FP32 FMA is the kernel's math, else None."""
    ffma = ffma_warp_inst(ctx)
    if ffma is None or ffma.value <= 0:
        return None
    inst = ctx.v("inst_executed")
    if inst is not None and inst > 0 and ffma.value / inst < MIN_FFMA_INST_SHARE:
        return None
    tensor = max([v for v in (ctx.v("pipe_tensor_pct"), ctx.v("pipe_tensor_gmma_pct")) if v is not None],
                 default=None)
    if tensor is not None and tensor >= MAX_TENSOR_PCT_FOR_FP32:
        return None
    return ffma


def balance_ratio(ctx: Context) -> float:
    """Memory instructions (or L1 wavefronts) per warp-FFMA at which the FMA pipe becomes the limit."""
    peak = ctx.v("ffma_peak_per_sm") or DEFAULT_FFMA_PEAK_PER_SM
    return 1.0 / (peak / WARP)


@dataclass
class L1Shares:
    """How the L1/TEX data pipe's work divides between shared memory and global/local accesses."""

    shared: float
    global_ld: float
    global_st: float
    local: float
    evidence: list[Evidence]
    confidence: Confidence


def l1_shares(ctx: Context) -> Optional[L1Shares]:
    """Shares of L1 data-pipe work, from the SOL breakdown when present, else from counts."""
    wf, sh = ctx.v("l1_wavefronts_pct"), ctx.v("l1_shared_wavefronts_pct")
    gld, gst = ctx.v("gld_sectors"), ctx.v("gst_sectors")
    loc = (ctx.v("local_ld_sectors") or 0.0) + (ctx.v("local_st_sectors") or 0.0)
    ev: list[Evidence] = []
    if wf is not None and sh is not None and wf > 0:
        shared = min(1.0, sh / wf)
        ev.append(ctx.derived(
            "l1_shared_share", f"{ctx.names('l1_shared_wavefronts_pct')} / {ctx.names('l1_wavefronts_pct')}",
            shared, "fraction", "1 = all L1 data-pipe work is shared memory",
            "tells whether L1/TEX is busy with shared-memory or with global/local accesses"))
        conf = Confidence.HIGH
    else:
        smem = ctx.v("smem_wavefronts")
        if smem is None:
            parts = [ctx.v("smem_ld_wavefronts"), ctx.v("smem_st_wavefronts")]
            smem = None if None in parts else sum(parts)  # type: ignore[arg-type]
        if smem is None:
            if not no_shared_memory(ctx):
                return None
            smem = 0.0
        if gld is None:
            if smem == 0.0:  # no shared memory at all: L1 data-pipe work is global/local traffic
                ev.append(ctx.derived("l1_shared_share", "no shared memory allocated or accessed", 0.0, "fraction",
                                      "—", "all L1/TEX work is global or local traffic"))
                return L1Shares(0.0, 1.0, 0.0, 0.0, ev, Confidence.MEDIUM)
            return None
        total = WAVEFRONT_SECTORS * smem + gld + (gst or 0.0) + loc
        if total <= 0:
            return None
        shared = WAVEFRONT_SECTORS * smem / total
        ev.append(ctx.derived(
            "l1_shared_share", "4 × shared wavefronts / (4 × shared wavefronts + global and local sectors)",
            shared, "fraction", "1 = all L1 traffic (in 32-byte units) is shared memory",
            "tells whether L1/TEX is busy with shared-memory or with global/local accesses"))
        conf = Confidence.MEDIUM  # byte-equivalent shares approximate the pipe's cycle shares
    rest = 1.0 - shared
    g_total = (gld or 0.0) + (gst or 0.0) + loc
    if g_total > 0:
        gl, gs, lo = ((gld or 0.0) / g_total, (gst or 0.0) / g_total, loc / g_total)
    else:
        gl, gs, lo = 1.0, 0.0, 0.0
    return L1Shares(shared, rest * gl, rest * gs, rest * lo, ev, conf)


def no_shared_memory(ctx: Context) -> bool:
    """True when the record proves the kernel does not use shared memory."""
    ld, st = ctx.v("smem_ld_inst"), ctx.v("smem_st_inst")
    if ld is not None and st is not None:
        return ld == 0 and st == 0
    if (ld or 0) > 0 or (st or 0) > 0:
        return False
    static, dyn = ctx.v("smem_static"), ctx.v("smem_dynamic")
    return static == 0 and dyn == 0  # nothing allocated: nothing to access


@dataclass
class Waste:
    """Excess work in one traffic class: the fraction of its sectors/wavefronts not needed."""

    fraction: float
    excess: Optional[float]  # absolute excess sectors/wavefronts, when known
    evidence: list[Evidence]
    confidence: Confidence
    ncu_estimate: Optional[float] = None
    ncu_rule: str = ""
    note: str = ""


def _store_excess_estimate(ctx: Context) -> Optional[float]:
    gst, bps = ctx.v("gst_sectors"), ctx.v("gst_bytes_per_sector")
    if gst is None:
        return None
    if bps is not None and bps > 0:
        return gst * max(0.0, 1.0 - bps / SECTOR_BYTES)
    req = ctx.v("gst_requests")
    if req is None:
        return None
    return max(0.0, gst - IDEAL_SECTORS_PER_REQUEST_4B * req)


def global_load_waste(ctx: Context) -> Optional[Waste]:
    """Excess global-load sectors as a fraction of all global-load sectors."""
    gld, req, bps = ctx.v("gld_sectors"), ctx.v("gld_requests"), ctx.v("gld_bytes_per_sector")
    if bps is not None and bps <= 0 and gld:
        bps = None  # sectors moved but no LDG measured: cp.async/LDGSTS copies, which the ratio does not count
    th, ideal = ctx.v("gl_sectors_theoretical"), ctx.v("gl_sectors_ideal")
    ev: list[Evidence] = []
    spr = gld / req if gld is not None and req else None
    if spr is not None:
        ev.append(ctx.derived(
            "gld_sectors_per_request", f"{ctx.names('gld_sectors')} / {ctx.names('gld_requests')}", spr,
            "sector/request", "ideal 4 (4-byte), 8 (8-byte), 16 (16-byte); 32 = one sector per thread",
            "a coalesced warp load touches only the sectors its bytes fill; more means scattered addresses"))
    if bps is not None:
        ev.append(ctx.ev("gld_bytes_per_sector", "32 byte/sector used when fully coalesced",
                         "bytes fetched but not used waste L1/L2/DRAM bandwidth (broadcast loads also "
                         "read 4 of 32 bytes, which is not waste)"))
    if gld == 0.0:  # no LSU global loads (TMA/bulk copies bypass these counters): nothing to waste
        return Waste(0.0, 0.0, ev, Confidence.HIGH, note="no global-load sectors through the LSU")
    # 1. exact: per-instruction theoretical vs ideal sectors (SourceCounters), loads+stores
    if th is not None and ideal is not None and gld:
        total_excess = max(0.0, th - ideal)
        st_excess = _store_excess_estimate(ctx)
        ld_excess = max(0.0, total_excess - (st_excess or 0.0))
        w = min(1.0, ld_excess / gld)
        ev.insert(0, ctx.derived(
            "gld_excess_fraction",
            f"({ctx.names('gl_sectors_theoretical')} − {ctx.names('gl_sectors_ideal')} − store excess)"
            f" / {ctx.names('gld_sectors')}", w, "fraction",
            "0 = every load instruction touches its ideal number of sectors",
            "exact per-instruction count of sectors the access pattern wastes"))
        ev += [ctx.ev("gl_sectors_theoretical", "gl_sectors_ideal", "sectors the access pattern requests"),
               ctx.ev("gl_sectors_ideal", "—", "sectors a coalesced pattern needs for the same bytes"),
               ctx.ev("gld_sectors", "—", "global-load sectors (the denominator)")]
        conf = Confidence.HIGH if st_excess is not None or total_excess == 0 else Confidence.MEDIUM
        return Waste(w, ld_excess, ev, conf)
    # 2. ratios: sectors per request and bytes used per sector
    if spr is not None:
        if spr <= IDEAL_SECTORS_PER_REQUEST_4B:
            return Waste(0.0, 0.0, ev, Confidence.MEDIUM,
                         note="sectors per request at or below the 4-byte ideal (broadcasts lower it)")
        if bps is not None:
            w = max(0.0, 1.0 - bps / SECTOR_BYTES)
            conf = Confidence.MEDIUM
        else:
            w = max(0.0, 1.0 - IDEAL_SECTORS_PER_REQUEST_4B / spr)
            conf = Confidence.LOW  # assumes 4-byte accesses
        return Waste(w, w * gld if gld else None, ev, conf)
    # 3. ncu's rule text
    f = ctx.facts
    ld = f.bytes_per_sector.get(("global", "load"))
    st = f.bytes_per_sector.get(("global", "store"))
    if f.global_excess_sectors is not None:
        ev.append(ctx.from_rule(f.global_excess_sectors, "global_excess_fraction", "fraction",
                                "0 = coalesced", "ncu's per-instruction count of excessive sectors "
                                "(loads and stores together)"))
        if ld is not None:
            ev.append(ctx.from_rule(ld, "gld_bytes_per_sector", "byte/sector", "32", "bytes used per sector"))
        if ld is None and st is not None:
            return Waste(0.0, 0.0, ev, Confidence.MEDIUM, note="ncu attributes the excess to stores only")
        return Waste(f.global_excess_sectors.value, f.global_excess_count, ev, Confidence.MEDIUM,
                     f.global_excess_sectors.estimated_speedup, "UncoalescedGlobalAccess")
    if ld is not None:
        ev.append(ctx.from_rule(ld, "gld_bytes_per_sector", "byte/sector", "32 when coalesced",
                                "bytes used per sector; broadcasts also lower it, so this alone "
                                "does not prove scattered addresses"))
        return Waste(max(0.0, 1.0 - ld.value / SECTOR_BYTES), None, ev, Confidence.LOW,
                     ld.estimated_speedup, "MemoryCacheAccessPattern")
    if f.access_pattern_rule_seen:
        return Waste(0.0, 0.0, ev, Confidence.MEDIUM,
                     note="ncu's access-pattern rule ran and did not flag global loads")
    return None


def global_store_waste(ctx: Context) -> Optional[Waste]:
    """Excess global-store sectors as a fraction of all global-store sectors."""
    gst, req, bps = ctx.v("gst_sectors"), ctx.v("gst_requests"), ctx.v("gst_bytes_per_sector")
    if bps is not None and bps <= 0 and gst:
        bps = None  # sectors written but no STG measured by the ratio
    ev: list[Evidence] = []
    spr = gst / req if gst is not None and req else None
    if spr is not None:
        ev.append(ctx.derived(
            "gst_sectors_per_request", f"{ctx.names('gst_sectors')} / {ctx.names('gst_requests')}", spr,
            "sector/request", "ideal 4 (4-byte), 8 (8-byte), 16 (16-byte); 32 = one sector per thread",
            "a coalesced warp store fills whole sectors; 32 means each thread writes its own sector"))
    if bps is not None:
        ev.append(ctx.ev("gst_bytes_per_sector", "32 byte/sector when fully coalesced",
                         "partially written sectors cost full L2 write bandwidth"))
    if gst == 0.0:  # no LSU global stores (a TMA store epilogue, or none at all): nothing to waste
        return Waste(0.0, 0.0, ev, Confidence.HIGH, note="no global-store sectors through the LSU")
    if gst is not None and bps is not None:
        w = max(0.0, 1.0 - bps / SECTOR_BYTES)
        return Waste(w, gst * w, ev, Confidence.HIGH)
    if spr is not None:
        if spr <= IDEAL_SECTORS_PER_REQUEST_4B:
            return Waste(0.0, 0.0, ev, Confidence.MEDIUM)
        w = max(0.0, 1.0 - IDEAL_SECTORS_PER_REQUEST_4B / spr)
        return Waste(w, w * gst if gst else None, ev, Confidence.LOW if spr <= 16 else Confidence.MEDIUM,
                     note="assumes 4-byte stores")
    f = ctx.facts
    st = f.bytes_per_sector.get(("global", "store"))
    if st is not None:
        ev.append(ctx.from_rule(st, "gst_bytes_per_sector", "byte/sector", "32 when coalesced",
                                "bytes used per written sector"))
        w = max(0.0, 1.0 - st.value / SECTOR_BYTES)
        return Waste(w, None, ev, Confidence.MEDIUM, st.estimated_speedup, "MemoryCacheAccessPattern")
    if f.access_pattern_rule_seen:
        return Waste(0.0, 0.0, ev, Confidence.MEDIUM,
                     note="ncu's access-pattern rule ran and did not flag global stores")
    return None


def shared_conflict_waste(ctx: Context) -> Optional[Waste]:
    """Excess shared-memory wavefronts (bank conflicts) as a fraction of all shared wavefronts."""
    th, ideal = ctx.v("smem_wavefronts_theoretical"), ctx.v("smem_wavefronts_ideal")
    if th is not None and ideal is not None:
        w = max(0.0, 1.0 - ideal / th) if th > 0 else 0.0
        ev = [ctx.derived(
            "smem_excess_wavefronts_fraction",
            f"1 − {ctx.names('smem_wavefronts_ideal')} / {ctx.names('smem_wavefronts_theoretical')}",
            w, "fraction", "0 = conflict-free; NVIDIA flags ≥ 10%",
            "exact per-instruction count of wavefronts the access pattern adds (LDS.128 needing 4 "
            "wavefronts is ideal, not a conflict)")]
        ev += [ctx.ev("smem_wavefronts_theoretical", "smem_wavefronts_ideal", "wavefronts the pattern needs"),
               ctx.ev("smem_wavefronts_ideal", "—", "wavefronts a conflict-free pattern needs")]
        for k, why in (("smem_ld_conflicts", "bank-conflict counter, loads"),
                       ("smem_ld_wavefronts", "shared-load wavefronts"), ("smem_ld_inst", "shared-load instructions")):
            if ctx.v(k) is not None:
                ev.append(ctx.ev(k, "—", why))
        return Waste(w, max(0.0, th - ideal), ev, Confidence.HIGH)
    conf_parts = [ctx.v("smem_ld_conflicts"), ctx.v("smem_st_conflicts")]
    wf_parts = [ctx.v("smem_ld_wavefronts"), ctx.v("smem_st_wavefronts")]
    if None not in conf_parts and None not in wf_parts:
        c, wfs = sum(conf_parts), sum(wf_parts)  # type: ignore[arg-type]
        w = c / wfs if wfs > 0 else 0.0
        ev = [ctx.derived(
            "smem_conflict_fraction",
            f"({ctx.names('smem_ld_conflicts', 'smem_st_conflicts')}) / "
            f"({ctx.names('smem_ld_wavefronts', 'smem_st_wavefronts')})",
            w, "fraction", "NVIDIA's SharedMemoryConflicts rule flags ≥ 10%",
            "each conflict is an extra wavefront through the shared-memory data pipe (the hardware "
            "counter is approximate: a conflict-free kernel can show a few)")]
        return Waste(w, c, ev, Confidence.HIGH)
    f = ctx.facts
    if f.shared_excess_wavefronts is not None:
        n = f.shared_excess_wavefronts
        ev = [ctx.from_rule(n, "smem_excess_wavefronts_fraction", "fraction", "0 = conflict-free",
                            "ncu's per-instruction count of excessive shared wavefronts")]
        return Waste(n.value, None, ev, Confidence.MEDIUM, n.estimated_speedup, "UncoalescedSharedAccess")
    if f.shared_conflicts:
        op, n = max(f.shared_conflicts.items(), key=lambda kv: kv[1].value)
        ev = [ctx.from_rule(n, f"smem_{'ld' if op == 'load' else 'st'}_conflict_fraction", "fraction",
                            "NVIDIA flags ≥ 10%", f"share of shared {op} wavefronts that are conflicts "
                            f"({fmt(f.shared_nway.get(op))}-way on average)")]
        return Waste(n.value, None, ev, Confidence.MEDIUM, n.estimated_speedup, "SharedMemoryConflicts")
    return None


def memory_inst_per_ffma(ctx: Context, ffma: Quantity) -> Optional[Quantity]:
    """Warp-level LSU instructions (global + shared + local loads/stores) per warp-level FFMA."""
    parts = {s: ctx.v(s) for s in ("gld_requests", "gst_requests", "smem_ld_inst", "smem_st_inst")}
    if any(v is None for v in parts.values()) or ffma.value <= 0:
        return None
    local = (ctx.v("local_ld_inst") or 0.0) + (ctx.v("local_st_inst") or 0.0)
    n = sum(parts.values()) + local  # type: ignore[arg-type]
    r = n / ffma.value
    ev = ctx.derived("lsu_inst_per_ffma", "(global ld/st requests + shared ld/st instructions + local) "
                     "/ warp-level FFMA", r, "inst/FFMA",
                     f"{fmt(balance_ratio(ctx))} at FMA-pipe balance (1 LSU instruction vs 4 warp-FFMA "
                     "per cycle per SM)", "above the balance ratio the LSU, not the FMA pipe, sets the pace")
    return Quantity(r, ffma.evidence + [ev])


def describe_share(x: float) -> str:
    return pct(x)
