"""bfloat16 conversions, the BF16 tensor-core error bound, and the checker on BF16 outputs
(CPU; NumPy stand-ins for GPU launches; shapes deliberately not multiples of any tile)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gemmlab.bench.check import Checker, reference
from gemmlab.numerics import bf16
from gemmlab.numerics.bf16 import (
    BF16_U,
    POISON_BF16,
    TC_ACCUM_FACTOR,
    from_bits,
    round_bf16,
    to_bits,
    tolerance,
    within,
)
from gemmlab.numerics.bounds import FP32_U, gamma, normwise_bound

M, N, K = 67, 45, 129


def f32(bits):
    return np.array([bits], dtype=np.uint32).view(np.float32)


def test_to_bits_rounds_to_nearest_even_and_keeps_specials():
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even -> 1.0 (0x3F80).
    assert to_bits(np.float32(1 + 2**-8)).item() == 0x3F80
    # 1 + 3*2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: ties to even -> 0x3F82.
    assert to_bits(np.float32(1 + 3 * 2**-8)).item() == 0x3F82
    # just above the tie rounds up
    assert to_bits(f32(0x3F808001)).item() == 0x3F81
    assert to_bits(np.array([0.0, -0.0, np.inf, -np.inf], np.float32)).tolist() == [
        0x0000, 0x8000, 0x7F80, 0xFF80]
    nan = to_bits(np.array([np.nan, -np.nan], np.float32))
    assert all(np.isnan(from_bits(nan)))
    # the largest float32 is past the largest bf16 (0x7F7F) + half an ulp: inf
    assert to_bits(np.float32(np.finfo(np.float32).max)).item() == 0x7F80
    # bf16 bit patterns survive the round trip exactly
    allbits = np.arange(0, 2**16, dtype=np.uint32).astype(np.uint16)
    finite = ~np.isnan(from_bits(allbits))
    assert np.array_equal(to_bits(from_bits(allbits))[finite], allbits[finite])


def test_round_bf16_error_is_within_half_an_ulp():
    x = np.random.default_rng(1).standard_normal(100_000).astype(np.float32)
    r = round_bf16(x)
    assert np.all(np.abs(r.astype(np.float64) - x) <= BF16_U * np.abs(x))
    assert from_bits(to_bits(x)).dtype == np.float32
    with pytest.raises(TypeError):
        from_bits(x)


def test_tolerance_derivation():
    t = tolerance(4096, "bf16")
    assert t.accum_factor == gamma(4096 + 2, TC_ACCUM_FACTOR * FP32_U)
    assert math.isclose(t.accum_factor, 4098 * 2**-23, rel_tol=1e-3)
    assert t.out_u == 2.0**-8
    assert t.normwise == 2.0**-8 + normwise_bound(4096)
    f = tolerance(4096, "fp32")
    assert f.out_u == 0.0 and f.normwise == normwise_bound(4096)
    # elementwise: e_acc + u_out * (|ref| + e_acc)
    absref, ref = np.array([[10.0]]), np.array([[-3.0]])
    e = t.accum_factor * 10.0
    assert t.elementwise(absref, ref)[0, 0] == pytest.approx(e + 2**-8 * (3.0 + e))
    assert tolerance(8192, "bf16").accum_factor > t.accum_factor  # grows with K
    with pytest.raises(ValueError):
        tolerance(16, "fp16")
    with pytest.raises(ValueError):
        tolerance(0, "bf16")


def emulate(a_bits, b_bits, c, alpha, beta, out="bf16"):
    """A right BF16 tensor-core kernel, in NumPy: exact products, FP32 sums, alpha/beta epilogue
    in FP32 (beta == 0: C unread), output rounded once to bf16 (ties to even)."""
    acc = (from_bits(a_bits) @ from_bits(b_bits)).astype(np.float32)
    if beta == 0.0:
        v = np.float32(alpha) * acc
    else:
        cin = from_bits(c) if out == "bf16" else c
        v = np.float32(alpha) * acc + np.float32(beta) * cin
    c[...] = to_bits(v) if out == "bf16" else v


@pytest.mark.parametrize("out", ["bf16", "fp32"])
@pytest.mark.parametrize("beta", [0.0, -0.5])
def test_checker_passes_a_correct_bf16_kernel(out, beta):
    seen = {}

    def run(a, b, c, alpha, beta_):
        seen["dtypes"] = (a.dtype, b.dtype, c.dtype)
        emulate(a, b, c, alpha, beta_, out)

    res = Checker(seed=3).check(run, M, N, K, 1.25, beta, in_dtype="bf16", out_dtype=out)
    assert res.ok, res.reason
    want_c = np.uint16 if out == "bf16" else np.float32
    assert seen["dtypes"] == (np.dtype(np.uint16), np.dtype(np.uint16), np.dtype(want_c))
    assert res.rel_err <= tolerance(K, out).normwise


def test_bf16_output_needs_the_bf16_allowance():
    """A correct bf16-output kernel's error is mostly the output rounding: held to the FP32 bound
    (tol=None) it would fail, so the allowance is what lets it pass - and no more."""
    rng = np.random.default_rng(0)
    a = to_bits(rng.random((M, K), dtype=np.float32) * 2 - 1)
    b = to_bits(rng.random((K, N), dtype=np.float32) * 2 - 1)
    c = np.zeros((M, N), np.uint16)
    emulate(a, b, c, 1.0, 0.0)
    ref, absref = reference(from_bits(a), from_bits(b), 1.0, 0.0)
    ok, worst, n_over = within(from_bits(c), ref, absref, tolerance(K, "bf16"))
    assert ok and 0 < worst <= 1 and n_over == 0
    ok32, worst32, _ = within(from_bits(c), ref, absref, tolerance(K, "fp32"))
    assert not ok32 and worst32 > 1


def _fails(run, reason_part, beta=0.0, out="bf16"):
    res = Checker(seed=5).check(run, M, N, K, 1.0, beta, in_dtype="bf16", out_dtype=out)
    assert not res.ok
    assert reason_part in res.reason, res.reason
    return res


def test_wrong_bf16_results_fail():
    def off_by_one_element(a, b, c, al, be):
        emulate(a, b, c, al, be)
        c[3, 4] = to_bits(from_bits(c[3:4, 4:5]) * 1.05 + 0.05)[0, 0]

    _fails(off_by_one_element, "componentwise bound")

    def skipped_k_tile(a, b, c, al, be):
        a = a.copy()
        a[:, 32:64] = 0
        emulate(a, b, c, al, be)

    _fails(skipped_k_tile, "componentwise bound")

    def nan_out(a, b, c, al, be):
        emulate(a, b, c, al, be)
        c[10, 10] = to_bits(np.float32(np.nan))

    _fails(nan_out, "NaN or inf")

    def unwritten_corner(a, b, c, al, be):
        full = np.zeros_like(c)
        emulate(a, b, full, al, be)
        c[:-1, :] = full[:-1, :]  # last row left as it was

    r = _fails(unwritten_corner, "poison")
    assert r.n_unwritten == N and r.first_unwritten == (M - 1, 0)

    def reads_c_when_beta_is_zero(a, b, c, al, be):
        acc = from_bits(a) @ from_bits(b)
        c[...] = to_bits(acc + from_bits(c))  # poison NaN leaks in

    _fails(reads_c_when_beta_is_zero, "poison")

    def ignores_beta(a, b, c, al, be):
        emulate(a, b, c, al, 0.0)

    _fails(ignores_beta, "componentwise bound", beta=-0.5)

    def fp32_out_but_bf16_precision(a, b, c, al, be):
        acc = from_bits(a) @ from_bits(b)
        c[...] = round_bf16(acc)

    _fails(fp32_out_but_bf16_precision, "bound", out="fp32")


def test_poison_pattern_is_a_quiet_nan_no_gpu_produces():
    assert np.isnan(from_bits(np.uint16(POISON_BF16)))
    assert POISON_BF16 != 0x7FFF and POISON_BF16 & 0x0040  # quiet, not canonical
    assert bf16.POISON_BF16 == POISON_BF16
