"""Units near their limit first: the primary of a kernel whose DRAM, L2, tensor pipe or a math pipe runs
at high throughput is that unit — unless a cause explains where that unit's load comes from.

The rule families estimate, for each possible cause, how much of the run a fix could recover; that
ranking decides among causes of a *busy* unit. But a cause in a unit that is not the limit recovers
nothing, and a unit at its limit doing necessary work is the diagnosis itself (nothing a code change
inside the kernel wins back). So before the ranking:

1. Tensor pipe (HMMA/WGMMA, IMMA or DMMA) ≥ 80% of peak (NVIDIA's high-throughput line): tensor_bound,
   at limit. The shared-memory and L1 traffic of such a kernel is operand delivery (WGMMA reads its
   operands from shared memory, TMA writes them there), not a problem to fix.
2. DRAM at or above its high-throughput line (``sol.DRAM_HIGH_PCT``), or co-limiting with the SM and
   busier than it relative to what DRAM can sustain: dram_bound, unless
   excess sectors (uncoalesced loads or stores) or local-memory traffic make up at least half of what
   reaches L2/DRAM — then that cause is the primary and names DRAM as the unit it saturates.
3. L2 at ≥ 80% and clearly busier than DRAM (triage): the same, with atomics as a further cause.
4. A math pipe (FMA, FP64, ALU, XU) or the issue slots at ≥ 80% — or the issue slots carrying a busy
   SM — with a math pipe the busiest pipe: compute_bound (issue-bound when no pipe is near peak) —
   unless fewer than 24 of 32 threads are active per instruction (NVIDIA's ThreadDivergence line):
   then warp_divergence, since the pipe is busy doing masked-off lanes.
5. Latency regime: warps waiting on the L1TEX scoreboard while local memory is most of the L1
   global+local traffic wait on local memory: local_memory.

Anything else goes to the ranking (``diagnose._choose_primary``).
"""

from __future__ import annotations

import math
from typing import Optional

from gemmlab.analysis import derived as D
from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules.divergence import THREADS_FLAG
from gemmlab.analysis.rules.launch import launch_fill, launch_waves
from gemmlab.analysis.rules.sol import CO_LIMIT_POINTS, DRAM_HIGH_PCT, DRAM_SUSTAINABLE, HIGH_PCT, Triage
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.analysis.waves import tail_idle_bound

# A waste cause explains a unit's load when at least half of the sectors reaching it are excess: then
# fixing the access pattern at least halves that unit's traffic, more than any other change could. This
# is for the L2-level estimate, which counts a sector requested twice (half-used by two instructions,
# the second an L2 hit) as excess although DRAM moved it once.
EXPLAINS_SHARE = 0.5
# Measured DRAM bytes against the bytes instructions used are exact: NVIDIA's 10% excess line applies.
WASTE_SHARE_EXACT = 0.10

TENSOR_PIPES = ("pipe_tensor_pct", "pipe_tensor_imma_pct", "pipe_tensor_dmma_pct")
MATH_PIPES = ("pipe_fma_pct", "pipe_fp64_pct", "pipe_alu_pct", "pipe_xu_pct")
OTHER_PIPES = ("pipe_lsu_pct",)


def tensor_pipe(ctx: Context) -> Optional[tuple[str, float]]:
    """The busiest tensor pipe (short name, % of peak), or None when the export has none."""
    vals = [(s, ctx.v(s)) for s in TENSOR_PIPES if ctx.v(s) is not None]
    return max(vals, key=lambda kv: kv[1]) if vals else None


