"""Measurement statistics, the noise flag and BenchSpec validation (CPU, no GPU pieces)."""

from __future__ import annotations

import math

import pytest

from gemmlab.bench.spec import BenchSpec
from gemmlab.problem import parse_shape
from gemmlab.bench.stats import NOISE_IQR_FRACTION, SAME, SLOWER, Measurement, effect, gflops
from gemmlab.errors import InputError

SPEC = BenchSpec("coalesced", 2048, 2048, 2048)


def ms(*values: float) -> tuple[float, ...]:
    return tuple(v * 1e-3 for v in values)


def test_order_statistics_of_nine_samples():
    # 1..9 ms, shuffled: median 5, quartiles 3 and 7 (linear interpolation lands on samples here)
    m = Measurement(SPEC, ms(9, 1, 8, 2, 7, 3, 6, 4, 5))
    assert m.n == 9
    assert m.median == pytest.approx(5e-3, rel=1e-15)
    assert m.q1 == pytest.approx(3e-3, rel=1e-15)
    assert m.q3 == pytest.approx(7e-3, rel=1e-15)
    assert m.iqr == pytest.approx(4e-3, rel=1e-15)
    assert m.min == 1 * 1e-3
    assert m.max == 9 * 1e-3
    assert m.mean == pytest.approx(5e-3, rel=1e-15)
    assert m.quantile(0.0) == m.min and m.quantile(1.0) == m.max


def test_quartiles_interpolate_between_samples():
    # four samples: q1 at position 0.75 between 1 and 2 -> 1.75; median 2.5; q3 at 2.25 -> 3.25
    m = Measurement(SPEC, ms(4, 3, 2, 1))
    assert m.q1 == pytest.approx(1.75e-3)
    assert m.median == pytest.approx(2.5e-3)
    assert m.q3 == pytest.approx(3.25e-3)


def test_median_ignores_an_outlier_the_mean_does_not():
    m = Measurement(SPEC, ms(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 50.0))
    assert m.median == pytest.approx(1e-3)
    assert m.mean == pytest.approx(5.9e-3)
    assert not m.noisy  # one slow run in ten does not move the quartiles


def test_gflops_is_two_mnk_over_median_time():
    m = Measurement(SPEC, ms(10.0, 10.0, 10.0))
    assert m.gflops == pytest.approx(2 * 2048**3 / 10e-3 / 1e9)  # 1717.99 GFLOP/s
    assert gflops(2 * 2048**3, 10.1478e-3) == pytest.approx(1692.96, abs=0.01)  # the article's unrolled row
    assert math.isnan(gflops(10, 0.0))


def test_gflops_uses_the_full_rectangular_shape():
    spec = BenchSpec("x", 100, 200, 300)
    assert spec.flops == 2 * 100 * 200 * 300
    assert Measurement(spec, (1e-3,)).gflops == pytest.approx(12.0)


def test_noise_flag_at_the_stated_bound():
    assert NOISE_IQR_FRACTION == 0.05
    # q1 = 0.975, q3 = 1.025 with samples symmetric about 1 ms -> IQR/median = 0.05: not over the bound
    at = Measurement(SPEC, ms(0.95, 0.975, 1.0, 1.025, 1.05))
    assert at.relative_iqr == pytest.approx(0.05, rel=1e-9)
    over = Measurement(SPEC, ms(0.94, 0.97, 1.0, 1.03, 1.06))
    assert over.relative_iqr == pytest.approx(0.06, rel=1e-9)
    assert over.noisy
    quiet = Measurement(SPEC, ms(0.99, 0.995, 1.0, 1.005, 1.01))
    assert not quiet.noisy
    # exactly at the bound is not noisy (the flag is "exceeds")
    assert (at.relative_iqr > NOISE_IQR_FRACTION) == at.noisy


def test_samples_are_stored_unrounded_and_round_trip():
    samples = (1.2345678901234567e-3, 9.87654321e-4, 1.0000000000000002e-3)
    m = Measurement(SPEC, samples, {"n_warmup": 3})
    d = m.to_dict()
    assert d["samples_s"] == list(samples)
    back = Measurement.from_dict(d)
    assert back.samples_s == samples
    assert back.spec == SPEC
    assert back.timing == {"n_warmup": 3}
    assert d["median_s"] == m.median and d["iqr_s"] == m.iqr and d["noise_bound"] == 0.05


@pytest.mark.parametrize("bad", [(), (0.0,), (-1e-3,), (float("nan"),), (float("inf"),)])
def test_measurement_rejects_impossible_samples(bad):
    with pytest.raises(ValueError):
        Measurement(SPEC, bad)


def test_a_change_needs_non_overlapping_quartiles():
    a = Measurement(SPEC, ms(1.00, 1.01, 1.02, 1.03, 1.04))
    b = Measurement(SPEC, ms(1.02, 1.03, 1.04, 1.05, 1.06))  # 2% slower median, overlapping spread
    c = Measurement(SPEC, ms(1.10, 1.11, 1.12, 1.13, 1.14))
    assert effect(a, b).verdict == SAME
    assert effect(a, c).verdict == SLOWER and effect(c, a).verdict != SAME


# --- BenchSpec -------------------------------------------------------------------------------
def test_spec_is_frozen_and_hashable_with_params():
    s1 = BenchSpec("tiled", 64, 64, 64, params={"TILE": 16, "UNROLL": 1})
    s2 = BenchSpec("tiled", 64, 64, 64, params={"UNROLL": 1, "TILE": 16})
    assert s1 == s2 and hash(s1) == hash(s2)
    assert s1.params == (("TILE", 16), ("UNROLL", 1))
    assert {s1: 1}[s2] == 1
    with pytest.raises(AttributeError):
        s1.M = 5  # type: ignore[misc]
    assert BenchSpec.from_dict(s1.to_dict()) == s1


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"M": 0}, "M must be a positive integer (>= 1), got 0"),
        ({"N": -3}, "N must be a positive integer (>= 1), got -3"),
        ({"K": 2.5}, "K must be a positive integer, got 2.5"),
        ({"K": True}, "K must be a positive integer, got True"),
        ({"M": "64"}, "M must be a positive integer, got '64'"),
        ({"alpha": float("nan")}, "alpha must be a finite number, got nan"),
        ({"dtype": "float16"}, "dtype must be one of fp32, bf16, fp8, int32, fp16, got 'float16'"),
        ({"kernel": ""}, "kernel must be a non-empty name"),
        ({"params": {"TILE": 1.5}}, "params['TILE'] must be an integer, got 1.5"),
        ({"M": 65536, "K": 65536}, "at most 2147483647 are allowed"),
    ],
)
def test_spec_validation_names_argument_value_and_allowed(kwargs, words):
    base = {"kernel": "k", "M": 8, "N": 8, "K": 8}
    base.update(kwargs)
    with pytest.raises(InputError) as e:
        BenchSpec(**base)
    assert words in str(e.value)


def test_parse_shape():
    assert parse_shape("2048,1024,512") == (2048, 1024, 512)
    assert parse_shape(" 7 , 9 ,11") == (7, 9, 11)
    with pytest.raises(InputError, match=r"--shape 0,5,5: M must be >= 1, got 0"):
        parse_shape("0,5,5")
    for bad in ("abc", "1,2", "1,2,3,4", "1,-2,3", "1.5,2,3", ""):
        with pytest.raises(InputError, match="--shape expects three positive integers"):
            parse_shape(bad)
