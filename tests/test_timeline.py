"""Per-kernel summary from events: exact statistics, nsys's conventions."""

from __future__ import annotations

import math

from pathlib import Path

import pytest

from gemmlab.profile.timeline import KernelEvent, summarize
from gemmlab.profile import nsys
FIXTURES = Path(__file__).parent / "fixtures"


def test_summary_statistics_exact():
    ev = [KernelEvent("a", 10.0), KernelEvent("b", 100.0), KernelEvent("a", 30.0), KernelEvent("a", 20.0),
          KernelEvent("a", 40.0)]
    rows = summarize(ev)
    assert [r.name for r in rows] == ["a", "b"]  # a: 100 ns total, b: 100 ns → tie broken by name
    a = rows[0]
    assert (a.instances, a.total, a.avg, a.med, a.min, a.max) == (4, 100.0, 25.0, 25.0, 10.0, 40.0)
    assert a.stddev == pytest.approx(math.sqrt(500.0 / 3))  # sample stddev, n - 1
    assert a.time_pct == 50.0 and rows[1].stddev == 0.0  # one instance: 0, as nsys prints


def test_sorted_by_total_descending():
    rows = summarize([KernelEvent("small", 1.0), KernelEvent("big", 5.0), KernelEvent("small", 1.0)])
    assert [r.name for r in rows] == ["big", "small"]
    assert sum(r.time_pct for r in rows) == pytest.approx(100.0)


def test_rejects_negative_or_nan_durations():
    with pytest.raises(ValueError, match="not a finite"):
        summarize([KernelEvent("k", float("nan"))])
    with pytest.raises(ValueError):
        summarize([KernelEvent("k", -1.0)])


def test_same_rows_as_the_nsys_fixture_from_its_durations():
    # The fixture was made from these durations (README): aggregating them here gives nsys's row.
    durs = [7632010, 7630500, 7641100, 6940200, 7840300]
    mine = summarize([KernelEvent("v", float(d)) for d in durs])[0]
    theirs = nsys.load_stats(FIXTURES / "nsys" / "cuda_gpu_kern_sum.csv").get(nsys.KERN_SUM).rows[1]
    assert (mine.total, mine.instances, mine.med, mine.min, mine.max) == (
        theirs.total, theirs.instances, theirs.med, theirs.min, theirs.max)
    assert round(mine.avg, 1) == theirs.avg and round(mine.stddev, 1) == theirs.stddev