def _excess_share_at_l2(ctx: Context) -> tuple[float, Optional[C]]:
    """The share of L2 sectors that are excess (from uncoalesced loads, stores, or local memory) and
    which cause contributes most."""
    l2_total = ctx.v("l2_sectors_total")
    if not l2_total:
        return 0.0, None
    parts: list[tuple[float, C]] = []
    ld, st = D.global_load_waste(ctx), D.global_store_waste(ctx)
    # only a measured waste can explain a unit at its limit; a low-confidence one assumes 4-byte accesses
    ld = ld if ld is not None and ld.confidence != Confidence.LOW else None
    st = st if st is not None and st.confidence != Confidence.LOW else None
    if ld is not None and ld.excess:
        # loads that hit in L1 never reach L2 (a 16-byte-per-thread pattern split over two instructions
        # re-reads its sector from L1)
        reach = 1.0 - (ctx.v("gld_hit_rate") or 0.0) / 100.0
        parts.append((ld.excess * reach, C.UNCOALESCED_GLOBAL_LOADS))
    if st is not None and st.excess:
        parts.append((st.excess, C.UNCOALESCED_GLOBAL_STORES))
    loc = (ctx.v("local_ld_sectors") or 0.0) + (ctx.v("local_st_sectors") or 0.0)
    if loc:
        parts.append((loc * (1.0 - (ctx.v("l1_hit_pct") or 0.0) / 100.0), C.LOCAL_MEMORY))
    if not parts:
        return 0.0, None
    total = sum(p[0] for p in parts)
    return min(1.0, total / l2_total), max(parts, key=lambda p: p[0])[1]


def _excess_share_at_dram(ctx: Context) -> Optional[tuple[float, Optional[C]]]:
    """The share of DRAM bytes that no load or store instruction used: DRAM bytes against the useful bytes
    of the LSU's global accesses (sectors less their excess). Exact where the counters exist; None when a
    kernel moves data the LSU counters do not see (TMA, bulk copies) or the counters are missing."""
    rd, wr = ctx.v("dram_bytes_read"), ctx.v("dram_bytes_write")
    gld, gst = ctx.v("gld_sectors"), ctx.v("gst_sectors")
    if rd is None or wr is None or not gld or gst is None or rd + wr <= 0:
        return None
    ld, st = D.global_load_waste(ctx), D.global_store_waste(ctx)
    if ld is None or st is None or ld.excess is None or st.excess is None:
        return None
    useful = D.SECTOR_BYTES * ((gld - ld.excess) + (gst - st.excess))
    share = min(1.0, max(0.0, 1.0 - useful / (rd + wr)))
    cause = C.UNCOALESCED_GLOBAL_LOADS if ld.excess >= st.excess else C.UNCOALESCED_GLOBAL_STORES
    if (ctx.v("local_ld_sectors") or 0.0) + (ctx.v("local_st_sectors") or 0.0) > gld + gst:
        cause = C.LOCAL_MEMORY  # the unused bytes are local-memory traffic, not global accesses
    return share, cause


def _excess_share_at_l1(ctx: Context) -> tuple[float, Optional[C]]:
    """The share of L1/TEX data-pipe work that is excess sectors: each kind of global or local traffic's
    share of L1's work times the excess fraction of its sectors (local traffic counts whole: it would
    not exist with the array in registers)."""
    shares = D.l1_shares(ctx)
    if shares is None or shares.confidence == Confidence.LOW:
        return 0.0, None
    parts: list[tuple[float, C]] = []
    for share, waste, cause in ((shares.global_ld, D.global_load_waste(ctx), C.UNCOALESCED_GLOBAL_LOADS),
                                (shares.global_st, D.global_store_waste(ctx), C.UNCOALESCED_GLOBAL_STORES)):
        if waste is not None and waste.confidence != Confidence.LOW and waste.fraction:
            parts.append((share * waste.fraction, cause))
    if shares.local:
        parts.append((shares.local, C.LOCAL_MEMORY))
    if not parts:
        return 0.0, None
    return min(1.0, sum(p[0] for p in parts)), max(parts, key=lambda p: p[0])[1]


