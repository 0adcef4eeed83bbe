"""Warp-state stalls: why warps are not issuing, when no unit is saturated.

Two places where stalls name the cause: the latency regime (no unit above 60%), and an SM that is
the busiest unit but below NVIDIA's high-throughput level (80%) while its schedulers leave issue
slots idle — there a latency reason above 30% of the CPI explains the idle slots, so it, rather than
"the pipe is below peak", is the thing to fix (``pipes.py`` names the pipe's level either way).

``smsp__average_warp_latency_per_inst_issued`` (CPI) is the sum over stall reasons of the cycles a
warp spends in each per issued instruction. NVIDIA's CPIStall rule reports a reason when the
schedulers issue on fewer than 0.8 of their cycles and the reason accounts for more than 30% of the
CPI; gemmlab uses the same two thresholds.

Impact of a stall reason: its share of the CPI × the idle share of issue slots (1 − issue active),
capped by the headroom of the busiest unit (a latency fix cannot push a unit past 100%).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.derived import uses_wgmma
from gemmlab.analysis.evidence import Confidence, Evidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import HIGH_PCT
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.profile import metrics as M

CATEGORIES = (C.LATENCY_BOUND, C.BARRIER_STALLS)
NEEDS = {
    "warp_cpi": "cycles between a warp's instructions: the total the stall reasons divide",
    "issue_active": "issue slots used per scheduler: stalls only matter when it is below 0.8",
    "stall_long_scoreboard": "waiting on global/local memory: memory latency",
    "stall_barrier": "waiting at __syncthreads()",
    "stall_mio_throttle": "MIO queue full: shared-memory instruction pressure",
    "stall_short_scoreboard": "waiting on shared memory / MIO results",
    "stall_lg_throttle": "LSU queue for global/local full: too many memory instructions (atomics, spills)",
}

# ``selected`` (the cycle a warp issues) and ``not_selected`` (eligible, but another warp issued) are
# not stalls: in them the warp was ready. The other reasons are the cycles it was not eligible.
ELIGIBLE_REASONS = ("selected", "not_selected")

ISSUE_BUSY = 0.8  # NVIDIA CPIStall: stalls matter when fewer than 0.8 instructions issue per cycle
STALL_SHARE = 0.3  # NVIDIA CPIStall: a reason is reported above 30% of the CPI

# Stall reasons that mean "waiting for latency to pass" (not a saturated unit).
LATENCY_REASONS = {
    "long_scoreboard": "global/local memory latency (L1TEX scoreboard)",
    "wait": "fixed-latency dependencies between instructions",
    "short_scoreboard": "shared-memory / MIO result latency",
    "membar": "memory barriers (__threadfence)",
    "no_instruction": "instruction fetch (i-cache misses or a very short kernel)",
    "branch_resolving": "branch target resolution",
    "dispatch_stall": "dispatch conflicts",
    "sleeping": "nanosleep / blocked threads",
    "drain": "outstanding stores at warp exit",
    "imc_miss": "constant-cache misses",
    # queue-full reasons with no busy unit: many long-latency operations in flight
    "lg_throttle": "a full LSU queue for global/local memory (many outstanding memory instructions)",
    "mio_throttle": "a full MIO queue (shared memory, special functions, dynamic branches)",
    "tex_throttle": "a full texture queue",
    "math_pipe_throttle": "a busy math pipe",
}


@dataclass
class Stall:
    reason: str
    cycles: float
    share: float  # of the CPI
    evidence: Evidence
    from_rule: bool


def cpi(ctx: Context) -> Optional[float]:
    v = ctx.v("warp_cpi")
    return v if v is not None else ctx.facts.stall_cpi


def stall(ctx: Context, reason: str) -> Optional[Stall]:
    """One stall reason's cycles and share of the CPI with its evidence (built once per launch)."""
    key = ("stall", reason)
    if key not in ctx.memo:
        ctx.memo[key] = _stall(ctx, reason)
    return ctx.memo[key]


