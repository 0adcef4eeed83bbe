"""The shape map's logic, pure (no GPU): from measured rows to % of cuBLAS per shape, shape classes,
the worst shapes, which shapes miss the target or the floor, and — for skinny shapes — the achieved
bandwidth against the DRAM copy ceiling.

Input: a ``gemmlab shapes`` run record — the ladder harness's rows (one for the rung, one for
cuBLAS per shape), each with its ``grid_shape`` ({M, N, K, label, source}) in ``extra``. The same
record comes back from the results database, so a stored run is re-mapped from its rows (as it
was printed, unless the rules below changed since: runs stored before 2026-11-27 printed the
pooled ratio). Every percentage compares medians measured in the same process (``bench.results.pct_of``):
the median over the interleaved rounds of cuBLAS median / rung median × 100, or that ratio over all
samples where the run kept no rounds.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

from gemmlab.bench.results import Row, RunRecord, pct_of
from gemmlab.problem import gemm_flops
from gemmlab.shapes.grids import Goals, GridShape

# Shape classes, in the order tables and the heat map list them.
CLASSES = ("square-aligned", "square-odd", "rect-aligned", "rect-odd", "skinny-M", "skinny-N", "small-K",
           "large-K-small-MN", "small")
CLASS_HELP = {
    "square-aligned": "M = N = K, N and K multiples of 4 (the vector rungs' 16-byte path applies)",
    "square-odd": "M = N = K, N or K not a multiple of 4 (the launcher falls back to a scalar twin)",
    "rect-aligned": "other large shapes with N and K multiples of 4",
    "rect-odd": "other large shapes with N or K not a multiple of 4",
    "skinny-M": "M ≤ SKINNY (GEMV-like, memory-bound: judged against the DRAM copy ceiling too)",
    "skinny-N": "N ≤ SKINNY (GEMV-like, memory-bound)",
    "small-K": "K ≤ SMALL_K with M and N large: little work per output, bound by writing C",
    "large-K-small-MN": "K ≥ LARGE_K and M·N ≤ SMALL_MN: too few output tiles to fill the GPU (split-K territory)",
    "small": "every dimension ≤ SMALL (or M and N both skinny): launch- and tail-bound",
}
SKINNY = 16  # M or N at most this: a GEMV-like product (issue #12)
SMALL = 256  # all of M, N, K at most this: the whole product is a handful of tiles
SMALL_K = 128  # K at most this (with M, N > SKINNY)
LARGE_K = 4096  # K at least this ...
SMALL_MN = 512 * 512  # ... with M·N at most this: ≤ 16 tiles of 128×128 for 132 SMs
CLASS_HELP = {k: v.replace("SKINNY", str(SKINNY)).replace("SMALL_K", str(SMALL_K)).replace("LARGE_K", str(LARGE_K))
              .replace("SMALL_MN", "512²").replace("SMALL", str(SMALL)) for k, v in CLASS_HELP.items()}

# Per dtype: (bytes per element of A and B, of C), M or N at most this is skinny ("decode" on the
# tensor ladders: issue #20 judges M <= 64 against the copy ceiling), and the element count a row
# pitch must be a multiple of to count as aligned (FP32: 16-byte vector loads; BF16: TMA's 16-byte
# pitch, for K and N; FP8: 16 bytes of K - B is given N x K).
DTYPE_BYTES = {"fp32": (4, 4), "bf16": (2, 2), "fp8": (1, 2)}
SKINNY_BY_DTYPE = {"fp32": SKINNY, "bf16": 64, "fp8": 64}
ALIGN_ELEMS = {"fp32": 4, "bf16": 8, "fp8": 16}
# What the map's percentages are of, per dtype (the reference each run times beside the rung).
REFERENCE = {"fp32": "cuBLAS FP32", "bf16": "cuBLAS BF16 at its best", "fp8": "cuBLASLt FP8 at its best"}


def shape_class(M: int, N: int, K: int, dtype: str = "fp32") -> str:
    """The class of an M×N×K product (first rule that applies, in this order): small, skinny-M,
    skinny-N, small-K, large-K-small-MN, square-aligned / square-odd, rect-aligned / rect-odd.
    "Aligned": FP32, N % 4 == 0 and K % 4 == 0 (the vector rungs); BF16, N and K multiples of 8;
    FP8, K a multiple of 16 (``ALIGN_ELEMS``). Skinny: M or N at most ``SKINNY_BY_DTYPE``."""
    skinny = SKINNY_BY_DTYPE[dtype]
    if max(M, N, K) <= SMALL or (M <= skinny and N <= skinny):
        return "small"
    if M <= skinny:
        return "skinny-M"
    if N <= skinny:
        return "skinny-N"
    if K <= SMALL_K:
        return "small-K"
    if K >= LARGE_K and M * N <= SMALL_MN:
        return "large-K-small-MN"
    unit = ALIGN_ELEMS[dtype]
    aligned = K % unit == 0 and (dtype == "fp8" or N % unit == 0)
    if M == N == K:
        return "square-aligned" if aligned else "square-odd"
    return "rect-aligned" if aligned else "rect-odd"


def is_skinny(cls: str) -> bool:
    return cls in ("skinny-M", "skinny-N")


def min_bytes(M: int, N: int, K: int, dtype: str = "fp32") -> int:
    """Bytes a GEMM with beta = 0 must move at least: read A and B once, write C once."""
    ab, c = DTYPE_BYTES[dtype]
    return ab * (M * K + K * N) + c * M * N


VERDICTS = ("meets", "below target", "below floor", "WRONG", "no reference")


@dataclass(frozen=True)
class ShapePoint:
    """One shape of the map: the rung's row and cuBLAS's, side by side; every number derived from
    their measurements when asked."""

    shape: GridShape
    cls: str
    rung_row: Row  # the rung asked for, as measured
    cublas_row: Optional[Row]  # cuBLAS at the same shape, same process
    copy_bytes_per_s: Optional[float] = None  # the DRAM copy ceiling (read + write bytes/s)
    verdict: str = ""
    dtype: str = "fp32"

    @property
    def rung(self) -> str:
        """The rung asked for (e.g. "dispatch")."""
        return self.rung_row.name

    @property
    def ran(self) -> str:
        """The instantiation that actually ran (twin, tile chosen), "" if unknown."""
        return str(self.rung_row.launched.get("rung") or "")

    @property
    def backend(self) -> str:
        """Its compiler, "" if unknown."""
        return str(self.rung_row.launched.get("backend") or self.rung_row.info.get("backend") or "")

    @property
    def tile(self) -> Optional[tuple[int, int]]:
        params = self.rung_row.launched.get("params") or {}
        return (int(params["BM"]), int(params["BN"])) if "BM" in params and "BN" in params else None

    @property
    def grid(self) -> Optional[tuple[int, ...]]:
        g = self.rung_row.launched.get("grid")
        return tuple(int(x) for x in g) if g else None

    @property
    def rung_median_s(self) -> float:
        return self.rung_row.median_s

    @property
    def cublas_median_s(self) -> Optional[float]:
        return None if self.cublas_row is None else self.cublas_row.median_s

    @property
    def rung_correct(self) -> bool:
        return bool(self.rung_row.correct)

    @property
    def cublas_correct(self) -> Optional[bool]:
        return None if self.cublas_row is None else bool(self.cublas_row.correct)

    @property
    def rung_noisy(self) -> bool:
        return self.rung_row.noisy

    @property
    def cublas_noisy(self) -> bool:
        return self.cublas_row is not None and self.cublas_row.noisy

    @property
    def cublas_host_behind(self) -> bool:
        """The GPU may have waited for the reference's host inside a timed run (bench.timer,
        ``batches_host_behind``): its median may include host waits,
        which make the rung's % of it read high."""
        return self.cublas_row is not None and self.cublas_row.host_behind

    @property
    def host_behind(self) -> bool:
        """Either side's GPU may have waited for its host inside a timed run: its median may
        include host waits."""
        return self.rung_row.host_behind or self.cublas_host_behind

    @property
    def host_mark(self) -> str:
        """The table's mark for a side whose host may have kept the GPU waiting: " (host)" for
        the rung's (its % may read low), " (host: ref)" for the reference's (the % may read
        high), " (host: both)"."""
        ours, ref = self.rung_row.host_behind, self.cublas_host_behind
        return " (host: both)" if ours and ref else " (host)" if ours else " (host: ref)" if ref else ""

    @property
    def rel_err(self) -> Optional[float]:
        return self.rung_row.rel_err

    @property
    def vs_reference(self) -> dict:
        """The interleaved rounds against cuBLAS (``bench.interleave.compare``); empty when the run
        kept none (an older run, or no reference)."""
        return dict(self.rung_row.extra.get("vs_reference") or {})

    @property
    def order_flip(self) -> bool:
        """Faster than cuBLAS only in the rounds where one side ran first: the verdict depends on
        the clock each got (the power cap), so no single % should be quoted without the range."""
        return bool(self.vs_reference.get("order_flip"))

    @property
    def round_ratios(self) -> Optional[tuple[float, float]]:
        v = self.vs_reference
        lo, hi = v.get("ratio_min"), v.get("ratio_max")
        return None if lo is None or hi is None else (float(lo), float(hi))

    @property
    def flops(self) -> int:
        return gemm_flops(*self.shape.dims)

    @property
    def pct(self) -> Optional[float]:
        """% of cuBLAS; None without a correct cuBLAS reference."""
        return pct_of(self.cublas_row, self.rung_row)

    @property
    def gflops(self) -> float:
        return self.flops / self.rung_median_s / 1e9

    @property
    def cublas_gflops(self) -> Optional[float]:
        return None if self.cublas_median_s is None else self.flops / self.cublas_median_s / 1e9

    @property
    def bytes(self) -> int:
        return min_bytes(*self.shape.dims, self.dtype)

    @property
    def bandwidth(self) -> float:
        """The rung's achieved bytes/s, counting the minimum traffic (A, B read once, C written once)."""
        return self.bytes / self.rung_median_s

    @property
    def cublas_bandwidth(self) -> Optional[float]:
        return None if self.cublas_median_s is None else self.bytes / self.cublas_median_s

    @property
    def pct_of_copy(self) -> Optional[float]:
        """The rung's achieved bandwidth as % of the copy ceiling (skinny shapes' second yardstick)."""
        return 100.0 * self.bandwidth / self.copy_bytes_per_s if self.copy_bytes_per_s else None

    @property
    def cublas_pct_of_copy(self) -> Optional[float]:
        bw = self.cublas_bandwidth
        return 100.0 * bw / self.copy_bytes_per_s if bw and self.copy_bytes_per_s else None

    def to_dict(self) -> dict:
        s = self.shape
        return {
            "M": s.M, "N": s.N, "K": s.K, "label": s.label, "source": s.source, "class": self.cls,
            "rung": self.rung, "ran": self.ran, "backend": self.backend,
            "tile": list(self.tile) if self.tile else None, "grid": list(self.grid) if self.grid else None,
            "rung_median_s": self.rung_median_s, "cublas_median_s": self.cublas_median_s,
            "pct_of_cublas": self.pct, "gflops": self.gflops, "cublas_gflops": self.cublas_gflops,
            "rung_correct": self.rung_correct, "cublas_correct": self.cublas_correct, "rel_err": self.rel_err,
            "noisy": self.rung_noisy or self.cublas_noisy,
            "order_flip": self.order_flip,
            "host_behind": self.host_behind,
            "rung_host_behind": self.rung_row.host_behind,
            "cublas_host_behind": self.cublas_host_behind,
            "round_ratios": list(self.round_ratios) if self.round_ratios else None,
            "bytes": self.bytes, "bandwidth_bytes_per_s": self.bandwidth,
            "pct_of_copy": self.pct_of_copy if is_skinny(self.cls) else None,
            "cublas_pct_of_copy": self.cublas_pct_of_copy if is_skinny(self.cls) else None,
            "verdict": self.verdict,
        }