def _explained(ctx: Context, findings: dict[C, Finding], unit: str, busy: float) -> Optional[Finding]:
    exact = _excess_share_at_dram(ctx) if unit == "DRAM" else None
    if exact is not None:
        # measured bytes: NVIDIA's 10% excess line (UncoalescedGlobalAccess) applies as it stands
        share, cause = exact
        if cause is None or share < WASTE_SHARE_EXACT or cause not in findings:
            return None
        return _name(findings[cause], unit, busy, share, "DRAM bytes no instruction used")
    share, cause = _excess_share_at_l1(ctx) if unit == "L1/TEX" else _excess_share_at_l2(ctx)
    if cause is None or share < EXPLAINS_SHARE or cause not in findings:
        return None
    what = "excess share of L1's data-pipe work" if unit == "L1/TEX" else "excess share of the L2 sectors"
    return _name(findings[cause], unit, busy, share, what)


def _name(f: Finding, unit: str, busy: float, share: float, what: str) -> Finding:
    f.impact = max(f.impact, busy * share)
    f.impact_basis = (f"{unit} busy {pct(busy)} × {what} {pct(share)} "
                      "(fixing the pattern removes that traffic from the unit at its limit)")
    f.summary = f.summary.rstrip(".") + f"; this waste is {pct(share)} of the traffic of {unit}, which runs at its limit."
    f.at_limit = False
    return f


# "Most SMs sit idle for most of the run": half of them or more. Below that line the busy SMs are the
# majority and their own stalls are the story; at or above it the idle SMs are the first fact (NVIDIA's
# LaunchConfiguration rule flags any grid below the SM count; latency on the busy SMs is then a symptom).
IDLE_LEADS = 0.5
LAUNCH_SHAPE = (C.GRID_TOO_SMALL, C.TAIL_EFFECT)


def sm_active_fraction(ctx: Context) -> Optional[float]:
    """Measured share of the run the average SM had work (sm__cycles_active / sm__cycles_elapsed)."""
    active, elapsed = ctx.v("sm_active_cycles"), ctx.v("sm_cycles_elapsed")
    return active / elapsed if active is not None and elapsed else None


def idle_sms(ctx: Context, tri: Triage, found: list[Finding]) -> Optional[Finding]:
    """In the latency regime, the launch-shape finding when most SMs idle for most of the run: the grid
    leaves half the SMs without a block, or the SMs have work for less than half the elapsed cycles."""
    launch = [f for f in found if f.category in LAUNCH_SHAPE]
    if tri.regime != "latency" or not launch:
        return None
    grid, sms = ctx.v("grid_size"), ctx.v("sm_count")
    idle = (sms - grid) / sms if grid is not None and sms and grid < sms else 0.0
    active = sm_active_fraction(ctx)
    if idle >= IDLE_LEADS or (active is not None and active < 1.0 - IDLE_LEADS):
        f = max(launch, key=lambda f: f.impact)
        if f.category == C.TAIL_EFFECT and idle < IDLE_LEADS and active is not None:
            short = _short_launch(ctx, tri, found, active)
            if short is not None:
                return short
        if active is not None:
            f.impact = max(f.impact, 1.0 - active)
            f.impact_basis += f"; the SMs idle {pct(1 - active)} of the elapsed cycles (measured)"
            f.evidence.append(ctx.derived("sm_idle_share", "1 − sm__cycles_active / sm__cycles_elapsed", 1 - active,
                                          "fraction", f"{IDLE_LEADS:.0%}", "SMs with nothing to run"))
        return f
    return None


