"""The seed article's ladder table and its "What actually mattered" ranking, from measured rungs.

Table: Version | Time | GFLOP/s | Speedup vs previous | Profiler signal | Main bottleneck.
Ranking: every change (rung i-1 → rung i) ordered by its measured speed-up; whether it helped, hurt
or stayed within noise is ``bench.stats.effect``'s verdict on the two rungs' raw samples (the one
judgement every part of gemmlab uses): a slower step ranks last and is flagged, as the article's
"plain tiling 0.91x". The "why" is read from the diagnosis change between the two rungs.

Pure functions: rungs come in as ``RungRow`` (the harness's measurement, the bottleneck and signal from
profiling each rung); ``profiler_signal`` builds the signal from one profiled launch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional, Sequence

from gemmlab.bench.results import Row
from gemmlab.bench.stats import SAME, SLOWER, Effect, Measurement, effect, speedup
from gemmlab.profile.metrics import STALL_REASONS, value
from gemmlab.profile.records import KernelLaunch


@dataclass(frozen=True)
class RungRow:
    """One rung of the chain: its measured row, and what profiling it said."""

    row: Row
    bottleneck: Optional[str] = None  # the analyzer's primary diagnosis, in words
    signal: Optional[str] = None  # the evidence behind it, in a few words

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def measurement(self) -> Measurement:
        return self.row.measurement

    @property
    def median_s(self) -> float:
        return self.row.median_s

    @property
    def gflops(self) -> Optional[float]:
        return self.row.gflops  # None for a lesson variant that counts no FLOPs


@dataclass(frozen=True)
class LadderRow:
    version: str
    time_s: float
    gflops: Optional[float]
    speedup_vs_previous: Optional[float]
    signal: Optional[str]
    bottleneck: Optional[str]

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Change:
    rank: int
    before: str
    after: str
    effect: Effect  # the one judgement of a change (bench.stats.effect) from before to after
    why: str  # what the diagnosis says changed

    @property
    def optimization(self) -> str:
        return f"{self.before} -> {self.after}"

    @property
    def speedup(self) -> float:
        return self.effect.speedup

    @property
    def slower(self) -> bool:
        return self.effect.verdict == SLOWER

    @property
    def within_noise(self) -> bool:
        return self.effect.verdict == SAME

    def to_dict(self) -> dict:
        return {"rank": self.rank, "before": self.before, "after": self.after, "speedup": self.speedup,
                "why": self.why, "slower": self.slower, "within_noise": self.within_noise,
                "effect": self.effect.to_dict(), "optimization": self.optimization}


def ladder_table(rungs: Sequence[RungRow]) -> list[LadderRow]:
    out = []
    for i, r in enumerate(rungs):
        prev = speedup(rungs[i - 1].measurement, r.measurement) if i else None
        out.append(LadderRow(r.name, r.median_s, r.gflops, prev, r.signal, r.bottleneck))
    return out


def _why(a: RungRow, b: RungRow) -> str:
    if a.bottleneck is None or b.bottleneck is None:
        return "not profiled"
    sig = f" ({a.signal or '?'} -> {b.signal or '?'})" if (a.signal or b.signal) else ""
    if a.bottleneck == b.bottleneck:
        return f"same bottleneck: {a.bottleneck}{sig}"
    return f"{a.bottleneck} -> {b.bottleneck}{sig}"


def what_mattered(rungs: Sequence[RungRow]) -> list[Change]:
    """Each step of the ladder ranked by measured speed-up, largest first; a step that made the kernel
    slower ranks last and is flagged, one within noise is marked (``bench.stats.effect`` decides)."""
    steps = [(effect(a.measurement, b.measurement), a, b) for a, b in zip(rungs, rungs[1:])]
    steps.sort(key=lambda t: -t[0].speedup)
    return [Change(i + 1, a.name, b.name, e, _why(a, b)) for i, (e, a, b) in enumerate(steps)]


# ----------------------------------------------------------------------------- the signal column

_UNITS = (("l1tex_pct", "L1/TEX"), ("l2_pct", "L2"), ("dram_pct", "DRAM"), ("sm_pct", "SM"))
SECTORS_IDEAL_4B = 4.0  # a warp of 32 consecutive 4-byte accesses touches 4 sectors of 32 bytes
# With the bytes-used-per-sector metric, a request is flagged when its sectors carry unused bytes:
# 16-byte loads by a warp need 16 sectors per request and waste nothing, 4-byte stores of fragment
# pairs over 8 rows use 16 of each 32-byte sector. 90%: a little slack for edge tiles.
SECTOR_USED_FLAG = 0.9
CONFLICT_SHARE_FLAG = 10.0  # % of shared wavefronts: NVIDIA's bank-conflict rule threshold
OCCUPANCY_FLAG = 80.0  # % theoretical occupancy: NVIDIA's Occupancy rule flags less
ISSUE_FLAG = 0.8  # issue/cycle: NVIDIA's CPIStall rule looks at stalls below this
STALL_SHARE_FLAG = 0.3  # share of CPI: CPIStall reports a reason above 30%


def profiler_signal(k: KernelLaunch, max_items: int = 3) -> str:
    """The numbers that carry a diagnosis, e.g. ``98.8% L1/TEX, 16.5 ld sectors/req``.

    The busiest Speed-of-Light unit; global accesses whose sectors carry unused bytes (or, without
    the bytes-per-sector metric, more than the 4 sectors per request a warp of 4-byte accesses needs); shared-memory conflicts, low theoretical occupancy and a dominant stall reason
    where NVIDIA's rules would flag them.
    """
    items: list[str] = []
    units = [(value(k, key), label) for key, label in _UNITS]
    units = [(v, label) for v, label in units if v is not None]
    if units:
        v, label = max(units)
        items.append(f"{v:.1f}% {label}")
    for kind, s_key, r_key in (("ld", "gld_sectors", "gld_requests"), ("st", "gst_sectors", "gst_requests")):
        s, r = value(k, s_key), value(k, r_key)
        used = value(k, f"g{kind[0]}{'d' if kind == 'ld' else 't'}_bytes_per_sector")
        if s is None or not r or s / r <= SECTORS_IDEAL_4B + 0.05:
            continue
        if used is None:
            items.append(f"{s / r:.1f} {kind} sectors/req")
        # Wide (8/16-byte) accesses need more sectors per request; flag them only when the sectors
        # carry unused bytes. 0 bytes per sector over real sectors is cp.async (LDGSTS) traffic,
        # which that SASS metric does not count: nothing to judge.
        elif 0 < used < SECTOR_USED_FLAG * 32.0:
            items.append(f"{s / r:.1f} {kind} sectors/req ({used:.0f} of 32 B used)")
    c, w = value(k, "smem_ld_conflicts"), value(k, "smem_ld_wavefronts")
    if c is not None and w and 100.0 * c / w >= CONFLICT_SHARE_FLAG:
        items.append(f"{100.0 * c / w:.0f}% smem ld conflicts")
    occ = value(k, "occ_theoretical")
    if occ is not None and occ < OCCUPANCY_FLAG:
        items.append(f"{occ:.0f}% theoretical occupancy")
    issue, cpi = value(k, "issue_active"), value(k, "warp_cpi")
    if issue is not None and cpi and issue < ISSUE_FLAG:
        stalls = [(value(k, f"stall_{r}") or 0.0, r) for r in STALL_REASONS if r != "selected"]
        top_v, top_r = max(stalls)
        if top_v / cpi > STALL_SHARE_FLAG:
            items.append(f"{top_r} {100.0 * top_v / cpi:.0f}% of stalls")
    return ", ".join(items[:max_items])
