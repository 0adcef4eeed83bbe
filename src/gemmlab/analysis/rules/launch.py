"""Launch geometry: grids smaller than the GPU, and the partial last wave (tail effect).

NVIDIA's LaunchConfiguration rule: a grid with fewer blocks than SMs leaves (SMs − blocks) / SMs of
the GPU idle; with w waves per SM (blocks / (blocks per SM × SMs)), a partial last wave exists when
frac(w) > 0 and floor(w) ≥ 1, and can cost up to 1 / (1 + floor(w)) of the run.

gemmlab's tail estimate assumes blocks of equal duration: the last wave keeps frac(w) of the block
slots busy, so (ceil(w) − w) / ceil(w) of all slot-time is idle. Reported from 5% (below that it
is within run-to-run noise of a kernel's duration). The arithmetic of both rules lives in
gemmlab.analysis.waves, shared with ``gemmlab calc waves``.

A launch in thread-block clusters holds only the clusters that fit at once
(``launch__cluster_max_active``), which ncu's waves per SM do not count: where its clusters over
those make more waves, those are the waves (``launch_waves``).
"""

from __future__ import annotations

import math
from typing import Callable, Optional

from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Evidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import Triage
from gemmlab.analysis.rules.stalls import issue_active
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.analysis.waves import (cluster_waves, idle_sm_share, partial_wave_blocks,
                                    tail_idle_bound, tail_idle_share, wave_fill)

CATEGORIES = (C.TAIL_EFFECT, C.GRID_TOO_SMALL)
NEEDS = {
    "grid_size": "blocks in the grid",
    "sm_count": "SMs on the device",
    "waves": "waves per SM: blocks / (blocks per SM × SMs)",
}

TAIL_REPORT = 0.05  # idle slot-time share below which the tail is within noise
# A single partial wave is reported when it leaves ≥ 20% of the block slots empty: the same 20% NVIDIA's
# LaunchConfiguration rule uses as its reporting floor for the tail effect.
PARTIAL_WAVE_REPORT = 0.2


WaveEvidence = Callable[[str, str], list[Evidence]]


def launch_fill(ctx: Context) -> float:
    """The share of the block slots one wave of ``launch_waves`` fills: under 1 where the clusters that
    fit at once hold fewer blocks than blocks per SM × SMs (``waves.wave_fill``), else 1."""
    w, grid = ctx.v("waves"), ctx.v("grid_size")
    size, at_once = ctx.v("cluster_size"), ctx.v("clusters_at_once")
    wc = cluster_waves(grid, size, at_once) if grid is not None else None
    if wc is None or (w is not None and wc <= w * (1 + 1e-9)):
        return 1.0
    return wave_fill(grid, w, size, at_once)