def _short_launch(ctx: Context, tri: Triage, found: list[Finding], active: float) -> Optional[Finding]:
    """SMs idle for more of the run than a partial last wave can explain: NVIDIA's LaunchConfiguration bound
    on a tail is 1 / (1 + floor(w)) of the run, so the rest of the idle time is the launch ramping up and
    draining — a launch too short to keep the GPU filled, with too little work in flight to hide latency.
    latency_bound (the waiting finding when the stalls name one), the tail listed beside it; None when the
    tail's bound covers the measured idle share."""
    w, _ = launch_waves(ctx)
    # a clustered launch's full waves leave idle the slots its whole clusters cannot fill: that idle
    # time is the launch's shape too (waves.tail_idle_bound)
    bound = tail_idle_bound(math.floor(w), launch_fill(ctx)) if w is not None else None
    if bound is None or 1.0 - active <= bound:
        return None
    ev = ctx.derived("sm_idle_share", "1 − sm__cycles_active / sm__cycles_elapsed", 1 - active, "fraction",
                     f"{pct(bound)} (a partial last wave's most, NVIDIA LaunchConfiguration)",
                     "SMs with nothing to run for longer than the tail explains: ramp-up and drain")
    dur = ctx.v("duration")
    when = f" {dur / 1000:.3g} µs" if dur else ""
    note = (f"the SMs have work {pct(active)} of the{when} run, more idle time than the partial last wave "
            f"explains (at most {pct(bound)} with {fmt(w)} waves): the launch is too short to fill the GPU "
            "for long, ramp-up and drain dominate, and too little work is in flight to hide latency")
    f = next((f for f in found if f.category == C.LATENCY_BOUND), None)
    if f is not None:
        f.summary = f.summary.rstrip(".") + "; " + note + "."
        f.evidence.append(ev)
        return f
    return Finding(
        C.LATENCY_BOUND, f"Latency bound, short launch: {note[0].lower()}{note[1:]} ({tri.summary()}).",
        Confidence.MEDIUM, 1.0 - active, f"the SMs idle {pct(1 - active)} of the elapsed cycles (measured)",
        [ev] + list(tri.evidence[:2]),
        ["Give each launch more work: fuse this kernel with its neighbours, batch the calls, or capture the "
         "sequence in a CUDA graph so launch ramp-up and drain stop dominating.",
         "Inside the kernel, more independent work per thread keeps more memory requests in flight."])


def choose(ctx: Context, tri: Triage, found: list[Finding]) -> Optional[Finding]:
    """The primary decided by a unit at its limit, or None to leave the choice to the ranking."""
    if tri.regime == "latency":
        return idle_sms(ctx, tri, found) or latency_cause(ctx, tri, found)
    if tri.regime != "throughput":
        return None
    findings = {f.category: f for f in found}
    tensor = tensor_pipe(ctx)
    if tensor is not None and tensor[1] >= HIGH_PCT and C.TENSOR_BOUND in findings:
        f = findings[C.TENSOR_BOUND]
        f.at_limit = True
        return f
    dram, l2, sm = tri.pct.get("dram"), tri.pct.get("l2"), tri.pct.get("sm")
    # DRAM leads when at its high-throughput line, or when, measured against what it can sustain, it
    # is busier than the SM it shares the limit with (co-limited kernels: a norm or softmax pass)
    # — but not below its own line while L2 runs at its line and clearly busier: L2 is then the unit at its limit
    l2_at_line = (l2 is not None and "l2" in tri.hot and l2 >= HIGH_PCT and dram is not None
                  and l2 >= dram + CO_LIMIT_POINTS)
    dram_leads = dram is not None and "dram" in tri.hot and (
        dram >= DRAM_HIGH_PCT or (sm is not None and dram / DRAM_SUSTAINABLE >= sm and not l2_at_line))
    if dram_leads:
        cause = _explained(ctx, findings, "DRAM", dram / 100.0)
        if cause is not None:
            return cause
        f = findings.get(C.DRAM_BOUND)
        exact = _excess_share_at_dram(ctx)
        if f is not None and exact is not None and dram >= DRAM_HIGH_PCT and exact[0] < WASTE_SHARE_EXACT:
            # the measured DRAM bytes are (nearly) all used by instructions: necessary traffic at the limit,
            # whatever the request-level sector counts suggest
            f.at_limit = True
        return f
    if l2 is not None and l2 >= HIGH_PCT and "l2" in tri.hot:
        cause = _explained(ctx, findings, "L2", l2 / 100.0)
        if cause is None and C.ATOMIC_CONTENTION in findings and findings[C.ATOMIC_CONTENTION].impact >= 0.05:
            cause = findings[C.ATOMIC_CONTENTION]
        return cause or findings.get(C.L2_BOUND)
    l1 = tri.pct.get("l1")
    if l1 is not None and l1 >= HIGH_PCT and "l1" in tri.hot:
        # L1/TEX at its limit with most of its work excess sectors: the access pattern is the cause, and
        # it names L1 as the unit it saturates (otherwise the ranking decides among L1's causes)
        cause = _explained(ctx, findings, "L1/TEX", l1 / 100.0)
        if cause is not None:
            return cause
    return _compute(ctx, tri, findings)


