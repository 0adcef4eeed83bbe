"""What changed between two profiles (or two stored runs), kernel by kernel.

Pure functions over parsed records. Kernels are paired by name, and by order of appearance when a
name repeats; when the launches left unpaired on each side are all of one kernel, as many on
each side (a renamed kernel, or two reports of different kernels - yours and the library's at
the same shape, each profiled over the same number of launches), they are paired in order. For each pair: the time speedup,
the curated metrics that moved most, and how the diagnosis changed.

Metrics tracked (short names from gemmlab.profile.metrics, plus ratios of them): the Speed-of-Light
units, the tensor pipe, warp instructions executed, the L2 hit rate, global sectors per request,
shared-memory bank-conflict share, occupancy, registers, issue rate, warp CPI and the stall reasons
among the top three of either side. A move is ranked by |b − a| / max(|a|, |b|) — symmetric,
bounded, and defined when one side is 0 — except that the measure of either side's primary
category (``LEAD``: the tensor pipe for tensor_bound, DRAM throughput for dram_bound, ...) comes
first when it moved: a stall ratio swings by 80% while the tensor pipe goes from 84% to 95%, and
the second is the gap.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional, Sequence

from gemmlab.analysis.derived import MAX_TENSOR_PCT_FOR_FP32
from gemmlab.bench.results import Row, RunRecord
from gemmlab.bench.stats import Effect, Measurement, effect
from gemmlab.profile.metrics import STALL_REASONS, value
from gemmlab.profile.records import KernelLaunch

Getter = Callable[[KernelLaunch], Optional[float]]


def _ratio(num: str, den: str, scale: float = 1.0) -> Getter:
    def get(k: KernelLaunch) -> Optional[float]:
        n, d = value(k, num), value(k, den)
        if n is None or d is None or d == 0:
            return None
        return scale * n / d
    return get


def _short(name: str) -> Getter:
    return lambda k: value(k, name)


@dataclass(frozen=True)
class Tracked:
    key: str
    label: str
    unit: str
    get: Getter
    # Smaller moves are not reported: below ncu's run-to-run variation for that kind of counter
    # and below every threshold NVIDIA's rules react to (they work in whole percent points,
    # 10% conflict shares, 0.8 issue/cycle, ...).
    min_change: float
    relative: bool = False  # min_change is a fraction of the larger side (counts of work)
    active_from: float = 0.0  # neither side at least this: the unit does no real share, no move


_PCT_FLOOR = 1.0  # percentage points: SOL %, occupancy %, conflict share
_CYCLE_FLOOR = 0.1  # cycles per issued instruction (stall reasons, CPI)
_COUNT_FLOOR = 0.01  # of a count of work: ncu's instruction counts repeat exactly for one kernel and input

TRACKED: tuple[Tracked, ...] = (
    Tracked("sm_pct", "Compute (SM) throughput", "%", _short("sm_pct"), _PCT_FLOOR),
    Tracked("mem_pct", "Memory throughput", "%", _short("mem_pct"), _PCT_FLOOR),
    Tracked("l1tex_pct", "L1/TEX throughput", "%", _short("l1tex_pct"), _PCT_FLOOR),
    Tracked("l2_pct", "L2 throughput", "%", _short("l2_pct"), _PCT_FLOOR),
    Tracked("dram_pct", "DRAM throughput", "%", _short("dram_pct"), _PCT_FLOOR),
    # an FP32 kernel's tensor pipe reads 0-1%: below MAX_TENSOR_PCT_FOR_FP32 it does no real share
    Tracked("pipe_tensor_pct", "tensor pipe busy", "%", _short("pipe_tensor_pct"), _PCT_FLOOR,
            active_from=MAX_TENSOR_PCT_FOR_FP32),
    Tracked("inst_executed", "warp instructions executed", "inst", _short("inst_executed"), _COUNT_FLOOR,
            relative=True),
    Tracked("l2_hit_pct", "L2 hit rate", "%", _short("l2_hit_pct"), _PCT_FLOOR),
    Tracked("gld_sectors_per_req", "global load sectors/request", "sector", _ratio("gld_sectors", "gld_requests"), 0.1),
    Tracked("gst_sectors_per_req", "global store sectors/request", "sector", _ratio("gst_sectors", "gst_requests"), 0.1),
    Tracked("smem_ld_conflict_pct", "shared load bank conflicts", "% of wavefronts",
            _ratio("smem_ld_conflicts", "smem_ld_wavefronts", 100.0), _PCT_FLOOR),
    Tracked("smem_st_conflict_pct", "shared store bank conflicts", "% of wavefronts",
            _ratio("smem_st_conflicts", "smem_st_wavefronts", 100.0), _PCT_FLOOR),
    Tracked("occ_achieved", "achieved occupancy", "%", _short("occ_achieved"), _PCT_FLOOR),
    Tracked("occ_theoretical", "theoretical occupancy", "%", _short("occ_theoretical"), _PCT_FLOOR),
    Tracked("registers", "registers", "register/thread", _short("registers"), 1.0),
    Tracked("issue_active", "issue slots busy", "inst/cycle", _short("issue_active"), 0.01),
    Tracked("warp_cpi", "cycles between a warp's instructions", "cycle", _short("warp_cpi"), _CYCLE_FLOOR),
    *[Tracked(f"stall_{r}", f"stall: {r}", "cycle/inst", _short(f"stall_{r}"), _CYCLE_FLOOR)
      for r in STALL_REASONS if r != "selected"],  # "selected" is the issuing cycle itself, not a stall
)
TOP_STALLS = 3  # stall reasons compared: the top few of either side, as NVIDIA's CPIStall rule names them

# The tracked measure of each primary category (gemmlab.analysis.vocabulary): the one whose move says
# whether the bottleneck the analyzer named got better. Categories without one lead with nothing.
LEAD = {
    "tensor_bound": "pipe_tensor_pct",
    "compute_bound": "sm_pct",
    "dram_bound": "dram_pct",
    "l2_bound": "l2_pct",
    "l1_lsu_bound": "l1tex_pct",
    "shared_memory_throughput": "l1tex_pct",
    "uncoalesced_global_loads": "gld_sectors_per_req",
    "uncoalesced_global_stores": "gst_sectors_per_req",
    "shared_bank_conflicts": "smem_st_conflict_pct",
    "occupancy_registers": "occ_achieved",
    "occupancy_shared_memory": "occ_achieved",
    "occupancy_block_size": "occ_achieved",
    "latency_bound": "issue_active",
    "barrier_stalls": "stall_barrier",
    "instruction_overhead": "inst_executed",
}


@dataclass(frozen=True)
class MetricMove:
    key: str
    label: str
    unit: str
    a: Optional[float]
    b: Optional[float]

    @property
    def magnitude(self) -> float:
        if self.a is None or self.b is None:
            return 0.0
        top = max(abs(self.a), abs(self.b))
        return abs(self.b - self.a) / top if top else 0.0

    def to_dict(self) -> dict:
        return {**asdict(self), "magnitude": self.magnitude}


@dataclass
class KernelDiff:
    name_a: Optional[str]
    name_b: Optional[str]
    occurrence: int  # 0 for the first launch of that name, 1 for the second, ...
    time_a_ns: Optional[float] = None
    time_b_ns: Optional[float] = None
    moves: list[MetricMove] = field(default_factory=list)
    diagnosis_a: Optional[str] = None
    diagnosis_b: Optional[str] = None

    @property
    def speedup(self) -> Optional[float]:
        """time A / time B: > 1 means B is faster."""
        if not self.time_a_ns or not self.time_b_ns:
            return None
        return self.time_a_ns / self.time_b_ns

    @property
    def name(self) -> str:
        if self.name_a and self.name_b and self.name_a != self.name_b:
            return f"{self.name_a} -> {self.name_b}"
        return self.name_a or self.name_b or "?"

    @property
    def diagnosis_changed(self) -> bool:
        return self.diagnosis_a != self.diagnosis_b

    def leading(self) -> list[tuple[str, MetricMove]]:
        """(category, its move) for each side's primary category whose measure (``LEAD``) moved."""
        by_key = {m.key: m for m in self.moves}
        cats = dict.fromkeys(c for c in (self.diagnosis_a, self.diagnosis_b) if c in LEAD)
        return [(c, by_key[LEAD[c]]) for c in cats if LEAD[c] in by_key]

    def to_dict(self) -> dict:
        return {"kernel": self.name, "kernel_a": self.name_a, "kernel_b": self.name_b, "occurrence": self.occurrence,
                "time_a_ns": self.time_a_ns, "time_b_ns": self.time_b_ns, "speedup": self.speedup,
                "diagnosis_a": self.diagnosis_a, "diagnosis_b": self.diagnosis_b,
                "moves": [m.to_dict() for m in self.moves]}


