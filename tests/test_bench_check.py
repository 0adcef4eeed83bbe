"""The correctness checker against deliberately wrong kernels (numpy stand-ins for GPU launches).

Shapes are not multiples of any tile (67 x 45 x 129 and friends) on purpose.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from gemmlab.bench.check import (
    POISON_BITS,
    Checker,
    componentwise_factor,
    evaluate,
    poison,
    reference,
)
from gemmlab.numerics.bounds import FP32_U, gamma, normwise_bound

M, N, K = 67, 45, 129


def correct(a, b, c, alpha, beta):
    """A right FP32 kernel: float32 product (numpy's sgemm), alpha/beta epilogue, beta=0 → C unread."""
    acc = (a @ b).astype(np.float32)
    if beta == 0.0:
        c[...] = np.float32(alpha) * acc
    else:
        c[...] = np.float32(alpha) * acc + np.float32(beta) * c


def test_stated_bounds():
    assert FP32_U == 2.0**-24
    assert normwise_bound(2048) == 1e-4
    assert normwise_bound(16384) == 1e-4
    assert normwise_bound(65536) == pytest.approx(2e-4)  # grows like sqrt(K) past 16384
    assert gamma(1) == pytest.approx(FP32_U / (1 - FP32_U))
    assert componentwise_factor(2046) == pytest.approx(2048 * FP32_U / (1 - 2048 * FP32_U))
    assert gamma(2**24) == math.inf


def test_poison_is_the_payload_nan():
    p = poison(np, (3,))
    assert p.dtype == np.float32 and np.isnan(p).all()
    assert (p.view(np.uint32) == POISON_BITS).all()


def test_a_correct_kernel_passes_both_passes():
    chk = Checker(seed=0)
    r = chk.check(correct, M, N, K, alpha=1.5, beta=-0.75)
    assert r.ok, r.reason
    assert r.reason == "ok"
    assert 0 < r.rel_err < 1e-6  # FP32 error on K=129 is ~1e-7, far under the 1e-4 bound
    assert len(r.passes) == 2 and [p["beta"] for p in r.passes] == [0.0, -0.75]
    assert (r.n_unwritten, r.n_nonfinite, r.n_over_bound, r.n_guard_written) == (0, 0, 0, 0)


def test_beta_zero_runs_one_pass():
    r = Checker(seed=1).check(correct, M, N, K)
    assert r.ok and len(r.passes) == 1


def test_each_check_draws_fresh_inputs():
    seen = []

    def spy(a, b, c, alpha, beta):
        seen.append((a.copy(), b.copy()))
        correct(a, b, c, alpha, beta)

    chk = Checker(seed=3)
    chk.check(spy, M, N, K)
    chk.check(spy, M, N, K)
    assert not np.array_equal(seen[0][0], seen[1][0])
    assert not np.array_equal(seen[0][1], seen[1][1])
    a = seen[0][0]
    assert a.dtype == np.float32 and a.min() >= -1 and a.max() < 1 and a.min() < 0 < a.max()  # zero-mean, no zeros
    assert np.count_nonzero(a == 0) == 0
    # the same seed reproduces the same draws
    again = []
    Checker(seed=3).check(lambda a, b, c, al, be: (again.append(a.copy()), correct(a, b, c, al, be)), M, N, K)
    assert np.array_equal(again[0], seen[0][0])


def test_stale_result_fails():
    """A kernel that stopped computing and leaves the previous run's result behind."""
    cache = {}

    def stale(a, b, c, alpha, beta):
        if "out" not in cache:
            correct(a, b, c, alpha, beta)
            cache["out"] = c.copy()
        else:
            c[...] = cache["out"]

    chk = Checker(seed=4)
    assert chk.check(stale, M, N, K).ok  # the first call really computes
    r = chk.check(stale, M, N, K)  # fresh inputs expose the stale output
    assert not r.ok
    assert r.n_over_bound > 0.9 * M * N
    assert r.rel_err > 1.0
    assert "exceed the FP32 componentwise bound" in r.reason


def test_one_wrong_element_fails_even_when_the_norm_hides_it():
    def one_off(a, b, c, alpha, beta):
        correct(a, b, c, alpha, beta)
        c[40, 17] *= np.float32(1.01)  # 1% off in one of 3015 elements

    r = Checker(seed=5).check(one_off, M, N, K)
    assert not r.ok
    assert r.n_over_bound == 1
    assert r.first_over_bound == (40, 17)
    assert r.rel_err < normwise_bound(K)  # the normwise test alone would have passed it
    assert r.reason.startswith("1 elements exceed the FP32 componentwise bound")
    assert "first at (40, 17)" in r.reason


def test_nan_fails_with_count_and_first_index():
    def nan_out(a, b, c, alpha, beta):
        correct(a, b, c, alpha, beta)
        c[5, 7] = np.nan  # a computed NaN (canonical bits, not the poison)
        c[60, 2] = np.inf

    r = Checker(seed=6).check(nan_out, M, N, K)
    assert not r.ok
    assert (r.n_nonfinite, r.first_nonfinite) == (2, (5, 7))
    assert r.reason == "2 elements are NaN or inf, first at (5, 7)"
    assert r.max_abs_err < 1e-4  # the finite elements are right; NaN alone fails it


def test_unwritten_tail_rows_fail():
    def skip_tail_rows(a, b, c, alpha, beta):
        full = np.empty_like(c)
        correct(a, b, full, alpha, beta)
        c[: M - 3] = full[: M - 3]  # like a kernel whose grid misses the last partial tile of rows

    r = Checker(seed=7).check(skip_tail_rows, M, N, K)
    assert not r.ok
    assert r.n_unwritten == 3 * N
    assert r.first_unwritten == (M - 3, 0)
    assert r.reason.startswith(f"{3 * N} of {M * N} elements still hold the poison value, first at ({M - 3}, 0)")


def test_unwritten_tail_columns_fail():
    def skip_tail_cols(a, b, c, alpha, beta):
        full = np.empty_like(c)
        correct(a, b, full, alpha, beta)
        c[:, : N - 13] = full[:, : N - 13]  # N=45 rounded down to a multiple of 32

    r = Checker(seed=8).check(skip_tail_cols, M, N, K)
    assert (r.ok, r.n_unwritten, r.first_unwritten) == (False, 13 * M, (0, N - 13))


def test_reading_c_when_beta_is_zero_fails():
    """BLAS: C is not read when beta = 0. A kernel that computes beta*C anyway turns the poison into NaN."""

    def reads_c(a, b, c, alpha, beta):
        c[...] = np.float32(alpha) * (a @ b) + np.float32(beta) * c

    r = Checker(seed=9).check(reads_c, M, N, K)
    assert not r.ok
    assert r.n_unwritten + r.n_nonfinite == M * N


def test_out_of_bounds_write_past_c_fails():
    def overruns(a, b, c, alpha, beta):
        correct(a, b, c, alpha, beta)
        # a kernel without bounds checks writes one row past the end of C
        wide = np.lib.stride_tricks.as_strided(c, shape=(c.shape[0] + 1, c.shape[1]), strides=c.strides)
        wide[-1, :] = 1.0

    r = Checker(seed=10).check(overruns, M, N, K)
    assert not r.ok
    assert r.n_guard_written == N
    assert r.reason == f"{N} elements past the end of C were overwritten (out-of-bounds writes)"


def test_ignoring_beta_fails_in_the_beta_pass():
    def no_beta(a, b, c, alpha, beta):
        c[...] = np.float32(alpha) * (a @ b)

    r = Checker(seed=11).check(no_beta, M, N, K, alpha=1.0, beta=0.5)
    assert not r.ok
    assert r.passes[0]["reason"] == "ok"  # right when beta is 0
    assert r.reason.startswith("beta=0.5 pass: ")


def test_unwritten_elements_fail_in_the_beta_pass_too():
    """With beta != 0 C holds C0, not poison; an unwritten element still differs from alpha·AB + beta·C0."""

    def skips_one(a, b, c, alpha, beta):
        keep = c[3, 4].copy()
        correct(a, b, c, alpha, beta)
        if beta != 0.0:
            c[3, 4] = keep

    r = Checker(seed=12).check(skips_one, M, N, K, beta=2.0)
    assert not r.ok
    assert r.passes[1]["n_over_bound"] == 1 and r.first_over_bound == (3, 4)


def test_reduced_precision_fails_the_normwise_bound():
    """TF32-like inputs (10 mantissa bits): every element inside the componentwise bound at this K,
    but the normwise error (~3e-4) is over the 1e-4 FP32 bound."""

    def tf32(x):
        bits = x.view(np.uint32) & np.uint32(0xFFFFE000)  # keep 10 of the 23 mantissa bits
        return bits.view(np.float32)

    def low_precision(a, b, c, alpha, beta):
        c[...] = (tf32(a.copy()) @ tf32(b.copy())).astype(np.float32)

    r = Checker(seed=13).check(low_precision, 256, 256, 2048)
    assert not r.ok
    assert r.n_over_bound == 0
    assert 1e-4 < r.rel_err < 1e-3
    assert r.reason.startswith("relative error ") and r.reason.endswith("exceeds the FP32 bound 1.0e-04")


def test_evaluate_core_on_hand_made_arrays():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    b = np.array([[0.5, -1.0], [0.25, 2.0]], dtype=np.float32)
    ref, absref = reference(a, b, 1.0, 0.0)
    assert ref.dtype == np.float64
    assert ref.tolist() == [[1.0, 3.0], [2.5, 5.0]]
    assert absref.tolist() == [[1.0, 5.0], [2.5, 11.0]]
    out = ref.astype(np.float32)
    assert evaluate(out, ref, absref, 2).ok
    out[1, 1] = poison(np, (1,))[0]
    r = evaluate(out, ref, absref, 2)
    assert (r.ok, r.n_unwritten, r.first_unwritten) == (False, 1, (1, 1))
    assert r.rel_err == pytest.approx(5.0 / np.linalg.norm(ref))  # unwritten counted as missing (error = ref)


def test_all_nan_output_has_no_relative_error():
    ref = np.ones((2, 2))
    r = evaluate(np.full((2, 2), np.nan, dtype=np.float32), ref, ref, 4)
    assert not r.ok and math.isnan(r.rel_err) and r.n_nonfinite == 4