def _compute(ctx: Context, tri: Triage, findings: dict[C, Finding]) -> Optional[Finding]:
    pipes = {s: ctx.v(s) for s in MATH_PIPES + OTHER_PIPES if ctx.v(s) is not None}
    if not pipes:
        return None
    top, top_v = max(pipes.items(), key=lambda kv: kv[1])
    issue = ctx.v("issue_active_pct")
    sm = tri.pct.get("sm")
    # the issue slots carry the SM when they are its busiest sub-unit (within the co-limit margin of
    # sm__throughput, which is the max of its sub-units): the SM is busy issuing instructions
    issue_carries = (issue is not None and sm is not None and "sm" in tri.hot and issue >= sm - CO_LIMIT_POINTS)
    if top not in MATH_PIPES or not (top_v >= HIGH_PCT or (issue is not None and issue >= HIGH_PCT) or issue_carries):
        return None
    threads = ctx.v("thread_inst_per_inst")
    if threads is not None and threads < THREADS_FLAG and C.WARP_DIVERGENCE in findings:
        return findings[C.WARP_DIVERGENCE]
    f = findings.get(C.COMPUTE_BOUND)
    if f is None:
        f = _issue_bound(ctx, top, top_v, issue)
    if top_v >= HIGH_PCT:
        f.at_limit = True
    elif issue is not None and issue >= HIGH_PCT and "schedulers issue" not in f.summary:
        f.summary = f.summary.rstrip(".") + (f"; the schedulers issue on {fmt(issue)}% of cycles, so instruction "
                                             "issue, not a stall, is the limit.")
    if f.confidence == Confidence.LOW:
        f.confidence = Confidence.MEDIUM
    return f


PIPE_LABELS = {"pipe_fma_pct": "FMA", "pipe_fp64_pct": "FP64", "pipe_alu_pct": "ALU", "pipe_xu_pct": "XU"}


def _issue_bound(ctx: Context, top: str, top_v: float, issue: Optional[float]) -> Finding:
    """compute_bound when the SM is busy issuing instructions that no single pipe saturates."""
    ev = [ctx.ev_any(top, f"{HIGH_PCT:.0f}% (NVIDIA high-throughput threshold)", "the busiest math pipe")]
    if issue is not None:
        ev.append(ctx.ev("issue_active_pct", f"{HIGH_PCT:.0f}%: beyond it issue bandwidth, not stalls, limits",
                         "share of cycles a scheduler issued an instruction"))
    idle = None if issue is None else max(0.0, 1.0 - issue / 100.0)
    summary = (f"Compute bound (instruction issue): the schedulers issue on {fmt(issue)}% of cycles and the "
               f"busiest pipe is {PIPE_LABELS[top]} at {fmt(top_v)}%: the kernel is limited by how many "
               "instructions it issues, spread over several pipes.")
    return Finding(
        C.COMPUTE_BOUND, summary, Confidence.MEDIUM, idle or 0.0,
        "idle issue slots: what hiding the remaining stalls could recover (fewer instructions is the other lever)",
        ev, ["Issue fewer instructions per result: vectorise (float4/half2), hoist index arithmetic out of loops, "
             "unroll, and use intrinsics for special functions.",
             "Check the instruction mix (ncu InstructionStats / the SASS) for index math and conversions."])