def pair_launches(a: Sequence[KernelLaunch], b: Sequence[KernelLaunch]
                  ) -> list[tuple[Optional[int], Optional[int], int]]:
    """(index in a, index in b, occurrence) pairs; None where a kernel is on one side only."""
    def keyed(ls: Sequence[KernelLaunch]) -> dict[tuple[str, int], int]:
        seen: dict[str, int] = defaultdict(int)
        out = {}
        for i, k in enumerate(ls):
            out[(k.name, seen[k.name])] = i
            seen[k.name] += 1
        return out

    ka, kb = keyed(a), keyed(b)
    pairs = [(ia, kb[key], key[1]) for key, ia in ka.items() if key in kb]
    only_a = [(ia, None, key[1]) for key, ia in ka.items() if key not in kb]
    only_b = [(None, ib, key[1]) for key, ib in kb.items() if key not in ka]
    names_a = {a[ia].name for ia, _, _ in only_a}
    names_b = {b[ib].name for _, ib, _ in only_b}
    if len(names_a) == len(names_b) == 1 and len(only_a) == len(only_b):
        # one kernel on each side left, as often: a rename / two kernels
        pairs += [(x[0], y[1], x[2]) for x, y in zip(only_a, only_b)]
        only_a, only_b = [], []
    pairs.sort(key=lambda p: (p[0] if p[0] is not None else 1 << 30, p[1] if p[1] is not None else 1 << 30))
    return pairs + only_a + only_b