def judge(p: ShapePoint, goals: Goals) -> str:
    """One of VERDICTS. A wrong result is WRONG whatever its speed; without a correct cuBLAS
    there is no percentage to judge. Skinny shapes meet their goal at ``skinny_pct`` of cuBLAS or
    ``skinny_copy_pct`` of the copy ceiling; every other shape at ``target_pct``."""
    if not p.rung_correct:
        return "WRONG"
    pct = p.pct
    if pct is None:
        return "no reference"
    if is_skinny(p.cls):
        copy = p.pct_of_copy
        if pct >= goals.skinny_pct or (copy is not None and copy >= goals.skinny_copy_pct):
            return "meets"
    elif pct >= goals.target_pct:
        return "meets"
    return "below floor" if pct < goals.floor_pct else "below target"


@dataclass(frozen=True)
class ShapeMap:
    """Every shape of one run, in grid order, with the goals it was judged by."""

    points: tuple[ShapePoint, ...]
    goals: Goals = field(default_factory=Goals)
    rung: str = ""
    gpu: str = ""
    dtype: str = "fp32"

    @property
    def reference(self) -> str:
        """What the percentages are of (e.g. "cuBLAS BF16 at its best")."""
        return REFERENCE[self.dtype]

    def geomean_pct(self) -> Optional[float]:
        """The geometric mean of % of the reference over the shapes that have one (issue #20's
        "geometric mean over the grid"): speed-ups multiply, so one fast odd shape cannot hide
        several slow ones the way an arithmetic mean lets it."""
        pcts = [p.pct for p in self.points if p.pct is not None and p.pct > 0]
        return math.exp(statistics.fmean(math.log(x) for x in pcts)) if pcts else None

    def worst(self, n: int = 5) -> list[ShapePoint]:
        """The ``n`` shapes with the lowest % of cuBLAS (shapes without a percentage last)."""
        ranked = sorted((p for p in self.points if p.pct is not None), key=lambda p: p.pct)
        return ranked[:n]

    def below(self, pct: float) -> list[ShapePoint]:
        """Shapes under ``pct`` % of cuBLAS, worst first."""
        return [p for p in self.worst(len(self.points)) if p.pct < pct]

    def misses(self) -> list[ShapePoint]:
        """Shapes that do not meet their goal (below target or floor, wrong, or unjudged), in grid order."""
        return [p for p in self.points if p.verdict != "meets"]

    def wrong(self) -> list[ShapePoint]:
        """Shapes where the mapped rung's result failed the check."""
        return [p for p in self.points if not p.rung_correct]

    def reference_wrong(self) -> list[ShapePoint]:
        """Shapes where the reference's own result failed gemmlab's bound (cuBLAS at its best may
        pick an algorithm that rounds its split-K partial sums to the output type: twice the
        rounding the bound allows). Its time is still the time to beat; the row says so."""
        return [p for p in self.points if p.cublas_correct is False]

    def by_class(self) -> dict[str, list[ShapePoint]]:
        out: dict[str, list[ShapePoint]] = {}
        for c in CLASSES:
            members = [p for p in self.points if p.cls == c]
            if members:
                out[c] = members
        return out

    def class_summary(self) -> list[dict]:
        """Per class: how many shapes, the lowest and the median % of cuBLAS, how many meet their goal."""
        out = []
        for c, pts in self.by_class().items():
            pcts = [p.pct for p in pts if p.pct is not None]
            out.append({"class": c, "n": len(pts), "min_pct": min(pcts) if pcts else None,
                        "median_pct": statistics.median(pcts) if pcts else None,
                        "meets": sum(p.verdict == "meets" for p in pts)})
        return out

    def to_dict(self) -> dict:
        worst = self.worst(1)
        return {
            "rung": self.rung,
            "gpu": self.gpu,
            "dtype": self.dtype,
            "reference": self.reference,
            "geomean_pct": self.geomean_pct(),
            "goals": self.goals.to_dict(),
            "points": [p.to_dict() for p in self.points],
            "classes": self.class_summary(),
            "worst": [p.shape.name for p in self.worst()],
            "below_target": [p.shape.name for p in self.below(self.goals.target_pct)],
            "below_floor": [p.shape.name for p in self.below(self.goals.floor_pct)],
            "misses": [p.shape.name for p in self.misses()],
            "wrong": [p.shape.name for p in self.wrong()],
            "reference_wrong": [p.shape.name for p in self.reference_wrong()],
            "min_pct": worst[0].pct if worst else None,
        }


