"""Every rung computes C = alpha * A @ B + beta * C correctly at odd sizes (GPU; skipped without
one). Reference: the same product in float64."""

from __future__ import annotations

import zlib

import pytest

from gemmlab.errors import InputError
from gemmlab.kernels.ladders import LADDER, scalar_twin
from gemmlab.kernels.registry import all_rungs, autotune_candidates, get

pytestmark = pytest.mark.gpu

# ||C - ref|| / ||ref|| bound for an FP32 kernel. Each output is a K-term FP32 dot product whose
# rounding error grows like sqrt(K) * 2^-24 for random data (about 4e-6 at K = 4097, and the
# worst-case bound K * 2^-24 is 2.4e-4 only with adversarial signs). 1e-4 leaves that margin yet
# fails TF32 (about 3e-4, 10-bit mantissa), a skipped tile or a wrong index (order 1).
TOL = 1e-4

SHAPES = [
    (1, 1, 1),
    (7, 7, 7),
    (127, 33, 65),
    (128, 132, 260),  # vector path (N, K multiples of 4) with partial edge tiles
    (256, 256, 256),  # whole tiles only
    (1000, 1000, 1000),
    (4097, 129, 257),
]
ALPHA, BETA = 1.25, -0.5

# The abstract "autotuned" rung triggers a tuning run; it is tested on its own below.
RUNGS = [r for r in all_rungs() if r.name != "autotuned"]


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


def rel_err(cp, c, ref) -> float:
    """||c - ref|| / ||ref|| in float64; NaN if c holds a NaN (so `err < TOL` fails)."""
    c64 = c.astype(cp.float64)
    if not bool(cp.isfinite(c64).all()):
        return float("nan")
    return float(cp.linalg.norm(c64 - ref) / cp.linalg.norm(ref))


def operands(cp, M, N, K, seed):
    rng = cp.random.default_rng(seed)  # fresh inputs per case
    a = rng.standard_normal((M, K), dtype=cp.float32)
    b = rng.standard_normal((K, N), dtype=cp.float32)
    c0 = rng.standard_normal((M, N), dtype=cp.float32)
    return a, b, c0


def reference(cp, a, b, c0, alpha, beta):
    ref = alpha * (a.astype(cp.float64) @ b.astype(cp.float64))
    if beta != 0:
        ref += beta * c0.astype(cp.float64)
    return ref


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("rung", RUNGS, ids=lambda r: r.name)
def test_rung_correct(cp, rung, shape):
    from gemmlab.runtime.launch import prepare

    M, N, K = shape
    a, b, c0 = operands(cp, M, N, K, seed=zlib.crc32(f"{rung.name}{shape}".encode()))
    run = prepare(rung, M, N, K)
    # beta != 0: C is an input; every element must be overwritten with the right value.
    c = c0.copy()
    run(a, b, c, ALPHA, BETA)
    err = rel_err(cp, c, reference(cp, a, b, c0, ALPHA, BETA))
    assert err < TOL, f"{rung.name} {shape}: relative error {err}"
    # beta == 0: C is poisoned with NaN and must not be read (BLAS), only written.
    c = cp.full((M, N), cp.nan, dtype=cp.float32)
    run(a, b, c, ALPHA, 0.0)
    err = rel_err(cp, c, reference(cp, a, b, c0, ALPHA, 0.0))
    assert err < TOL, f"{rung.name} {shape} beta=0: relative error {err}"
    cp.cuda.get_current_stream().synchronize()


def test_vector_rungs_take_the_vector_path_when_aligned(cp):
    from gemmlab.runtime.launch import prepare

    M, N, K = 128, 132, 260
    a, b, c = operands(cp, M, N, K, seed=7)
    # autotuned and dispatch are abstract: prepare() hands them to a tuned candidate / a shape plan.
    for r in [x for x in all_rungs() if x.vectorized and x.name not in ("autotuned", "dispatch")]:
        assert prepare(r, M, N, K).rung_for(a, b, c) is r
        assert prepare(r, M, N, K - 1).rung == scalar_twin(r)  # K % 4 != 0: scalar only


def _misaligned(cp, x):
    """A C-contiguous copy of x whose data starts 4 bytes past a 16-byte boundary."""
    flat = cp.empty(x.size + 1, dtype=cp.float32)
    view = flat[1:].reshape(x.shape)
    view[...] = x
    assert view.flags.c_contiguous and view.data.ptr % 16 == 4
    return view


@pytest.mark.parametrize("rung", [r for r in LADDER + autotune_candidates()
                                  if r.vectorized and r.name != "autotuned"],
                         ids=lambda r: r.name)
