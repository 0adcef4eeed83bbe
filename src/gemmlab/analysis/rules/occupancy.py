"""Occupancy: how many warps an SM can hold for this launch, and what limits it.

NVIDIA's TheoreticalOccupancy rule flags theoretical occupancy below 80% of the SM's warp slots and
names the limiter with the fewest blocks per SM (registers, shared memory, warps per block, block
slots); its AchievedOccupancy rule flags achieved more than 10 points below theoretical.

Fewer warps only cost time when warps stall and no unit is saturated, so the impact is
(1 − theoretical occupancy) × min(idle issue slots, headroom of the busiest unit).

Register allocation (sm_70 … sm_90): registers are allocated per warp in units of 256, 64K per SM.
"""

from __future__ import annotations

import math
from typing import Optional

from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import Triage
from gemmlab.analysis.rules.stalls import issue_active
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.OCCUPANCY_REGISTERS, C.OCCUPANCY_SHARED_MEMORY, C.OCCUPANCY_BLOCK_SIZE)
NEEDS = {
    "occ_theoretical": "theoretical occupancy (% of warp slots)",
    "occ_limit_registers": "blocks per SM allowed by registers",
    "occ_limit_shared_mem": "blocks per SM allowed by shared memory",
    "occ_limit_warps": "blocks per SM allowed by warp slots",
    "occ_limit_blocks": "blocks per SM hardware limit",
}

LOW_THEORETICAL_PCT = 80.0  # NVIDIA TheoreticalOccupancy
ACHIEVED_GAP_POINTS = 10.0  # NVIDIA AchievedOccupancy
REG_ALLOC_UNIT_PER_WARP = 256  # registers are allocated per warp in 256-register units (sm_70–sm_90)
DEFAULT_REGS_PER_SM = 65536

LIMITERS = (("registers", "occ_limit_registers", C.OCCUPANCY_REGISTERS),
            ("shared_mem", "occ_limit_shared_mem", C.OCCUPANCY_SHARED_MEMORY),
            ("warps", "occ_limit_warps", C.OCCUPANCY_BLOCK_SIZE),
            ("blocks", "occ_limit_blocks", C.OCCUPANCY_BLOCK_SIZE))