def _stall(ctx: Context, reason: str) -> Optional[Stall]:
    total = cpi(ctx)
    cyc = ctx.v(f"stall_{reason}")
    if cyc is not None and total:
        ev = ctx.ev(f"stall_{reason}", f"{STALL_SHARE:.0%} of the CPI ({fmt(total)} cycles) "
                    "(NVIDIA CPIStall)", f"share {pct(cyc / total)} of the cycles between a warp's instructions")
        return Stall(reason, cyc, cyc / total, ev, False)
    num = ctx.facts.stalls.get(reason)
    if num is not None and total:
        ev = ctx.from_rule(num, f"stall_{reason}", "cycle", f"{STALL_SHARE:.0%} of the CPI ({fmt(total)})",
                           "ncu's CPIStall rule reported this reason")
        return Stall(reason, num.value, num.value / total, ev, True)
    return None


def ineligible_stalls(ctx: Context) -> list[Stall]:
    """Every stall reason present except ``selected``/``not_selected``, largest first: the cycles a
    warp was not eligible to issue."""
    reasons = [r for r in M.STALL_REASONS if r not in ELIGIBLE_REASONS]
    found = [s for s in (stall(ctx, r) for r in reasons) if s is not None]
    return sorted(found, key=lambda s: -s.cycles)


def sm_below_high(tri) -> bool:
    """The SM is a hot unit of a throughput-limited kernel but below NVIDIA's high-throughput level:
    the regime where idle issue slots (stalls) can still explain the gap to peak."""
    sm = tri.busy("sm")
    return tri.regime == "throughput" and "sm" in tri.hot and sm is not None and sm < HIGH_PCT / 100.0


# A unit's own back-pressure: a warp stalled on these waits for the busy unit itself, not for latency.
OWN_REASONS = {"l1": ("mio_throttle", "short_scoreboard", "lg_throttle", "tex_throttle"),
               "l2": ("lg_throttle", "drain"), "memory": ("lg_throttle", "drain", "mio_throttle")}


def unit_below_high(tri) -> bool:
    """Every hot unit of a throughput-limited kernel is an on-chip memory unit (L1/TEX, L2) or the SM, and
    each runs below its high-throughput line: busy, not at its limit — the stall table and the issue slots
    then decide between the unit and waiting (DRAM has its own, lower line and its own rule)."""
    if tri.regime != "throughput" or not tri.hot or "dram" in tri.hot:
        return False
    return all(u in ("l1", "l2", "sm", "memory") and (tri.busy(u) or 0.0) < HIGH_PCT / 100.0 for u in tri.hot)


def waiting_shares(ctx: Context, barrier: bool = False) -> list[float]:
    """The CPI shares of the latency reasons (``LATENCY_REASONS``), or of the barrier alone."""
    reasons = ("barrier",) if barrier else tuple(LATENCY_REASONS)
    return [s.share for s in (stall(ctx, r) for r in reasons) if s is not None]


def own_share(ctx: Context, tri) -> float:
    """The share of the CPI warps spend on the hot units' own back-pressure (``OWN_REASONS``)."""
    reasons = {r for u in tri.hot for r in OWN_REASONS.get(u, ())}
    return sum(s.share for s in (stall(ctx, r) for r in reasons) if s is not None)


def spread_waiting_share(ctx: Context, tri) -> float:
    """The CPI share of every latency reason that is not the hot units' own back-pressure nor a busy math
    pipe throttling its warps: the waiting that more overlap (or more warps) would hide."""
    own = {r for u in tri.hot for r in OWN_REASONS.get(u, ())} | {"math_pipe_throttle"}
    return sum(s.share for s in (stall(ctx, r) for r in LATENCY_REASONS if r not in own) if s is not None)


# Queue-full reasons: the warp waits for a unit to accept work, which more warps cannot hide (they queue too).
THROTTLES = ("lg_throttle", "mio_throttle", "tex_throttle", "math_pipe_throttle")


def hideable_share(ctx: Context) -> Optional[float]:
    """The CPI share of the waits more resident warps could overlap (latency and barrier waits, not the
    queue-full throttles), or None when the export has no stall reasons."""
    shares = [s.share for s in (stall(ctx, r) for r in (*LATENCY_REASONS, "barrier") if r not in THROTTLES)
              if s is not None]
    return min(1.0, sum(shares)) if shares else None


