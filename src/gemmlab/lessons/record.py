"""A lesson run as a ``bench.results.RunRecord``: how its rows are built from a measurement, and the
numbers derived from them when asked (rate against its ceiling, speed-up over the baseline).

A lesson row's ``extra`` holds what only lessons have: the lesson's name, the sweep point (size,
parameter, value), and the work of one run - the bytes the variant's own loads and stores move and,
for ``tiling``, its FLOPs. The run's ``meta`` holds the lesson, its title, the copy ceiling and peak
its rates are measured against, the sweep, and the verdicts with the headline sentence (derived
copies for people reading the JSON; ``verdict.lesson_verdicts`` recomputes them from the rows).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from gemmlab.bench.results import Check, Row, RunRecord
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import Measurement, speedup
from gemmlab.bench.timer import TimingOptions
from gemmlab.lessons import verdict
from gemmlab.lessons.base import Lesson, Point


def spec(lesson: Lesson, variant: str, pt: Point) -> BenchSpec:
    """The spec a lesson row is filed under: M, N, K are the problem's dimensions (n, 1, 1 for a
    vector), the element type the variant works on, and the sweep parameter when it is an integer."""
    n = pt.size
    M, N, K = (n, n, n) if lesson.name == "tiling" else ((n, n, 1) if lesson.name == "bank_conflicts" else (n, 1, 1))
    params = {pt.name: pt.value} if isinstance(pt.value, int) and not isinstance(pt.value, bool) else {}
    return BenchSpec(variant, M, N, K, dtype="int32" if lesson.name == "atomics" else "fp32", params=params)


def row(lesson: Lesson, variant: str, pt: Point, m: Measurement, check: Any, clocks: Mapping[str, Any],
        info: Mapping[str, Any]) -> Row:
    """One variant at one point: its measurement, check, and the work of one run."""
    extra = {"lesson": lesson.name, "point": pt.to_dict(), "bytes": lesson.nbytes(variant, pt),
             "flops": lesson.flops(pt)}
    return Row(m, Check.of(check), False, info, {}, clocks, extra)


def point_of(row: Row) -> dict:
    return dict(row.extra.get("point") or {})


def points(record: RunRecord) -> list[dict]:
    """The sweep points of a run, in the order they were measured."""
    out: list[dict] = []
    for r in record.rows:
        if point_of(r) not in out:
            out.append(point_of(r))
    return out


def bandwidth(row: Row) -> Optional[float]:
    """Bytes/s of the variant's own loads and stores (None when it moves none worth counting)."""
    nbytes = row.extra.get("bytes")
    return nbytes / row.median_s if nbytes else None


def pct_of_copy(record: RunRecord, row: Row) -> Optional[float]:
    bw = bandwidth(row)
    ceiling = (record.meta.get("ceiling") or {}).get("copy_bytes_per_s")
    return 100.0 * bw / ceiling if bw and ceiling else None


def baseline_name(record: RunRecord) -> Optional[str]:
    from gemmlab.lessons import registry

    lesson = registry.get(str(record.meta.get("lesson")))
    return lesson.comparisons[0].baseline if lesson.comparisons else None


def speedup_vs_baseline(record: RunRecord, row: Row) -> Optional[float]:
    """The headline baseline's median at the same point / this median."""
    base = baseline_name(record)
    b = next((r for r in record.rows if r.name == base and point_of(r) == point_of(row)), None)
    return None if b is None else speedup(b.measurement, row.measurement)


def extras(record: RunRecord) -> list[dict]:
    """Per row, the derived numbers a lesson's JSON shows beside it."""
    base = baseline_name(record)
    out = []
    for r in record.rows:
        bw = bandwidth(r)
        out.append({"bandwidth_bytes_per_s": bw, "pct_of_copy": pct_of_copy(record, r), "gflops": r.gflops,
                    "pct_of_peak": record.pct_of_peak(r), "speedup_vs_baseline": speedup_vs_baseline(record, r),
                    "is_baseline": r.name == base})
    return out


def assemble(lesson: Lesson, rows: Sequence[Row], env: Mapping[str, Any], peak: Mapping[str, Any],
             ceiling: Mapping[str, Any], options: TimingOptions, seed: int) -> RunRecord:
    """The run record of measured rows (pure: the CPU tests build runs with it)."""
    verdicts = verdict.lesson_verdicts(lesson, rows)
    gpu = str(env.get("gpu") or "this GPU")
    pts: list[dict] = []
    for r in rows:
        if point_of(r) not in pts:
            pts.append(point_of(r))
    meta = {
        "lesson": lesson.name,
        "title": lesson.title,
        "gpu": gpu,
        "peak": dict(peak),
        "ceiling": dict(ceiling),
        "options": {"timing": options.to_dict(), "seed": seed},
        "sweep": {"param": lesson.param.name, "points": pts},
        "verdicts": [v.to_dict() for v in verdicts],
        "headline": verdict.headline(lesson, verdicts, gpu),
    }
    return RunRecord("lesson", tuple(rows), env, meta)
