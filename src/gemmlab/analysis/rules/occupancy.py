"""Occupancy: how many warps an SM can hold for this launch, and what limits it.

NVIDIA's TheoreticalOccupancy rule flags theoretical occupancy below 80% of the SM's warp slots and
names the limiter with the fewest blocks per SM (registers, shared memory, warps per block, block
slots); its AchievedOccupancy rule flags achieved more than 10 points below theoretical.

Fewer warps only cost time when warps stall and no unit is saturated, and more warps only overlap the
waits they can overlap (latency and barriers, not full queues), so the impact is
(1 − theoretical occupancy) × min(idle issue slots × hideable share of the CPI, headroom of the busiest unit).

The concrete change (registers per thread, shared memory, block size) comes from gemmlab's
occupancy calculator (``gemmlab.analysis.occupancy``, NVIDIA's cuda_occupancy.h rules).
"""

from __future__ import annotations

import math

from gemmlab.analysis.limits import tensor_pipe
from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.occupancy import occupancy_from_launch
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import Triage
from gemmlab.analysis.rules.stalls import hideable_share, issue_active
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.errors import UserError

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
# A tensor pipe at a quarter of its peak or more: the MMA is the kernel's main work, so its register and
# shared-memory footprint is the tile that feeds it, and occupancy is a trade against that tile.
TENSOR_TILE_PCT = 25.0
# Such an occupancy finding stays listed as a lever, below the analyzer's 5% bar for a primary cause.
MIN_LEVER_IMPACT = 0.04

LIMITERS = (("registers", "occ_limit_registers", C.OCCUPANCY_REGISTERS),
            ("shared_mem", "occ_limit_shared_mem", C.OCCUPANCY_SHARED_MEMORY),
            ("warps", "occ_limit_warps", C.OCCUPANCY_BLOCK_SIZE),
            ("blocks", "occ_limit_blocks", C.OCCUPANCY_BLOCK_SIZE))


def calculator_advice(ctx: Context) -> list[str]:
    """The occupancy calculator's concrete changes for this launch (``gemmlab occupancy``'s advice),
    or nothing when the record lacks what it needs (launch metrics, compute capability)."""
    try:
        result = occupancy_from_launch(ctx.launch, advise=True)
    except UserError:
        return []
    return [a.text[0].upper() + a.text[1:] + "." for a in result.advice]


def _recommendations(ctx: Context, limiter: str, blocks: float) -> list[str]:
    computed = calculator_advice(ctx)
    if limiter == "registers":
        regs = ctx.v("registers")
        rec = computed or [f"Reduce registers per thread ({fmt(regs)} now allow {fmt(blocks)} blocks per SM): "
                           "smaller per-thread tiles, __launch_bounds__(threads, minBlocks) or -maxrregcount."]
        return rec + ["Check with -Xptxas -v that the lower register count does not introduce spills."]
    if limiter == "shared_mem":
        per_block = sum(ctx.v(s) or 0.0 for s in ("smem_static", "smem_dynamic", "smem_driver"))
        return computed or [f"Use less shared memory per block ({fmt(per_block)} bytes incl. the driver's reserve "
                            f"allow {fmt(blocks)} blocks per SM), or raise the carve-out with "
                            "cudaFuncSetAttribute(..., cudaFuncAttributePreferredSharedMemoryCarveout, 100)."]
    return computed or ["Change the block size: blocks of this size hit the per-SM block or warp-slot limit "
                        "before the SM is full (e.g. 128–256 threads per block, a multiple of 32)."]


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
    # more warps fill only the issue slots lost to waits they can overlap (latency, barriers), not those lost
    # to a full queue (throttles), where the extra warps would queue as well
    hide = hideable_share(ctx)
    wait = idle * hide if hide is not None else idle
    room = min(wait, headroom) if headroom is not None else wait
    impact = (1.0 - theo / 100.0) * room
    slots = (f"idle issue slots {pct(idle)} × hideable waits {pct(hide)} of the CPI" if hide is not None
             else f"idle issue slots {pct(idle)}")
    basis = (f"missing warps {pct(1 - theo / 100)} × min({slots}, "
             f"busiest unit's headroom {pct(headroom) if headroom is not None else 'n/a'})")
    waves = ctx.v("waves")
    if waves is not None and waves <= 1.0:
        # every block of the grid is resident at once: a higher limit leaves the extra slots empty
        impact = 0.0
        basis = (f"none: the grid fits in {fmt(waves)} wave(s), so every block is already resident and a "
                 "higher occupancy limit would find no blocks to fill the extra warp slots")
    tensor = tensor_pipe(ctx)
    if (tensor is not None and tensor[1] >= TENSOR_TILE_PCT and impact > 0
            and set(limiters) <= {"registers", "shared_mem"}):
        # a tensor-core kernel's registers and shared memory are its tile (accumulators, staged operands):
        # more resident warps need a smaller tile and so more operand traffic per MMA — a trade, not the
        # bottleneck. Its waits are hidden by pipelining (more stages, warp specialisation), which the
        # latency finding names; the occupancy stays listed, ranked as a lever, not the cause.
        impact = min(impact, MIN_LEVER_IMPACT)
        basis += (f"; capped: the tensor pipe runs at {fmt(tensor[1])}% with this footprint, which is the tile "
                  "that feeds it (a smaller tile trades operand traffic for warps)")
        conf = conf.cap(Confidence.MEDIUM)
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