def stall_evidence(ctx: Context, reasons: Iterable[str], why: str) -> list[Evidence]:
    """Supporting evidence for other rules: the given stall reasons when they are a large share."""
    out = []
    for r in reasons:
        s = stall(ctx, r)
        if s is not None and s.share > STALL_SHARE:
            out.append(Evidence(s.evidence.metric, s.evidence.ncu_name, s.evidence.value, s.evidence.unit,
                                s.evidence.compared_with, f"{why}: {pct(s.share)} of the CPI",
                                s.evidence.source))
    return out


def issue_active(ctx: Context) -> Optional[float]:
    v = ctx.v("issue_active")
    if v is None and ctx.facts.issue_every is not None and ctx.facts.issue_every.value > 0:
        v = 1.0 / ctx.facts.issue_every.value
    return v


def latency_impact(share: float, issue: Optional[float], headroom: Optional[float]) -> tuple[float, str]:
    idle = 1.0 - issue if issue is not None else 1.0
    v = share * idle
    basis = f"stall share {pct(share)} × idle issue slots {pct(idle)}"
    if headroom is not None and v > headroom:
        v, basis = headroom, basis + f", capped by the busiest unit's headroom {pct(headroom)}"
    return v, basis


def evaluate(ctx: Context, tri) -> Outcome:
    out = Outcome("stalls", CATEGORIES, evaluated=False)
    total = cpi(ctx)
    issue = issue_active(ctx)
    have_reasons = any(ctx.v(f"stall_{r}") is not None for r in ("long_scoreboard", "barrier")) \
        or bool(ctx.facts.stalls)
    out.evaluated = total is not None and issue is not None and have_reasons
    for k in ("warp_cpi", "issue_active", "stall_long_scoreboard", "stall_barrier", "stall_mio_throttle",
              "stall_short_scoreboard", "stall_lg_throttle"):
        if ctx.v(k) is None:
            out.needs[k] = NEEDS[k]
    if not out.evaluated:
        return out
    # NVIDIA CPIStall: only when the schedulers are not already issuing most cycles
    if issue >= ISSUE_BUSY:
        return out
    conf = Confidence.HIGH if ctx.v("warp_cpi") is not None else Confidence.MEDIUM
    issue_ev = (ctx.ev("issue_active", f"{ISSUE_BUSY} (NVIDIA CPIStall)",
                       "below 0.8 the schedulers have idle slots that stalls explain")
                if ctx.v("issue_active") is not None else
                ctx.from_rule(ctx.facts.issue_every, "cycles_per_issue", "cycle", "1.25 (= 0.8 issue/cycle)",
                              "the schedulers have idle issue slots"))
    cpi_ev = (ctx.ev("warp_cpi", "—", "the total the stall reasons divide")
              if ctx.v("warp_cpi") is not None else None)
    headroom = tri.headroom
    latency_regime = tri.regime in ("latency", "unknown")
    sm_regime = sm_below_high(tri)
    below_high = unit_below_high(tri)
    own = {r for u in tri.hot for r in OWN_REASONS.get(u, ())} if below_high else set()

    bar = stall(ctx, "barrier")
    if bar is not None and bar.share > STALL_SHARE:
        impact, basis = latency_impact(bar.share, issue, headroom)
        block = ctx.v("block_size")
        recs = ["Find which __syncthreads() the warps wait at (ncu Source page, stall_barrier column) and "
                "balance the work before it; remove barriers that protect nothing.",
                "Double-buffer shared tiles so one barrier per tile iteration suffices and loads overlap math."]
        if block is not None and block >= 512:
            recs.append(f"Blocks of {fmt(block)} threads wait for their slowest warp; smaller blocks "
                        "(128–256 threads) wait less at each barrier.")
        summary = f"Warps spend {pct(bar.share)} of their cycles waiting at barriers."
        evidence = [bar.evidence, issue_ev] + ([cpi_ev] if cpi_ev else [])
        if uses_wgmma(ctx):
            # On Hopper a warp in wgmma.wait_group (SASS WARPGROUP.DEPBAR) waiting for its own
            # warpgroup MMAs is sampled as a barrier stall too: in gemmlab's fp8 dispatch kernel at
            # 8192 x 4800 x 1600 on the H100, 2414 of the 2426 warp samples on its WARPGROUP.DEPBAR
            # line were "barrier" (docs/results/tc-epilogue-2026-11-27). The counter cannot tell the
            # two apart; the Source page can.
            summary += (" The kernel issues warpgroup MMAs (wgmma), and a warp waiting in "
                        "wgmma.wait_group for its own MMAs counts as a barrier stall too: part of "
                        "this may be the tensor pipe's own work.")
            evidence.append(ctx.ev("pipe_tensor_gmma_pct", "> 0", "the kernel issues wgmma"))
            recs = ["Split the barrier samples on the Source page (or `gemmlab analyze` of a "
                    "-lineinfo .ncu-rep): those on WARPGROUP.DEPBAR wait for the warpgroup's MMAs - "
                    "keep more MMAs in flight and overlap the work between tiles (the epilogue) "
                    "with them; those on BAR.SYNC or named barriers wait for other warps - balance "
                    "the work before them."] + recs[2:]
        out.findings.append(Finding(
            C.BARRIER_STALLS, summary,
            conf.cap(Confidence.MEDIUM) if bar.from_rule else conf, impact, basis, evidence, recs))

    atomics = (ctx.v("global_atom_inst") or 0.0) + (ctx.v("global_red_inst") or 0.0)
    # with atomics in flight a full LSU queue is the atomic-contention rule's evidence, not latency
    names = [r for r in LATENCY_REASONS if not (r == "lg_throttle" and atomics > 0) and r not in own]
    reasons = [s for s in (stall(ctx, r) for r in names) if s is not None]
    reasons = [s for s in reasons if s.share > STALL_SHARE]
    if sm_regime or below_high:
        # a busy math pipe throttling its own warps is the compute side's limit, not a latency
        reasons = [s for s in reasons if s.reason != "math_pipe_throttle"]
    if reasons and (latency_regime or sm_regime or below_high):
        top = max(reasons, key=lambda s: s.share)
        impact, basis = latency_impact(sum(s.share for s in reasons), issue, headroom)
        what = ", ".join(f"{LATENCY_REASONS[s.reason]} {pct(s.share)}" for s in reasons)
        recs = ["Give each warp more independent work (several outputs per thread, unrolled loops) so "
                "loads are issued long before their results are needed.",
                "Raise occupancy if it is limited (see occupancy findings) so more warps hide the latency."]
        if top.reason == "lg_throttle":
            recs.insert(0, "Issue fewer, wider memory instructions (float4 loads, fewer redundant reloads) and "
                           "interleave them with math.")
        if top.reason == "long_scoreboard":
            recs.insert(0, "Prefetch the next tile while computing this one (double buffering, cp.async) "
                           "and keep reused data in shared memory or registers.")
        if top.reason in ("short_scoreboard", "mio_throttle"):
            recs.insert(0, "Load the next shared-memory fragments into registers while the FMAs on the current "
                           "ones run (register double buffering), with wide LDS.128 loads.")
        if latency_regime:
            summary = f"No unit is busy; warps wait on {what} of the cycles between instructions."
        elif not sm_regime:
            summary = (f"Latency bound below the units' limits ({tri.summary()}, none at its "
                       f"{HIGH_PCT:.0f}% line): the schedulers find no eligible warp in {pct(1 - issue)} of cycles, "
                       f"and warps wait on {what} of the cycles between instructions (NVIDIA CPIStall: above 30%).")
        else:
            summary = (f"Latency bound on a partly busy SM ({tri.summary()}): the schedulers find no eligible "
                       f"warp in {pct(1 - issue)} of cycles, and warps wait on {what} of the cycles between "
                       "instructions (NVIDIA CPIStall: above 30%), which explains the idle issue slots.")
        out.findings.append(Finding(
            C.LATENCY_BOUND, summary,
            conf if not top.from_rule else conf.cap(Confidence.MEDIUM), impact, basis,
            [s.evidence for s in reasons] + [issue_ev] + ([cpi_ev] if cpi_ev else []) + tri.evidence[:2],
            recs))
    return out