def latency_cause(ctx: Context, tri: Triage, found: list[Finding]) -> Optional[Finding]:
    """In the latency regime: warps waiting on the L1TEX scoreboard wait on local memory when local
    accesses are most of the L1 global+local traffic — the local-memory finding names the cause."""
    if tri.regime != "latency":
        return None
    f = next((f for f in found if f.category == C.LOCAL_MEMORY), None)
    if f is None:
        return None
    loc = (ctx.v("local_ld_sectors") or 0.0) + (ctx.v("local_st_sectors") or 0.0)
    glob = (ctx.v("gld_sectors") or 0.0) + (ctx.v("gst_sectors") or 0.0)
    if ctx.has("local_ld_sectors", "local_st_sectors"):
        return f if loc > 0 and loc / (loc + glob) >= EXPLAINS_SHARE else None
    # no sector counts (details page): ncu's own rules say local traffic exists and its CPIStall rule
    # names the L1TEX scoreboard (global/local loads) as the top wait; the likelier cause, medium confidence
    top = max(ctx.facts.stalls.items(), key=lambda kv: kv[1].value, default=None)
    if top is not None and top[0] == "long_scoreboard":
        f.confidence = Confidence.MEDIUM
        f.summary = f.summary.rstrip(".") + ("; warps wait mostly on the L1TEX scoreboard, which local loads "
                                             "feed: the likelier cause of the waits.")
        return f
    return None


# What can explain the load of a unit at its limit (a fix that removes part of that unit's work).
EXPLAINS: dict[C, frozenset] = {
    C.DRAM_BOUND: frozenset({C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES, C.LOCAL_MEMORY}),
    C.L2_BOUND: frozenset({C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES, C.LOCAL_MEMORY,
                           C.ATOMIC_CONTENTION}),
    C.L1_LSU_BOUND: frozenset({C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES, C.LOCAL_MEMORY}),
    C.SHARED_MEMORY_THROUGHPUT: frozenset({C.SHARED_BANK_CONFLICTS}),
    C.COMPUTE_BOUND: frozenset({C.WARP_DIVERGENCE, C.INSTRUCTION_OVERHEAD}),
    C.TENSOR_BOUND: frozenset(),
}
OCCUPANCY = frozenset({C.OCCUPANCY_REGISTERS, C.OCCUPANCY_SHARED_MEMORY, C.OCCUPANCY_BLOCK_SIZE})


def temper(ctx: Context, tri: Triage, primary: Finding, rest: list[Finding]) -> None:
    """Secondary findings of a kernel whose primary unit runs at its limit: what a fix could win is at
    most that unit's headroom unless the finding explains the unit's load, so it cannot be "high"; more
    warps (occupancy) cannot speed up a pipe or issue slots already near peak."""
    if not primary.at_limit or primary.category not in EXPLAINS:
        return
    busy = [v for v in (tri.busy(u) for u in tri.hot) if v is not None]
    tensor = tensor_pipe(ctx)
    issue = ctx.v("issue_active_pct")
    near_peak = (tensor is not None and tensor[1] >= HIGH_PCT) or (issue is not None and issue >= HIGH_PCT)
    headroom = max(0.0, 1.0 - max(busy)) if busy else 0.0
    for f in rest:
        if f.category in EXPLAINS[primary.category]:
            continue
        if primary.category == C.TENSOR_BOUND and f.category in (C.SHARED_MEMORY_THROUGHPUT, C.L1_LSU_BOUND):
            # WGMMA reads its operands from shared memory and TMA fills it: that traffic feeds the pipe at its limit
            f.impact, f.confidence = 0.0, Confidence.LOW
            f.impact_basis = "none: operand delivery to a tensor pipe at its limit, not a separate problem"
            continue
        if f.category in OCCUPANCY and (near_peak or primary.category in (C.TENSOR_BOUND, C.COMPUTE_BOUND)):
            f.impact, f.confidence = 0.0, Confidence.LOW
            f.impact_basis = ("none: the pipe or the issue slots already run near peak, so more resident warps "
                              "cannot make the kernel faster")
            continue
        if f.impact > headroom or f.confidence == Confidence.HIGH:
            f.impact = min(f.impact, headroom)
            f.confidence = f.confidence.cap(Confidence.MEDIUM)
            f.impact_basis += f" (capped at the headroom {pct(headroom)} of the unit at its limit)"
