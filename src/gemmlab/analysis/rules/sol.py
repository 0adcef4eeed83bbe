"""Speed-of-Light triage: which unit is busiest, and is the kernel throughput- or latency-limited.

Follows NVIDIA's SOLBottleneck rule: if both Compute (SM) and Memory throughput are below 60% of
peak the kernel is latency-limited (or its grid is too small); at 80% or more a unit runs at high
throughput and the question becomes *why* that unit is so busy; in between, the larger one leads.
The memory side is split into L1/TEX, L2 and DRAM (``gpu__compute_memory_throughput`` is the max of
the memory units), because the causes differ completely between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from gemmlab.analysis.context import Context, fmt
from gemmlab.analysis.evidence import Evidence
from gemmlab.analysis.vocabulary import Category as C

# NVIDIA SOLBottleneck: below 60% of peak on both sides → latency-limited / small grid.
LATENCY_BELOW_PCT = 60.0
# NVIDIA SOLBottleneck: at or above 80% of peak a unit runs at "high throughput".
HIGH_PCT = 80.0
# Units within this many points of the busiest one are treated as co-limiting: when two units are
# that close, removing the first limit just moves the kernel onto the second.
CO_LIMIT_POINTS = 10.0
# DRAM cannot reach 100% of its theoretical peak: a plain device-to-device copy sustains 89% on the
# H100 (2.99 of 3.35 TB/s, measured by `gemmlab ceilings --measure`) and ~90% on the H200 (4.3 of
# 4.8). NVIDIA's 80% "high throughput" line applied to what DRAM can sustain is 0.8 × 89% ≈ 71% of peak.
DRAM_SUSTAINABLE = 0.89
DRAM_HIGH_PCT = HIGH_PCT * DRAM_SUSTAINABLE


def high_pct(unit: str) -> float:
    """The % of peak at which ``unit`` runs at high throughput (at its limit)."""
    return DRAM_HIGH_PCT if unit == "dram" else HIGH_PCT

UNIT_LABELS = {"sm": "SM (compute)", "l1": "L1/TEX", "l2": "L2", "dram": "DRAM",
               "memory": "memory (unit unknown)"}
UNIT_METRIC = {"sm": "sm_pct", "l1": "l1tex_pct", "l2": "l2_pct", "dram": "dram_pct", "memory": "mem_pct"}

# Which categories can explain a busy unit (the differential diagnosis per unit).
DIFFERENTIAL: dict[str, tuple[C, ...]] = {
    # below their 80% line L1 and L2 are busy but not at their limit: waiting (stalls) can explain the run
    "l1": (C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES, C.SHARED_BANK_CONFLICTS,
           C.SHARED_MEMORY_THROUGHPUT, C.L1_LSU_BOUND, C.LOCAL_MEMORY, C.ATOMIC_CONTENTION, C.LATENCY_BOUND,
           C.BARRIER_STALLS),
    "l2": (C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES, C.L2_BOUND, C.ATOMIC_CONTENTION,
           C.LOCAL_MEMORY, C.LATENCY_BOUND, C.BARRIER_STALLS),
    "dram": (C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES, C.DRAM_BOUND, C.LOCAL_MEMORY),
    "memory": (C.UNCOALESCED_GLOBAL_LOADS, C.UNCOALESCED_GLOBAL_STORES, C.SHARED_BANK_CONFLICTS,
               C.SHARED_MEMORY_THROUGHPUT, C.L1_LSU_BOUND, C.LOCAL_MEMORY, C.L2_BOUND, C.DRAM_BOUND),
    # a busy SM below 80% can still idle issue slots: stalls (latency, barriers) can explain that gap
    "sm": (C.COMPUTE_BOUND, C.TENSOR_BOUND, C.INSTRUCTION_OVERHEAD, C.SHARED_MEMORY_THROUGHPUT,
           C.L1_LSU_BOUND, C.WARP_DIVERGENCE, C.LATENCY_BOUND, C.BARRIER_STALLS),
    "latency": (C.LATENCY_BOUND, C.BARRIER_STALLS, C.OCCUPANCY_REGISTERS, C.OCCUPANCY_SHARED_MEMORY,
                C.OCCUPANCY_BLOCK_SIZE, C.GRID_TOO_SMALL, C.TAIL_EFFECT, C.ATOMIC_CONTENTION,
                C.WARP_DIVERGENCE, C.LOCAL_MEMORY),
}


@dataclass
class Triage:
    """The Speed-of-Light picture of one kernel."""

    pct: dict[str, Optional[float]]  # unit → % of peak (sm, l1, l2, dram, memory)
    hot: list[str]  # units that limit the kernel (empty when latency-limited or unknown)
    regime: str  # "throughput" | "latency" | "unknown"
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def busiest(self) -> Optional[float]:
        vals = [v for k, v in self.pct.items() if v is not None and k in ("sm", "memory")]
        if not vals:
            vals = [v for v in self.pct.values() if v is not None]
        return max(vals) if vals else None

    def busy(self, unit: str) -> Optional[float]:
        """Fraction of peak (0..1) of ``unit``."""
        v = self.pct.get(unit)
        return None if v is None else v / 100.0

    @property
    def headroom(self) -> Optional[float]:
        """How much faster the kernel could get before its busiest unit hits 100% (0..1)."""
        b = self.busiest
        return None if b is None else max(0.0, 1.0 - b / 100.0)

    def differential(self) -> list[C]:
        units = self.hot if self.regime == "throughput" else [self.regime]
        out: list[C] = []
        for u in units:
            for c in DIFFERENTIAL.get(u, ()):
                if c not in out:
                    out.append(c)
        return out

    def summary(self) -> str:
        parts = [f"{UNIT_LABELS[u]} {fmt(self.pct[u])}%" for u in ("sm", "l1", "l2", "dram")
                 if self.pct.get(u) is not None]
        if not parts and self.pct.get("memory") is not None:
            parts.append(f"memory {fmt(self.pct['memory'])}%")
        if self.regime == "unknown":
            return "Speed of Light unknown (" + (", ".join(parts) or "no SOL metrics") + ")"
        if self.regime == "latency":
            return f"no unit above {LATENCY_BELOW_PCT:.0f}% of peak (" + ", ".join(parts) + "): latency-limited"
        hot = " and ".join(UNIT_LABELS[u] for u in self.hot)
        return f"{hot} busiest (" + ", ".join(parts) + ")"

    def to_dict(self) -> dict[str, Any]:
        return {
            "regime": self.regime,
            "hot_units": list(self.hot),
            "sm_pct": self.pct.get("sm"),
            "memory_pct": self.pct.get("memory"),
            "l1tex_pct": self.pct.get("l1"),
            "l2_pct": self.pct.get("l2"),
            "dram_pct": self.pct.get("dram"),
            "summary": self.summary(),
        }


def triage(ctx: Context) -> Triage:
    pct = {u: ctx.v(m) for u, m in UNIT_METRIC.items()}
    ev: list[Evidence] = []
    why = {
        "sm": "busiest SM sub-unit (issue slots, a pipe, LSU instruction rate)",
        "memory": "busiest memory unit (the max of L1/TEX, L2, DRAM and their sub-units)",
        "l1": "L1/TEX includes shared memory: high with idle DRAM means on-chip traffic dominates",
        "l2": "L2 bandwidth",
        "dram": "device memory bandwidth",
    }
    for u in ("sm", "memory", "l1", "l2", "dram"):
        if pct[u] is not None:
            ev.append(ctx.ev(UNIT_METRIC[u], f"{LATENCY_BELOW_PCT:.0f}% / {HIGH_PCT:.0f}% of peak "
                             "(NVIDIA SOLBottleneck)", why[u]))
    sm, mem = pct["sm"], pct["memory"]
    units = {u: v for u, v in pct.items() if v is not None and u in ("sm", "l1", "l2", "dram")}
    if mem is not None and not any(u in units for u in ("l1", "l2", "dram")):
        units["memory"] = mem
    if not units:
        return Triage(pct, [], "unknown", ev)
    top = max([v for v in (sm, mem) if v is not None] or list(units.values()))
    if top < LATENCY_BELOW_PCT:
        return Triage(pct, [], "latency", ev)
    # memory sub-units are co-limiting only if the memory side itself is near the top
    hot = sorted((u for u, v in units.items() if v >= LATENCY_BELOW_PCT and v >= top - CO_LIMIT_POINTS),
                 key=lambda u: -units[u])
    if not hot:  # mem_pct high, but from a memory sub-unit not broken out here
        hot = ["memory"] if mem is not None and mem >= top - CO_LIMIT_POINTS else ["sm"]
        pct.setdefault("memory", mem)
    dram, l2 = units.get("dram"), units.get("l2")
    if dram is not None and dram >= DRAM_HIGH_PCT and "dram" not in hot:
        hot.append("dram")  # DRAM near what it can sustain limits the kernel even below the SM's %
    if "dram" in hot and "l2" in hot and l2 is not None and dram is not None and l2 < dram + CO_LIMIT_POINTS:
        # lts__throughput counts DRAM fills and write-backs too: a streaming kernel shows L2 busy
        # because DRAM is. L2 is a limit of its own only when clearly busier than DRAM.
        hot.remove("l2")
    return Triage(pct, hot, "throughput", ev)
