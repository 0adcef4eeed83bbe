"""Waves and the tail effect of a launch: how many rounds of blocks the GPU runs, and what the last,
partial round costs.

A wave is every block the GPU holds at once: blocks per SM × SMs. ncu reports
``launch__waves_per_multiprocessor`` = grid / (blocks per SM × SMs). The cost of the tail follows
Nsight Compute's LaunchConfiguration rule: with w waves, if frac(w) > 0 and floor(w) ≥ 1, the partial
wave may take up to 100 / (1 + floor(w)) % of the runtime (blocks of equal duration assumed), and ncu
reports it from 20 % on; a grid with fewer blocks than SMs leaves (SMs − grid) / SMs of the GPU idle.

Thread-block clusters (sm_90 on) shrink the wave: a cluster's CTAs run on one GPC, each GPC leaves
idle the SMs short of a whole cluster, so a wave is the clusters the GPU holds at once
(``launch__cluster_max_active``, cuOccupancyMaxActiveClusters) × the cluster's CTAs - 30 clusters of
4 (120 blocks) on a 132-SM H100 or H200 at one block an SM. ncu's ``launch__waves_per_multiprocessor``
still divides by blocks per SM × SMs (cuBLAS's 8 blocks in clusters of 4 read 0.06 waves there, not
8 / 120: tests/fixtures/corpus/h100/corpus_full_a_raw.csv), so a grid of 33 such clusters reads 1.0
waves while its last 3 clusters run after the first 30: a persistent kernel launched so took 1.6
times as long as in pairs (docs/results/tc-placement-2026-11-29).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from gemmlab.errors import InputError

if TYPE_CHECKING:
    from gemmlab.analysis.occupancy import OccupancyResult
    from gemmlab.profile.records import KernelLaunch

# Nsight Compute's LaunchConfiguration rule reports a partial wave whose estimated cost is ≥ 20 %.
NCU_TAIL_REPORT_PCT = 20.0


def ncu_tail_cost_pct(full_waves: int, partial: bool) -> Optional[float]:
    """NVIDIA's LaunchConfiguration bound on the runtime share of a partial last wave: 100 / (1 + floor(w)) %,
    defined when there is a partial wave after at least one full one; None otherwise."""
    if partial and full_waves >= 1:
        return 100.0 / (1 + full_waves)
    return None


def cluster_waves(grid_blocks: float, cluster_size: Optional[float],
                  clusters_at_once: Optional[float]) -> Optional[float]:
    """Waves of a clustered launch: its clusters over the clusters the GPU holds at once; None for a
    launch without clusters (size 0 or 1) or without the count."""
    if not cluster_size or cluster_size <= 1 or not clusters_at_once or clusters_at_once < 1:
        return None
    return grid_blocks / cluster_size / clusters_at_once


def idle_sm_share(grid_blocks: float, sm_count: float) -> Optional[float]:
    """Share of SMs with no block at all, (SMs − grid) / SMs, when the grid is smaller than the SM count."""
    if grid_blocks < sm_count:
        return (sm_count - grid_blocks) / sm_count
    return None


def tail_idle_share(w: float, fill: float = 1.0) -> float:
    """Share of all block-slot time left idle by the partial last wave of ``w`` waves, assuming blocks of
    equal duration: the last wave fills frac(w) of the slots, so (ceil(w) − w) / ceil(w) is idle. A
    wave that fills only ``fill`` of the slots (whole clusters: ``wave_fill``) leaves the rest idle in
    every wave: (ceil(w) − w × fill) / ceil(w)."""
    return (math.ceil(w) - w * fill) / math.ceil(w)


def tail_idle_bound(full_waves: int, fill: float = 1.0) -> Optional[float]:
    """The most of a run's block-slot time a partial last wave can leave idle, as a fraction: NVIDIA's
    LaunchConfiguration bound 1 / (1 + floor(w)) (the last wave shrunk to nothing), with each full wave
    filling only ``fill`` of the slots: 1 − floor(w) × fill / (1 + floor(w)). None without a full wave."""
    if full_waves < 1:
        return None
    return 1.0 - full_waves * fill / (1 + full_waves)


def wave_fill(grid_blocks: float, ncu_waves: Optional[float], cluster_size: Optional[float],
              clusters_at_once: Optional[float]) -> float:
    """The share of the block slots (blocks per SM × SMs: grid / ncu's waves) that the clusters the GPU
    holds at once fill - 120 of 132 for 30 clusters of 4 at one block an SM; 1 without clusters or
    without the counts."""
    if not cluster_size or cluster_size <= 1 or not clusters_at_once or not ncu_waves or not grid_blocks:
        return 1.0
    return min(1.0, clusters_at_once * cluster_size * ncu_waves / grid_blocks)


def partial_wave_blocks(grid_blocks: float, w: float) -> int:
    """Blocks in the partial last wave of a grid of ``grid_blocks`` running ``w`` waves (a wave holds
    grid / w blocks)."""
    return math.ceil(round(grid_blocks * (w - math.floor(w)) / w, 6))  # 1.1 - 1 is 0.10000000000000009


@dataclass(frozen=True)
class WaveResult:
    grid_blocks: int
    blocks_per_sm: int
    sm_count: int
    cluster_size: int = 1  # CTAs per thread-block cluster
    clusters_at_once: Optional[int] = None  # clusters the GPU holds at once (cluster_size > 1)

    def __post_init__(self) -> None:
        for name, v in (("grid", self.grid_blocks), ("blocks per SM", self.blocks_per_sm), ("SMs", self.sm_count),
                        ("cluster size", self.cluster_size)):
            if v < 1:
                raise InputError(f"{name} {v}: must be ≥ 1")
        if self.cluster_size > 1:
            if self.grid_blocks % self.cluster_size:
                raise InputError(f"grid {self.grid_blocks}: not a whole number of clusters of {self.cluster_size}")
            if self.clusters_at_once is None or self.clusters_at_once < 1:
                raise InputError(f"clusters of {self.cluster_size}: how many the GPU holds at once is needed "
                                 f"(cuOccupancyMaxActiveClusters, ncu's launch__cluster_max_active), got "
                                 f"{self.clusters_at_once}")

    @property
    def blocks_per_wave(self) -> int:
        """Blocks the GPU holds at once: blocks per SM × SMs, or for clusters the clusters that fit
        × their CTAs when that is fewer."""
        slots = self.blocks_per_sm * self.sm_count
        if self.cluster_size > 1 and self.clusters_at_once is not None:
            return min(slots, self.clusters_at_once * self.cluster_size)
        return slots

    @property
    def cluster_limited(self) -> bool:
        """Whether the clusters, not blocks per SM × SMs, set the wave."""
        return self.blocks_per_wave < self.blocks_per_sm * self.sm_count

    @property
    def waves(self) -> float:
        """ncu's ``launch__waves_per_multiprocessor`` - except where whole clusters fit fewer blocks
        than that counts (module docstring)."""
        return self.grid_blocks / self.blocks_per_wave

    @property
    def full_waves(self) -> int:
        return self.grid_blocks // self.blocks_per_wave

    @property
    def tail_blocks(self) -> int:
        """Blocks in the last, partial wave (0 when the grid is a whole number of waves)."""
        return self.grid_blocks % self.blocks_per_wave

    @property
    def tail_utilisation(self) -> Optional[float]:
        """Fraction of a wave's block slots the partial wave fills; None without a partial wave."""
        return self.tail_blocks / self.blocks_per_wave if self.tail_blocks else None

    @property
    def tail_cost_pct(self) -> Optional[float]:
        """NVIDIA's estimate of the runtime share of the partial wave (needs ≥ 1 full wave)."""
        return ncu_tail_cost_pct(self.full_waves, self.tail_blocks > 0)

    @property
    def idle_sm_pct(self) -> Optional[float]:
        """Share of SMs with no block at all when the grid is smaller than the SM count (and than a
        wave: more blocks than whole clusters hold at once make a partial wave instead)."""
        if self.grid_blocks > self.blocks_per_wave:
            return None
        share = idle_sm_share(self.grid_blocks, self.sm_count)
        return 100.0 * share if share is not None else None

    @property
    def ncu_would_flag(self) -> bool:
        """Whether Nsight Compute's LaunchConfiguration rule reports this launch: its waves count
        blocks per SM × SMs, whether or not the clusters fit."""
        if self.cluster_limited:
            return WaveResult(self.grid_blocks, self.blocks_per_sm, self.sm_count).ncu_would_flag
        cost = self.tail_cost_pct
        return self.idle_sm_pct is not None or (cost is not None and cost >= NCU_TAIL_REPORT_PCT)

    def summary(self) -> str:
        text = self._summary()
        if self.cluster_limited:
            text += (f" (clusters of {self.cluster_size}: {self.clusters_at_once} fit at once, "
                     f"{self.blocks_per_wave} blocks a wave, not {self.blocks_per_sm * self.sm_count})")
        return text

    def _summary(self) -> str:
        if self.idle_sm_pct is not None:
            return (
                f"{self.grid_blocks} blocks for {self.sm_count} SMs: {self.idle_sm_pct:.1f}% of the SMs get no "
                f"block; use more, smaller blocks (or split K) to reach every SM"
            )
        if self.tail_blocks == 0:
            return f"{self.full_waves} full waves, no partial wave"
        if self.full_waves == 0:
            return (
                f"a single partial wave: {self.grid_blocks} of {self.blocks_per_wave} block slots "
                f"({100 * self.tail_utilisation:.1f}%) are used"
            )
        cost = self.tail_cost_pct
        if self.cluster_limited:  # ncu's waves count blocks per SM x SMs: no partial wave there
            flag = "; ncu's waves per SM miss it"
        else:
            flag = " (ncu reports this)" if cost is not None and cost >= NCU_TAIL_REPORT_PCT else ""
        return (
            f"{self.full_waves} full waves and a partial wave of {self.tail_blocks} blocks "
            f"({100 * self.tail_utilisation:.1f}% of a wave); the partial wave may take up to {cost:.1f}% "
            f"of the runtime{flag}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "grid_blocks": self.grid_blocks,
            "blocks_per_sm": self.blocks_per_sm,
            "sm_count": self.sm_count,
            "cluster_size": self.cluster_size,
            "clusters_at_once": self.clusters_at_once,
            "blocks_per_wave": self.blocks_per_wave,
            "waves": self.waves,
            "full_waves": self.full_waves,
            "tail_blocks": self.tail_blocks,
            "tail_utilisation": self.tail_utilisation,
            "tail_cost_pct": self.tail_cost_pct,
            "idle_sm_pct": self.idle_sm_pct,
            "ncu_would_flag": self.ncu_would_flag,
            "summary": self.summary(),
        }


def waves(grid_blocks: int, blocks_per_sm: int, sm_count: int, cluster_size: int = 1,
          clusters_at_once: Optional[int] = None) -> WaveResult:
    if blocks_per_sm == 0:
        raise InputError("blocks per SM 0: the kernel cannot launch with these resources, so it has no waves")
    return WaveResult(grid_blocks, blocks_per_sm, sm_count, cluster_size, clusters_at_once)


def waves_from_launch(launch: "KernelLaunch", occ: Optional["OccupancyResult"] = None) -> WaveResult:
    """Waves of a profiled launch: its grid, its SM count and its blocks per SM (computed from its
    ``launch__*`` metrics unless ``occ`` is given)."""
    from gemmlab.analysis.occupancy import occupancy_from_launch

    grid = launch.number("launch__grid_size")
    if grid is None and launch.grid is not None:
        grid = float(math.prod(launch.grid))
    sms = launch.number("launch__sm_count") or launch.number("device__attribute_multiprocessor_count")
    if grid is None or sms is None:
        missing = [n for n, v in (("launch__grid_size", grid), ("launch__sm_count", sms)) if v is None]
        raise InputError(
            f"kernel {launch.name!r} in {launch.source or 'the capture'}: missing {', '.join(missing)}; "
            f"collect them with ncu --section LaunchStats"
        )
    if occ is None:
        occ = occupancy_from_launch(launch, advise=False)
    size = launch.number("launch__cluster_size") or 1.0
    at_once = launch.number("launch__cluster_max_active")
    if size > 1 and not at_once:
        raise InputError(
            f"kernel {launch.name!r} in {launch.source or 'the capture'}: launched in clusters of "
            f"{size:g} but launch__cluster_max_active is missing; collect it with ncu --section Occupancy")
    return waves(int(grid), occ.blocks_per_sm, int(sms), int(size), int(at_once) if size > 1 else None)