def _shape_of(row: Row) -> GridShape:
    g = row.extra.get("grid_shape") or {}
    M, N, K = (int(g.get(k, v)) for k, v in zip(("M", "N", "K"), row.shape))
    return GridShape(M, N, K, str(g.get("label") or f"{M}×{N}×{K}"), str(g.get("source") or ""))


def build(rows: Iterable[Row], goals: Goals = Goals(), copy_bytes_per_s: Optional[float] = None,
          gpu: str = "", dtype: str = "fp32") -> ShapeMap:
    """The map from a run's rows: per shape (in first-seen order) the rung's row and cuBLAS's row."""
    shapes: dict[tuple[int, int, int], dict[str, Any]] = {}
    for r in rows:
        s = _shape_of(r)
        slot = shapes.setdefault(s.dims, {"shape": s})
        slot["ref" if r.reference else "rung"] = r
    points = []
    rung_name = ""
    for slot in shapes.values():
        r, ref = slot.get("rung"), slot.get("ref")
        if r is None:
            continue  # cuBLAS alone: nothing to map
        rung_name = rung_name or r.name
        p = ShapePoint(slot["shape"], shape_class(*slot["shape"].dims, dtype), r, ref, copy_bytes_per_s,
                       dtype=dtype)
        points.append(replace(p, verdict=judge(p, goals)))
    return ShapeMap(tuple(points), goals, rung_name, gpu, dtype)


