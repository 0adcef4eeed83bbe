"""Fake lesson runs for the CPU tests. SAMPLE DATA: the timings are generated here, not measured.

``fake_run`` builds the run record the way ``gemmlab.lessons.run`` does (the same
``gemmlab.lessons.record`` functions), from medians given per (variant, point) and a seeded spread.
"""

from __future__ import annotations

import numpy as np

from gemmlab.bench.results import RunRecord
from gemmlab.bench.stats import Measurement
from gemmlab.bench.timer import TimingOptions
from gemmlab.lessons import registry
from gemmlab.lessons.base import LessonCheck
from gemmlab.lessons.record import assemble, row, spec


def fake_run(lesson_name: str, gpu: str, medians: dict, spread: float = 0.005, seed: int = 0, wrong: tuple = ()) -> RunRecord:
    """medians: {(variant, value): seconds}; points at the lesson's default size."""
    lesson = registry.get(lesson_name)
    rng = np.random.default_rng(seed)
    rows = []
    values = []
    for (_, value) in medians:
        if value not in values:
            values.append(value)
    for value in values:
        size = int(value) if lesson.param.is_size else lesson.default_size
        from gemmlab.lessons.base import Point

        pt = Point(size, lesson.param.name, value)
        for v in lesson.variants:
            if (v.name, value) not in medians:
                continue
            med = medians[(v.name, value)]
            samples = tuple(float(x) for x in med * np.exp(rng.normal(0.0, spread, size=41)))
            m = Measurement(spec(lesson, v.name, pt), samples, {"method": "sample data"})
            ok = v.name not in wrong
            chk = LessonCheck(ok, "ok" if ok else "3 of 10 elements differ from the reference, first at 0", 10, 0, 0, 0 if ok else 3)
            rows.append(row(lesson, v.name, pt, m, chk, {"source": "unavailable"}, {}))
    env = {"gpu": gpu, "cuda_runtime": "13.0"}
    return assemble(lesson, rows, env, {"flops": 60e12}, {"copy_bytes_per_s": 2.0e12, "source": "sample"}, TimingOptions(), 0)


def as_dict(record: RunRecord) -> dict:
    """The record as ``gemmlab lesson --out`` writes it."""
    from gemmlab.workflows.kinds import as_dict as _as_dict

    return _as_dict(record)
