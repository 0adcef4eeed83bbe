"""One judgement of "did it help?": faster, slower or the same, from raw samples or medians alone.

Every comparison gemmlab prints (ladder speed-ups, lesson verdicts, compare, diff, what mattered)
goes through ``stats.effect``; these are its cases."""

from __future__ import annotations

import math
import random

import pytest

from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import (
    FASTER,
    MIN_EFFECT,
    SAME,
    SLOWER,
    Measurement,
    effect,
    speedup,
)

SPEC = BenchSpec("k", 64, 64, 64)


def m(*ms: float) -> Measurement:
    return Measurement(SPEC, tuple(x * 1e-3 for x in ms))


def test_apart_quartiles_and_a_large_change_are_faster_and_slower():
    before, after = m(2.00, 2.01, 2.02, 2.03, 2.04), m(1.00, 1.01, 1.02, 1.03, 1.04)
    e = effect(before, after)
    assert e.verdict == FASTER and e.basis == "samples" and e.speedup == pytest.approx(2.02 / 1.02)
    assert e.low == pytest.approx(2.01 / 1.03) and e.high == pytest.approx(2.03 / 1.01)
    assert e.low < e.speedup < e.high
    assert effect(after, before).verdict == SLOWER
    assert e.text == f"faster: {2.02 / 1.02:.2f}x ({2.01 / 1.03:.2f}-{2.03 / 1.01:.2f}x)"


def test_overlapping_quartiles_are_the_same_whatever_the_medians():
    a, b = m(1.00, 1.02, 1.04, 1.08, 1.10), m(1.06, 1.07, 1.09, 1.11, 1.13)  # medians 4.8% apart
    assert a.q3 >= b.q1
    e = effect(a, b)
    assert e.verdict == SAME and e.why == "the interquartile ranges overlap"
    assert e.speedup == pytest.approx(1.04 / 1.09)


def test_a_tight_change_under_the_minimum_effect_is_the_same():
    a = m(1.000, 1.0001, 1.0002, 1.0003, 1.0004)
    b = m(1.020, 1.0201, 1.0202, 1.0203, 1.0204)  # quartiles far apart, only 2% slower
    e = effect(a, b)
    assert e.verdict == SAME and "under the 3% drift" in e.why
    c = m(1.040, 1.0401, 1.0402, 1.0403, 1.0404)  # 4%: a change
    assert effect(a, c).verdict == SLOWER
    assert effect(a, b, min_effect=0.01).verdict == SLOWER  # the minimum is a parameter, 3% by default
    assert MIN_EFFECT == 0.03


@pytest.mark.parametrize("before, after, verdict", [
    (13.6520, 15.0255, SLOWER),  # the first article: tiling without reuse made it slower
    (15.0255, 10.1478, FASTER),
    (10.00, 10.10, SAME),  # 1%: "essentially no difference" (the fourth article)
])
def test_medians_alone_are_judged_by_size_and_say_so(before, after, verdict):
    e = effect(before * 1e-3, after * 1e-3)
    assert e.verdict == verdict and e.basis == "medians" and e.low is None and e.high is None
    assert "(" not in e.text  # no spread is invented


def test_a_single_sample_has_no_spread_to_judge_by():
    e = effect(m(2.0), m(1.0, 1.0, 1.0))
    assert e.basis == "medians" and e.verdict == FASTER


def test_noisy_sides_are_flagged_but_still_judged():
    noisy = m(1.0, 1.3, 1.5, 1.7, 2.2)  # IQR/median 27%
    tight = m(4.0, 4.0, 4.0, 4.0, 4.0)
    e = effect(tight, noisy)
    assert noisy.noisy and e.noisy and e.verdict == FASTER and e.text.endswith(", noisy timing")
    assert not effect(tight, tight).noisy


def test_the_verdict_is_antisymmetric_on_random_runs():
    rng = random.Random(5)
    for _ in range(300):
        a = m(*(rng.uniform(1.0, 1.2) for _ in range(rng.randint(1, 9))))
        b = m(*(rng.uniform(0.9, 1.3) for _ in range(rng.randint(1, 9))))
        ab, ba = effect(a, b), effect(b, a)
        assert ab.speedup * ba.speedup == pytest.approx(1.0)
        assert (ab.verdict, ba.verdict) in {(SAME, SAME), (FASTER, SLOWER), (SLOWER, FASTER)}
    # at the edge of the minimum effect too: 3.05% faster one way is 3.05% slower the other
    for s in (1.0295, 1.0305, 1 / 1.0295, 1 / 1.0305):
        assert {effect(1e-3 * s, 1e-3).verdict, effect(1e-3, 1e-3 * s).verdict} in ({SAME}, {FASTER, SLOWER})


@pytest.mark.parametrize("bad", [0.0, -1e-3, math.nan, math.inf, True, "1.0", None])
def test_impossible_times_are_refused(bad):
    with pytest.raises(ValueError, match="finite positive number of seconds"):
        speedup(bad, 1e-3)
    with pytest.raises(ValueError, match="finite positive number of seconds"):
        effect(1e-3, bad)


def test_speedup_takes_anything_with_a_median():
    class Timed:
        median = 2e-3

    assert speedup(Timed(), 1e-3) == pytest.approx(2.0)
    assert speedup(m(3.0), m(1.5)) == pytest.approx(2.0)


def test_to_dict_carries_the_text():
    d = effect(m(2.0, 2.0, 2.0), m(1.0, 1.0, 1.0)).to_dict()
    assert d["verdict"] == FASTER and d["text"].startswith("faster: 2.00x") and d["basis"] == "samples"
