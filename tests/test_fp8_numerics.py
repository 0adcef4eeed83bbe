"""e4m3 conversions and the FP8 tensor-core error bound (CPU; hand-worked values; ml_dtypes, when
importable, only as a cross-check)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gemmlab.numerics import fp8
from gemmlab.numerics.bounds import gamma, normwise_bound
from gemmlab.numerics.fp8 import (
    E4M3_MAX,
    FP8_ACCUM_U,
    from_bits,
    round_e4m3,
    to_bits,
    tolerance,
)


def f32(*v):
    return np.array(v, dtype=np.float32)


# (value, e4m3 code), each worked out by hand from S.EEEE.MMM with bias 7.
HAND = [
    (1.0, 0x38),                # 0 0111 000
    (-2.0, 0xC0),               # 1 1000 000
    (0.1, 0x1D),                # 1.6 * 2^-4: mantissa 4.8/8 -> 5/8: 1.625 * 2^-4 = 0.1015625
    (240.0, 0x77),              # 1.875 * 2^7: 0 1110 111
    (448.0, 0x7E),              # the largest finite: 1.75 * 2^8, 0 1111 110
    (-448.0, 0xFE),
    (2.0**-6, 0x08),            # smallest normal
    (2.0**-9, 0x01),            # smallest subnormal
    (7 * 2.0**-9, 0x07),        # largest subnormal
    (1.0625, 0x38),             # tie between 1.0 (m=0) and 1.125 (m=1): even -> 1.0
    (1.1875, 0x3A),             # tie between 1.125 (m=1) and 1.25 (m=2): even -> m=2
    (1.0625 + 2**-12, 0x39),    # just above the tie: up
    (2.0**-10, 0x00),           # tie between 0 and 2^-9: even -> 0
    (3 * 2.0**-10, 0x02),       # tie between 1 and 2 (x 2^-9): even -> 2
    (15 * 2.0**-10, 0x08),      # tie between 7 * 2^-9 (subnormal) and 2^-6 (normal): even -> 8
    (0.0, 0x00),
    (-0.0, 0x80),
    (1e-40, 0x00),              # a float32 subnormal
    (463.9, 0x7E),              # nearest is 448
    (464.0, 0x7E),              # tie with 480 (no such value): saturates
    (1000.0, 0x7E),
    (-1e30, 0xFE),
    (np.inf, 0x7E),             # saturation, as cvt.rn.satfinite
    (-np.inf, 0xFE),
]


@pytest.mark.parametrize("value, code", HAND, ids=[f"{v!r}" for v, _ in HAND])
def test_to_bits_hand_worked(value, code):
    assert to_bits(np.float32(value)).item() == code
    assert to_bits(f32(value)).dtype == np.uint8


def test_nan_stays_nan_with_its_sign():
    nan = f32(np.nan)
    neg = -nan
    assert to_bits(nan).item() == 0x7F
    assert to_bits(neg).item() == 0xFF
    assert np.isnan(from_bits(np.array([0x7F, 0xFF], np.uint8))).all()


def test_from_bits_is_exact_and_round_trips_every_code():
    codes = np.arange(256, dtype=np.uint16).astype(np.uint8)
    v = from_bits(codes)
    assert v.dtype == np.float32
    finite = ~np.isnan(v)
    assert int(finite.sum()) == 254  # 0x7F and 0xFF are the only NaNs
    assert np.array_equal(to_bits(v[finite]), codes[finite])  # -0.0 -> 0x80 included
    assert float(np.nanmax(v)) == E4M3_MAX and float(np.nanmin(v)) == -E4M3_MAX
    assert v[0x38] == 1.0 and v[0x01] == 2.0**-9 and v[0x80] == 0.0
    assert len(fp8.e4m3_values()) == 253
    with pytest.raises(TypeError):
        from_bits(np.zeros(3, np.uint16))


def test_rounding_is_to_nearest_everywhere():
    """Every float32 in a dense sweep goes to the nearest e4m3 (the table's values)."""
    x = np.linspace(-470, 470, 200_001, dtype=np.float32)
    x = np.concatenate([x, np.float32(2.0) ** np.arange(-12, 9, 0.125, dtype=np.float32)])
    r = round_e4m3(x).astype(np.float64)
    grid = fp8.e4m3_values().astype(np.float64)
    xc = np.clip(x.astype(np.float64), -E4M3_MAX, E4M3_MAX)
    idx = np.clip(np.searchsorted(grid, xc), 1, len(grid) - 1)
    nearest = np.minimum(np.abs(grid[idx] - xc), np.abs(grid[idx - 1] - xc))
    assert np.all(np.abs(r - xc) == nearest)


def test_works_on_float64_input_via_float32():
    assert to_bits(np.array([1.0, 0.5], np.float64)).tolist() == [0x38, 0x30]


def test_cross_check_against_ml_dtypes():
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(100_000).astype(np.float32) * 50,
                        rng.random(10_000, dtype=np.float32) * 2**-5,
                        f32(0.0, -0.0, 448.0, -448.0, 1.0625, 2.0**-10, 15 * 2.0**-10)])
    x = x[np.abs(x) <= 448]  # ml_dtypes turns overflow into NaN; gemmlab saturates
    ours = to_bits(x)
    theirs = x.astype(ml.float8_e4m3fn).view(np.uint8)
    assert np.array_equal(ours, theirs)