def launch_waves(ctx: Context) -> tuple[Optional[float], WaveEvidence]:
    """Waves per SM as ncu counts them - or, for a launch in clusters, its clusters over the clusters
    the GPU holds at once where that makes more (module docstring) - and the evidence for that
    number, given what it is compared with and why."""
    w, grid = ctx.v("waves"), ctx.v("grid_size")
    size, at_once = ctx.v("cluster_size"), ctx.v("clusters_at_once")
    wc = cluster_waves(grid, size, at_once) if grid is not None else None
    if wc is None or (w is not None and wc <= w * (1 + 1e-9)):
        return w, lambda compared, why: [ctx.ev("waves", compared, why)]

    def evidence(compared: str, why: str) -> list[Evidence]:
        return [ctx.derived("cluster_waves", "launch__grid_size / launch__cluster_size / "
                            "launch__cluster_max_active", wc, "", compared, why),
                ctx.ev("clusters_at_once", f"{fmt(ctx.v('sm_count'))} SMs / {fmt(size)} CTAs a cluster",
                       "a cluster's CTAs share one GPC, and each GPC idles the SMs short of a whole "
                       "cluster: ncu's waves per SM (" + (fmt(w) if w is not None else "absent")
                       + ") count blocks per SM × SMs instead")]
    return wc, evidence


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    out = Outcome("launch", CATEGORIES, evaluated=ctx.has("grid_size", "sm_count") or ctx.has("waves"))
    for k, why in NEEDS.items():
        if ctx.v(k) is None:
            out.needs[k] = why
    grid, sms = ctx.v("grid_size"), ctx.v("sm_count")
    w, wave_ev = launch_waves(ctx)
    # fewer blocks than SMs is a partial wave, not a small grid, where even fewer fit at once (clusters)
    idle = idle_sm_share(grid, sms) if grid is not None and sms is not None and (w is None or w < 1) else None
    if idle is not None:
        summary = f"Grid too small: {fmt(grid)} blocks for {fmt(sms)} SMs leaves {pct(idle)} of the SMs idle"
        impact, basis = idle, "NVIDIA LaunchConfiguration estimate: (SMs − blocks) / SMs"
        ev = [ctx.ev("grid_size", f"≥ {fmt(sms)} (one block per SM)", "an SM without a block does nothing"),
              ctx.ev("sm_count", "—", "SMs on the device")]
        slots = _empty_slots(ctx, tri, w)
        if slots is not None and slots[0] > impact:
            # the SMs that do get a block hold one block where they could hold several: the empty
            # resident-block slots, not just the empty SMs, are what more blocks would fill
            impact, basis = slots
            summary += f", and with {fmt(w)} waves {pct(1 - w)} of the resident-block slots stay empty"
            ev += wave_ev("1.0 (one full wave)", "below one wave the GPU never reaches its occupancy")
        out.findings.append(Finding(
            C.GRID_TOO_SMALL, summary + ".", Confidence.HIGH, impact, basis, ev,
            ["Launch more, smaller blocks (smaller tiles), or split the work along another dimension "
             "(split-K for GEMM) so every SM gets a block."]))
        return out
    if ctx.facts.small_grid is not None and grid is None:
        n = ctx.facts.small_grid
        out.evaluated = True
        out.findings.append(Finding(
            C.GRID_TOO_SMALL, f"Grid too small: {fmt(n.value)} blocks, fewer than the GPU's SMs.",
            Confidence.MEDIUM, (n.estimated_speedup or 0.0) / 100.0, "ncu's LaunchConfiguration estimate",
            [ctx.from_rule(n, "grid_size", "block", "the SM count", "SMs without a block idle")],
            ["Launch more, smaller blocks, or split the work (split-K) so every SM gets a block."],
            ncu_estimate=n.estimated_speedup, ncu_rule="LaunchConfiguration"))
        return out
    if w is None or w <= 0:
        return out
    whole = math.floor(w)
    frac = w - whole
    slots = _empty_slots(ctx, tri, w)
    if slots is not None:
        impact, basis = slots
        out.findings.append(Finding(
            C.GRID_TOO_SMALL, f"Less than one wave: {fmt(w)} waves per SM, so {pct(1 - w)} of the resident-block "
            "slots stay empty for the whole run.",
            Confidence.HIGH if issue_active(ctx) is not None else Confidence.MEDIUM, impact, basis,
            wave_ev("1.0 (one full wave)", "below one wave the GPU never reaches its occupancy"),
            ["Give the GPU more blocks (smaller tiles or split-K) so at least one full wave of blocks runs."]))
        return out
    if whole >= 1 and frac > 0:
        fill = launch_fill(ctx)
        idle = tail_idle_share(w, fill)
        bound = tail_idle_bound(whole, fill)
        if idle < TAIL_REPORT:
            return out
        blocks_last = partial_wave_blocks(grid, w) if grid else None
        size, at_once = ctx.v("cluster_size"), ctx.v("clusters_at_once")
        clustered = fill < 1.0 and grid and size and at_once
        waves = (f"{fmt(w)} waves of clusters ({fmt(grid / size)} clusters of {fmt(size)}, {fmt(at_once)} fit at "
                 "once)" if clustered else f"{fmt(w)} waves per SM")
        fix = (["Launch the clusters that fit at once, or a whole number of rounds of them "
                f"({fmt(at_once)} clusters of {fmt(size)} here: cuOccupancyMaxActiveClusters); a persistent grid "
                "of exactly that many clusters takes every tile in one round."] if clustered else [])
        out.findings.append(Finding(
            C.TAIL_EFFECT,
            f"Tail effect: {waves} — the last partial wave"
            + (f" ({blocks_last} blocks)" if blocks_last else "") + f" leaves {pct(idle)} of block-slot time idle.",
            Confidence.HIGH, idle,
            (f"(ceil(w) − w) / ceil(w) with equal block durations; NVIDIA's upper bound 1/(1+floor(w)) = {pct(bound)}"
             if fill >= 1.0 else
             f"(ceil(w) − w × fill) / ceil(w) with equal block durations, a wave of the clusters that fit filling "
             f"{pct(fill)} of the block slots; NVIDIA's upper bound 1/(1+floor(w)) with that fill = {pct(bound)}"),
            wave_ev("an integer number of waves", "a partial last wave idles the SMs it does not fill")
            + ([ctx.ev("grid_size", "—", "blocks in the grid")] if grid is not None else []),
            fix + ["Choose tile sizes so the block count is a multiple of (blocks per SM × SMs), or use a persistent "
                   "/ stream-K schedule that balances the last wave."]))
    return out


def _empty_slots(ctx: Context, tri: Triage, w: Optional[float]) -> Optional[tuple[float, str]]:
    """Less than one wave: (1 − w) of the resident-block slots stay empty for the whole run; more blocks
    would fill them and hide the latency of the busy ones, up to the idle issue slots and the busiest
    unit's headroom. None at one wave or more, or within the reporting floor of a full wave."""
    if w is None or w <= 0 or math.floor(w) > 0 or (1.0 - w) < PARTIAL_WAVE_REPORT:
        return None
    issue = issue_active(ctx)
    idle = 1.0 - issue if issue is not None else 1.0
    head = tri.headroom if tri.headroom is not None else 1.0
    return (1.0 - w) * min(idle, head), f"empty slots {pct(1 - w)} × min(idle issue slots {pct(idle)}, headroom {pct(head)})"