def test_vector_rungs_fall_back_on_misaligned_pointers(cp, rung):
    from gemmlab.runtime.launch import prepare

    M, N, K = 130, 132, 260
    a, b, c0 = operands(cp, M, N, K, seed=11)
    a_m, c_m = _misaligned(cp, a), _misaligned(cp, c0)
    run = prepare(rung, M, N, K)
    assert run.rung_for(a_m, b, c_m) == scalar_twin(rung)
    run(a_m, b, c_m, ALPHA, BETA)
    assert rel_err(cp, c_m, reference(cp, a, b, c0, ALPHA, BETA)) < TOL


def test_checker_rejects_nan_and_unwritten_output(cp):
    a, b, c0 = operands(cp, 64, 64, 64, seed=3)
    ref = reference(cp, a, b, c0, 1.0, 0.0)
    good = ref.astype(cp.float32)
    assert rel_err(cp, good, ref) < TOL
    one_nan = good.copy()
    one_nan[5, 7] = cp.nan
    assert not rel_err(cp, one_nan, ref) < TOL
    stale = good.copy()
    stale[-1, :] = 0.0  # an unwritten last row (poison would be NaN; zeros must fail too)
    assert not rel_err(cp, stale, ref) < TOL


def test_cublas_reference_is_true_fp32(cp):
    from gemmlab.runtime import cublas

    M, N, K = 1024, 1024, 4096
    a, b, _ = operands(cp, M, N, K, seed=5)
    ref = reference(cp, a, b, None, 1.0, 0.0)
    c = cp.full((M, N), cp.nan, dtype=cp.float32)
    cublas.sgemm(a, b, c)
    err_fp32 = rel_err(cp, c, ref)
    assert cublas.tf32_off() and "TF32 off" in cublas.math_mode()
    # FP32 FFMA: ~1e-6 here. TF32 (10-bit mantissa inputs): ~3e-4. The same check on a handle
    # allowed to use TF32 must fail, or this test could not tell the two apart.
    assert err_fp32 < 1e-5, err_fp32
    c_tf32 = cp.full((M, N), cp.nan, dtype=cp.float32)
    cublas.sgemm(a, b, c_tf32, math="tf32")
    err_tf32 = rel_err(cp, c_tf32, ref)
    assert "TF32 on" in cublas.math_mode("tf32")
    assert err_tf32 > 1e-4, err_tf32


def test_cublas_alpha_beta(cp):
    from gemmlab.runtime import cublas

    a, b, c0 = operands(cp, 127, 33, 65, seed=9)
    c = c0.copy()
    cublas.sgemm(a, b, c, ALPHA, BETA)
    assert rel_err(cp, c, reference(cp, a, b, c0, ALPHA, BETA)) < TOL


def test_launch_rejects_bad_operands(cp):
    from gemmlab.runtime.launch import gemm

    a = cp.ones((8, 4), dtype=cp.float32)
    b = cp.ones((4, 6), dtype=cp.float32)
    c = cp.zeros((8, 6), dtype=cp.float32)
    with pytest.raises(InputError, match="float32"):
        gemm("coalesced", a.astype(cp.float64), b, c)
    with pytest.raises(InputError, match="b: expected 4 rows"):
        gemm("coalesced", a, cp.ones((5, 6), dtype=cp.float32), c)
    with pytest.raises(InputError, match="c: expected shape"):
        gemm("coalesced", a, b, cp.zeros((6, 8), dtype=cp.float32))
    with pytest.raises(InputError, match="C-contiguous"):
        gemm("coalesced", cp.ones((4, 8), dtype=cp.float32).T, b, c)
    with pytest.raises(InputError, match="unknown rung"):
        gemm("nope", a, b, c)
    with pytest.raises(InputError, match="alias"):
        sq = cp.ones((4, 4), dtype=cp.float32)
        gemm("coalesced", sq, cp.ones((4, 4), dtype=cp.float32), sq)


def test_autotuned_tunes_once_then_remembers(cp, monkeypatch, tmp_path):
    from gemmlab.runtime import autotune
    from gemmlab.runtime.launch import gemm

    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path))
    M = N = K = 512
    cands = autotune_candidates()[:2]
    result = autotune.tune(M, N, K, candidates=cands, repeats=3, backends=("nvrtc",))
    assert result.winner in {c.name for c in cands} and result.backend == "nvrtc"
    assert set(result.median_ms) == {f"{c.name}@nvrtc" for c in cands}
    assert all(t > 0 for t in result.median_ms.values())

    def no_retune(*args, **kwargs):
        raise AssertionError("autotuned re-tuned although a record exists")

    monkeypatch.setattr(autotune, "tune", no_retune)
    assert autotune.resolve(M, N, K) == (get(result.winner), "nvrtc")
    a, b, c0 = operands(cp, M, N, K, seed=13)
    c = c0.copy()
    gemm(get("autotuned"), a, b, c, ALPHA, BETA)
    assert rel_err(cp, c, reference(cp, a, b, c0, ALPHA, BETA)) < TOL