def test_tolerance_derivation():
    t = tolerance(4096)
    steps = 4096 // 32
    assert fp8.accum_steps(4096) == steps and fp8.accum_steps(4097) == steps + 1
    assert t.accum_factor == gamma(steps + 2, FP8_ACCUM_U)
    assert math.isclose(t.accum_factor, 130 * 2**-13, rel_tol=0.02)
    assert t.out_u == 2.0**-8 and t.in_dtype == "fp8" and t.out_dtype == "bf16"
    assert t.normwise == 2.0**-8 + steps * 2**-13 + normwise_bound(4096)
    assert 0.019 < t.normwise < 0.021  # about 2% at K = 4096
    # a k-tile (128 of K) missing costs about 1/sqrt(K/128): far outside at 4096 and 8192
    for K in (4096, 8192):
        assert math.sqrt(128 / K) > 3 * tolerance(K).normwise
    # FP8's accumulator is far coarser than FP32's, and the bound says so
    assert t.accum_factor > 10 * fp8.fp32_model_factor(4096)
    with pytest.raises(ValueError, match="bf16 only"):
        tolerance(64, "fp32")
    with pytest.raises(ValueError):
        tolerance(0)


def _trunc(v, bits=13):
    """float64 values truncated to `bits` fraction bits (toward zero): Hopper's FP8 accumulator
    as reported ("FP22")."""
    m, e = np.frexp(v)
    return np.ldexp(np.trunc(m * 2.0 ** (bits + 1)) / 2.0 ** (bits + 1), e)


def fp8_mma(a_bits, b_bits, bits=13):
    """A right FP8 kernel's sum, in NumPy: per k32 step, the exact sum of 32 products added to the
    accumulator and the result truncated to 13 fraction bits."""
    a, b = from_bits(a_bits).astype(np.float64), from_bits(b_bits).astype(np.float64)
    K = a.shape[1]
    acc = np.zeros((a.shape[0], b.shape[0]))
    for k0 in range(0, K, 32):
        acc = _trunc(acc + a[:, k0:k0 + 32] @ b[:, k0:k0 + 32].T, bits)
    return acc


def test_truncating_accumulator_stays_inside_the_bound_and_fp32s_would_not_hold_it():
    from gemmlab.bench.check import reference
    from gemmlab.numerics import bf16
    from gemmlab.numerics.bf16 import within

    rng = np.random.default_rng(2)
    M, N, K = 40, 48, 2048
    a = to_bits(rng.random((M, K), dtype=np.float32) * 2 - 1)
    b = to_bits(rng.random((N, K), dtype=np.float32) * 2 - 1)  # N x K ("TN")
    out = bf16.from_bits(bf16.to_bits(fp8_mma(a, b).astype(np.float32)))
    ref, absref = reference(from_bits(a), from_bits(b).T, 1.0, 0.0)
    ok, worst, n_over = within(out, ref, absref, tolerance(K))
    assert ok and n_over == 0 and worst < 1
    rel = np.linalg.norm(out - ref) / np.linalg.norm(ref)
    assert rel <= tolerance(K).normwise
    # a coarser accumulator (8 kept bits) is caught normwise
    coarse = bf16.from_bits(bf16.to_bits(fp8_mma(a, b, bits=7).astype(np.float32)))
    assert np.linalg.norm(coarse - ref) / np.linalg.norm(ref) > tolerance(K).normwise