def register_target(ctx: Context, blocks_now: float) -> Optional[int]:
    """Registers per thread at which one more block of this size fits on an SM."""
    block = ctx.v("block_size")
    if block is None or block <= 0:
        return None
    warps = math.ceil(block / 32)
    regs_sm = ctx.v("regs_per_sm") or DEFAULT_REGS_PER_SM
    per_warp = (regs_sm / ((blocks_now + 1) * warps)) // REG_ALLOC_UNIT_PER_WARP * REG_ALLOC_UNIT_PER_WARP
    per_thread = int(per_warp // 32) // 8 * 8
    return per_thread if per_thread > 0 else None


def _recommendations(ctx: Context, limiter: str, blocks: float) -> list[str]:
    if limiter == "registers":
        regs = ctx.v("registers")
        target = register_target(ctx, blocks)
        rec = "Reduce registers per thread"
        if regs is not None and target is not None:
            rec += (f": {fmt(regs)} registers/thread allows {fmt(blocks)} blocks per SM; at ≤ {target} one more "
                    "block fits")
        return [rec + " (smaller per-thread tiles, __launch_bounds__(threads, minBlocks), or -maxrregcount; "
                "check that spills do not appear)."]
    if limiter == "shared_mem":
        per_block = sum(ctx.v(s) or 0.0 for s in ("smem_static", "smem_dynamic", "smem_driver"))
        config, per_sm = ctx.v("smem_config"), ctx.v("smem_per_sm")
        rec = [f"Use less shared memory per block ({fmt(per_block)} bytes incl. the driver's reserve allows "
               f"{fmt(blocks)} blocks per SM), e.g. smaller or fewer buffered tiles."]
        if config is not None and per_sm is not None and config < per_sm:
            rec.append(f"The launch used a {fmt(config)}-byte shared-memory carve-out of {fmt(per_sm)} possible: "
                       "raise it with cudaFuncSetAttribute(..., cudaFuncAttributePreferredSharedMemoryCarveout, 100).")
        return rec
    return ["Change the block size: blocks of this size hit the per-SM block or warp-slot limit before the "
            "SM is full (e.g. use 128–256 threads per block, a multiple of 32)."]


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    out = Outcome("occupancy", CATEGORIES, evaluated=False)
    for k, why in NEEDS.items():
        if ctx.v(k) is None:
            out.needs[k] = why
    limits = {name: ctx.v(short) for name, short, _ in LIMITERS}
    theo = ctx.v("occ_theoretical")
    rule = ctx.facts.theoretical_occupancy
    if theo is None and rule is not None:
        theo = rule.value
    known_limits = {k: v for k, v in limits.items() if v is not None}
    out.evaluated = theo is not None and (bool(known_limits) or bool(ctx.facts.occupancy_limiters))
    _block_size(ctx, out)
    if not out.evaluated or theo >= LOW_THEORETICAL_PCT:
        return out
    if known_limits:
        low = min(known_limits.values())
        limiters = [k for k in known_limits if known_limits[k] == low]
        conf = Confidence.HIGH
    else:
        limiters, low, conf = list(ctx.facts.occupancy_limiters), None, Confidence.MEDIUM
    if not limiters:
        return out
    ev = ([ctx.ev("occ_theoretical", f"{LOW_THEORETICAL_PCT:.0f}% (NVIDIA TheoreticalOccupancy)",
                  "fewer resident warps leave less parallelism to hide latency")]
          if ctx.v("occ_theoretical") is not None else
          [ctx.from_rule(rule, "occ_theoretical", "%", f"{LOW_THEORETICAL_PCT:.0f}%", "theoretical occupancy")])
    for name, short, _ in LIMITERS:
        if ctx.v(short) is not None:
            ev.append(ctx.ev(short, "the smallest limit sets the blocks per SM",
                             "limiter" if name in limiters else "not the limiter"))
    for k, why in (("registers", "registers per thread"), ("block_size", "threads per block"),
                   ("occ_achieved", f"NVIDIA flags achieved > {ACHIEVED_GAP_POINTS:.0f} points below theoretical")):
        if ctx.v(k) is not None:
            ev.append(ctx.ev(k, "—", why))
    issue = issue_active(ctx)
    headroom = tri.headroom
    idle = 1.0 - issue if issue is not None else 1.0
    room = min(idle, headroom) if headroom is not None else idle
    impact = (1.0 - theo / 100.0) * room
    basis = (f"missing warps {pct(1 - theo / 100)} × min(idle issue slots {pct(idle)}, "
             f"busiest unit's headroom {pct(headroom) if headroom is not None else 'n/a'})")
    if issue is None:
        conf = conf.cap(Confidence.MEDIUM)
    first = limiters[0]
    cat = {n: c for n, _, c in LIMITERS}[first]
    names = {"registers": "registers per thread", "shared_mem": "shared memory per block",
             "warps": "warps per block", "blocks": "the per-SM block limit"}
    summary = (f"Occupancy limited by {' and '.join(names[l] for l in limiters)}: theoretical "
               f"{fmt(theo)}% of warp slots" + (f" ({fmt(low)} blocks per SM)." if low is not None else "."))
    out.findings.append(Finding(
        cat, summary, conf, impact, basis, ev, _recommendations(ctx, first, low or 0),
        ncu_estimate=rule.estimated_speedup if rule else None, ncu_rule="TheoreticalOccupancy" if rule else ""))
    return out


def _block_size(ctx: Context, out: Outcome) -> None:
    """NVIDIA LaunchConfiguration: a block size that is not a multiple of 32 idles lanes."""
    block = ctx.v("block_size")
    if block is None or block <= 0 or block % 32 == 0:
        return
    warps = math.ceil(block / 32)
    lost = (1.0 / warps) * (1.0 - (block % 32) / 32.0)  # NVIDIA's estimate
    out.findings.append(Finding(
        C.OCCUPANCY_BLOCK_SIZE,
        f"Block size {fmt(block)} is not a multiple of 32: the last warp of each block runs "
        f"{fmt(block % 32)} of 32 lanes.", Confidence.HIGH, lost,
        "NVIDIA LaunchConfiguration estimate: (1 / warps per block) × idle share of the last warp",
        [ctx.ev("block_size", "a multiple of 32", "threads are scheduled in warps of 32")],
        ["Use a multiple of 32 threads per block (128–256 is a good start)."]))