def _top_stalls(k: KernelLaunch) -> set[str]:
    vals = [(t.get(k), t.key) for t in TRACKED if t.key.startswith("stall_")]
    ranked = sorted(((v, key) for v, key in vals if v), reverse=True)
    return {key for _, key in ranked[:TOP_STALLS]}


def _moved(t: Tracked, va: Optional[float], vb: Optional[float]) -> bool:
    if va is None or vb is None:
        return False
    if max(abs(va), abs(vb)) < t.active_from:
        return False
    floor = t.min_change * max(abs(va), abs(vb)) if t.relative else t.min_change
    return abs(vb - va) >= floor and vb != va


def metric_moves(ka: KernelLaunch, kb: KernelLaunch, top: int = 6,
                 categories: Sequence[Optional[str]] = ()) -> list[MetricMove]:
    """The tracked metrics that moved by more than their noise floor, largest relative move first -
    after the measures of ``categories`` (the two sides' primary categories, ``LEAD``) that moved."""
    lead = [LEAD[c] for c in categories if c in LEAD]
    moves = []
    top_stalls = _top_stalls(ka) | _top_stalls(kb)
    for t in TRACKED:
        if t.key.startswith("stall_") and t.key not in top_stalls and t.key not in lead:
            continue
        va, vb = t.get(ka), t.get(kb)
        if _moved(t, va, vb):
            moves.append(MetricMove(t.key, t.label, t.unit, va, vb))
    moves.sort(key=lambda m: (m.key not in lead, lead.index(m.key) if m.key in lead else 0, -m.magnitude, m.key))
    return moves[:top]