def row_extras(record: RunRecord) -> list[dict]:
    """The derived numbers a shapes run's JSON shows beside each row: the ladder's, and the shape's class."""
    dtype = dtype_of(record)
    return [{**extra, "shape_class": shape_class(*_shape_of(r).dims, dtype)}
            for r, extra in zip(record.rows, record.ladder_extras())]


def dtype_of(record: RunRecord) -> str:
    """A shapes run's dtype (runs stored before ``--dtype`` existed are FP32)."""
    d = record.meta.get("dtype") or "fp32"
    return d if d in DTYPE_BYTES else "fp32"


def goals_of(record: RunRecord) -> Goals:
    g = (record.meta.get("options") or {}).get("goals") or {}
    return Goals(**{k: float(v) for k, v in g.items() if k in Goals.__dataclass_fields__})


def from_record(record: RunRecord) -> ShapeMap:
    """The map of a shapes run (fresh, stored, or read from ``gemmlab shapes --out`` JSON)."""
    ceiling = record.meta.get("ceiling") or {}
    return build(record.rows, goals_of(record), ceiling.get("copy_bytes_per_s"), record.gpu, dtype_of(record))


# --- presentation helpers shared by the terminal table and the HTML report ------------------
COLUMNS = ("Shape (M×N×K)", "Where from", "Class", "Ran", "Time (ms)", "cuBLAS (ms)", "% of cuBLAS",
           "GB/s (% of copy)", "Verdict")