def diff_launches(a: Sequence[KernelLaunch], b: Sequence[KernelLaunch],
                  diagnoses_a: Optional[Sequence[Optional[str]]] = None,
                  diagnoses_b: Optional[Sequence[Optional[str]]] = None,
                  top: int = 6) -> list[KernelDiff]:
    """Per kernel: time A/B, the metrics that moved most, the diagnosis (labels aligned with ``a``/``b``)."""
    for side, ls, d in (("A", a, diagnoses_a), ("B", b, diagnoses_b)):
        if d is not None and len(d) != len(ls):
            raise ValueError(f"{side}: {len(d)} diagnoses for {len(ls)} launches; expected one per launch")
    out = []
    for ia, ib, occ in pair_launches(a, b):
        ka = a[ia] if ia is not None else None
        kb = b[ib] if ib is not None else None
        kd = KernelDiff(ka.name if ka else None, kb.name if kb else None, occ,
                        time_a_ns=value(ka, "duration") if ka else None,
                        time_b_ns=value(kb, "duration") if kb else None,
                        diagnosis_a=diagnoses_a[ia] if diagnoses_a is not None and ia is not None else None,
                        diagnosis_b=diagnoses_b[ib] if diagnoses_b is not None and ib is not None else None)
        if ka is not None and kb is not None:
            kd.moves = metric_moves(ka, kb, top, (kd.diagnosis_a, kd.diagnosis_b))
        out.append(kd)
    return out


# ----------------------------------------------------------------------------- stored runs

@dataclass(frozen=True)
class RunKernelDiff:
    """One kernel in two stored runs: its measurement on each side and the change between them."""

    kernel: str  # its name, with the shape (and the lesson's sweep point) when the name repeats in a run
    a: Optional[Measurement]
    b: Optional[Measurement]

    @property
    def a_s(self) -> Optional[float]:
        return None if self.a is None else self.a.median

    @property
    def b_s(self) -> Optional[float]:
        return None if self.b is None else self.b.median

    @property
    def change(self) -> Optional[Effect]:
        """``bench.stats.effect`` from A to B (None when the kernel is in one run only)."""
        return None if self.a is None or self.b is None else effect(self.a, self.b)

    @property
    def speedup(self) -> Optional[float]:
        """A's median / B's median: > 1 means B is faster."""
        c = self.change
        return None if c is None else c.speedup

    def to_dict(self) -> dict:
        c = self.change
        return {"kernel": self.kernel, "a_s": self.a_s, "b_s": self.b_s, "speedup": self.speedup,
                "effect": None if c is None else c.verdict, "change": None if c is None else c.to_dict()}


def _key(r: Row) -> tuple:
    """What one row measured: kernel, shape and sweep point (a lesson's); two runs pair on it."""
    pt = r.extra.get("point") or {}
    return r.name, r.shape, str(pt.get("param") or ""), str(pt.get("value", ""))


def _labels(keys: list[tuple]) -> dict[tuple, str]:
    """A label per key, as short as keeps the keys apart: the kernel's name, with its shape when the
    name repeats, and its sweep point when name and shape repeat."""
    names = defaultdict(set)
    shapes = defaultdict(set)
    for name, shape, param, point in keys:
        names[name].add(shape)
        shapes[(name, shape)].add((param, point))
    out = {}
    for key in keys:
        name, shape, param, point = key
        label = name
        if len(names[name]) > 1 or len(shapes[(name, shape)]) > 1:
            label += " " + "x".join(map(str, shape))
        if len(shapes[(name, shape)]) > 1:
            label += f" {param}={point}"
        out[key] = label
    return out


def diff_runs(a: RunRecord, b: RunRecord) -> list[RunKernelDiff]:
    """Per kernel of two runs, A's and B's measurement and the change between them: kernels of A
    first, then B's new ones. Rows pair when they measured the same kernel at the same shape and
    sweep point; a label shows as much of that as tells the rows apart."""
    ka = {_key(r): r.measurement for r in a.rows}
    kb = {_key(r): r.measurement for r in b.rows}
    keys = list(ka) + [k for k in kb if k not in ka]
    labels = _labels(keys)
    return [RunKernelDiff(labels[k], ka.get(k), kb.get(k)) for k in keys]