# The terminal leaves out "Where from" (`gemmlab shapes --list` shows it) so the kernel names fit.
TERMINAL_COLUMNS = tuple(c for c in COLUMNS if c != "Where from")


def _ms(s: Optional[float]) -> str:
    return "–" if s is None else f"{s * 1e3:.4f}"


def ran_text(p: ShapePoint, with_grid: bool = False) -> str:
    """The instantiation that ran and its compiler, e.g. ``double_buffered_scalar (nvrtc)``
    (no square brackets: rich would read them as markup)."""
    if not p.ran:
        return p.rung
    text = p.ran + (f" ({p.backend})" if p.backend else "")
    if with_grid and p.grid:
        text += ", grid " + "×".join(str(x) for x in p.grid)
    return text


def pct_text(v: Optional[float]) -> str:
    return "–" if v is None else f"{v:.1f}%"


def bw_text(p: ShapePoint) -> str:
    if not is_skinny(p.cls):
        return ""
    text = f"{p.bandwidth / 1e9:,.0f}"
    if p.pct_of_copy is not None:
        text += f" ({p.pct_of_copy:.0f}%)"
    cb = p.cublas_bandwidth
    if cb is not None:
        text += f" · cuBLAS {cb / 1e9:,.0f}" + (f" ({p.cublas_pct_of_copy:.0f}%)" if p.cublas_pct_of_copy else "")
    return text


def table_rows(m: ShapeMap, with_grid: bool = False, terminal: bool = False) -> list[tuple[str, ...]]:
    """Cells under COLUMNS (``terminal``: under TERMINAL_COLUMNS)."""
    rows = []
    for p in m.points:
        marks = ((" (noisy)" if p.rung_noisy or p.cublas_noisy else "") + (" (order)" if p.order_flip else "")
                 + p.host_mark)
        cells = [p.shape.name, p.shape.label, p.cls, ran_text(p, with_grid), _ms(p.rung_median_s), _ms(p.cublas_median_s),
                 pct_text(p.pct) + marks, bw_text(p), p.verdict]
        if terminal:
            del cells[1]
        rows.append(tuple(cells))
    return rows


def summary_lines(m: ShapeMap) -> list[str]:
    """The few sentences printed under the table: worst shapes, misses, wrong results."""
    g = m.goals
    lines = []
    worst = m.worst(3)
    if worst:
        lines.append("worst: " + ", ".join(f"{p.shape.name} {p.pct:.1f}%" for p in worst))
    gm = m.geomean_pct()
    if gm is not None:
        lines.append(f"geometric mean over {sum(p.pct is not None for p in m.points)} shapes: {gm:.1f}% of "
                     f"{m.reference}")
    for label, pts in ((f"below the {g.target_pct:g}% target", m.below(g.target_pct)),
                       (f"below the {g.floor_pct:g}% floor", m.below(g.floor_pct))):
        lines.append(f"{len(pts)} of {len(m.points)} shapes {label}" + (": " + ", ".join(p.shape.name for p in pts) if pts else ""))
    met = sum(p.verdict == "meets" for p in m.points)
    skinny = "decode (M ≤ 64)" if m.dtype != "fp32" else "skinny"
    lines.append(f"{met} of {len(m.points)} shapes meet their goal ({g.target_pct:g}% of {m.reference}; {skinny}: "
                 f"{g.skinny_pct:g}% or {g.skinny_copy_pct:g}% of the copy ceiling)")
    flips = [p for p in m.points if p.order_flip and p.round_ratios]
    if flips:
        lines.append("(order): faster than " + m.reference + " only in the rounds where one side ran first "
                     "(the clock each got decides; per-round ratios): "
                     + ", ".join(f"{p.shape.name} {p.round_ratios[0]:.2f}-{p.round_ratios[1]:.2f}" for p in flips))
    ours = [p for p in m.points if p.rung_row.host_behind]
    ref = [p for p in m.points if p.cublas_host_behind]
    if ours or ref:
        where = "; ".join(f"{side}: " + ", ".join(p.shape.name for p in pts) for side, pts in
                          (("the rung's side, whose % may read low", ours),
                           (f"{m.reference}'s side (host: ref), whose waits make the % read high", ref))
                          if pts)
        lines.append("(host): the GPU may have reached a run before the host had queued all of it "
                     "(the hold and the runs ahead did not cover the host's pace), so some runs may "
                     "include waits for the host - " + where)
    bad = m.wrong()
    if bad:
        lines.append("WRONG results: " + ", ".join(p.shape.name for p in bad))
    ref_bad = m.reference_wrong()
    if ref_bad:
        lines.append(f"{m.reference} failed gemmlab's bound (its time is still the one to beat) at: "
                     + ", ".join(p.shape.name for p in ref_bad))
    none = [p for p in m.points if p.cublas_row is None]
    for p in none:
        why = p.rung_row.info.get("no_reference")
        lines.append(f"no reference at {p.shape.name}" + (f": {why}" if why else ""))
    return lines
