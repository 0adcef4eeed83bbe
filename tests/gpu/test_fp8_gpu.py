"""The FP8 (e4m3) rung and the cuBLASLt FP8 reference on a GPU: the rung correct at tile-aligned,
awkward and large shapes through the harness's own checker (fresh e4m3 inputs with B drawn N x K,
poisoned output and guard, beta = 0 (TMA-store epilogue) and beta != 0 (direct epilogue) passes,
the FP8 bound), N % 8 != 0 (direct epilogue, unused C map), clean refusals, and the reference.
Skipped without a GPU (conftest) and, per test, on a GPU without sm_90a."""

from __future__ import annotations

import zlib

import pytest

from gemmlab.errors import InputError, UserError
from gemmlab.kernels.families import arch_refusal
from gemmlab.kernels.ladders import FP8_LADDER
from gemmlab.kernels.registry import get

pytestmark = pytest.mark.gpu

ALPHA, BETA = 1.25, -0.5
SHAPES = [
    (128, 256, 128),     # one whole tile, one k-tile
    (300, 520, 144),     # partial tiles in M and N, a 16-deep last k-tile
    (1000, 3000, 128),   # 96 tiles in 48 cluster units: fewer CTAs than SMs
    (4096, 4096, 4096),  # the ladder's size
]
EDGE = [
    (1, 1, 16),          # one element; K = 16, the smallest accepted
    (200, 517, 64),      # N % 8 != 0: direct epilogue, the C map unused
    (300, 8, 272),       # 3 tile-rows: the last cluster's second CTA has no valid row; N = 8
    (4097, 264, 160),    # a 1-row last band of the grouped order, partial k-tile
]


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.fixture(scope="module")
def dev():
    from gemmlab.runtime import device

    return device.info()


def _skip_unless_sm90a(dev):
    reason = arch_refusal(get("persistent_fp8"), dev.cc_major, dev.cc_minor, dev.name)
    if reason:
        pytest.skip(reason)


def _check(cp, run, shape, seed, alpha=ALPHA, beta=BETA):
    from gemmlab.bench.check import Checker

    M, N, K = shape
    checker = Checker(xp=cp, seed=seed, synchronize=cp.cuda.get_current_stream().synchronize)
    return checker.check(run, M, N, K, alpha, beta, "fp8", "bf16")


@pytest.mark.parametrize("shape", SHAPES + EDGE, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("rung", FP8_LADDER, ids=lambda r: r.name)
def test_fp8_rung_correct(cp, dev, rung, shape):
    from gemmlab.runtime.launch import prepare

    _skip_unless_sm90a(dev)
    seed = zlib.crc32(f"{rung.name}{shape}".encode())
    res = _check(cp, prepare(rung, *shape), shape, seed)
    assert res.ok, f"{rung.name} {shape}: {res.reason}"


@pytest.mark.parametrize("rung", FP8_LADDER, ids=lambda r: r.name)
def test_fp8_rung_correct_8192(cp, dev, rung):
    from gemmlab.runtime.launch import prepare

    _skip_unless_sm90a(dev)
    shape = (8192, 8192, 8192)
    res = _check(cp, prepare(rung, *shape), shape, seed=23, beta=0.0)
    assert res.ok, f"{rung.name} {shape}: {res.reason}"


def _bits(cp, shape, seed):
    from gemmlab.numerics import fp8

    rng = cp.random.default_rng(seed)
    return fp8.to_bits(rng.random(shape, dtype=cp.float32) * 2 - 1)


def test_fp8_refusals(cp, dev):
    from gemmlab.runtime.launch import gemm, prepare

    _skip_unless_sm90a(dev)
    with pytest.raises(InputError, match="needs K a multiple of 16"):
        prepare("persistent_fp8", 128, 256, 136)
    M, N, K = 128, 256, 128
    a = _bits(cp, (M, K), 1)
    c = cp.zeros((M, N), cp.uint16)
    with pytest.raises(InputError, match="is K x N; fp8 takes B as N x K"):
        gemm("persistent_fp8", a, _bits(cp, (K, N), 2), c)
    b = _bits(cp, (N, K), 3)
    flat = cp.empty(a.size + 1, dtype=cp.uint8)
    a_m = flat[1:].reshape(a.shape)
    a_m[...] = a
    with pytest.raises(InputError, match="^A: TMA needs a 16-byte aligned base"):
        prepare("persistent_fp8", M, N, K)(a_m, b, c)


def test_fp8_compiles_and_loads_or_refuses_by_arch(dev):
    from gemmlab.runtime import compile as comp

    for rung in FP8_LADDER:
        if arch_refusal(rung, dev.cc_major, dev.cc_minor, dev.name) is None:
            comp.compile_rung(rung)
        else:
            with pytest.raises(comp.ArchUnsupported, match="needs sm_90a"):
                comp.compile_rung(rung)


# --- the reference ------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(128, 256, 128), (300, 520, 144), (1000, 3000, 128),
                                   (4096, 4096, 4096)], ids=lambda s: "x".join(map(str, s)))
def test_cublaslt_fp8_reference_correct(cp, dev, shape):
    """The selected cuBLASLt FP8 candidate passes the same checker (beta = 0: torch._scaled_mm
    may win; beta != 0 would exclude it). cuBLASLt may have no FP8 algorithm for an odd shape: a
    clean refusal is reported as a skip with its reason, never a wrong result."""
    from gemmlab.bench.cublas_best import best_fp8

    _skip_unless_sm90a(dev)
    M, N, K = shape
    try:
        run = best_fp8(M, N, K, 1.0, 0.0, names=False)
    except UserError as e:
        if shape in ((128, 256, 128), (4096, 4096, 4096)):
            raise  # these shapes cuBLASLt FP8 must take
        pytest.skip(f"cuBLASLt FP8 refuses {shape}: {e}")
    rec = run.launched
    modes = {c.get("fast_accum") for c in rec["candidates"] if c["median_ms"] is not None}
    assert True in modes, rec["candidates"]  # the like-for-like mode was timed
    res = _check(cp, run, shape, seed=31, alpha=1.0, beta=0.0)
    assert res.ok, f"cuBLASLt FP8 {shape} ({run.summary}): {res.reason}"


def test_cublaslt_fp8_with_beta(cp, dev):
    from gemmlab.bench.cublas_best import best_fp8

    _skip_unless_sm90a(dev)
    shape = (256, 512, 256)
    run = best_fp8(*shape, ALPHA, BETA, names=False)
    assert run.selection.winner.candidate.kind == "cublaslt"  # torch has no beta term
    res = _check(cp, run, shape, seed=37)
    assert res.ok, res.reason


def test_rung_and_cublaslt_fast_accum_agree(cp, dev):
    """The rung and cuBLASLt with FAST_ACCUM = 1 (the same accumulation: no promotion) agree
    within the FP8 normwise bound at K = 4096; the printed figure says how closely."""
    from gemmlab.bench.cublas_best import best_fp8
    from gemmlab.numerics import bf16
    from gemmlab.runtime.launch import prepare

    _skip_unless_sm90a(dev)
    M = N = K = 4096
    a, b = _bits(cp, (M, K), 41), _bits(cp, (N, K), 42)
    c_rung, c_lt = cp.zeros((M, N), cp.uint16), cp.zeros((M, N), cp.uint16)
    prepare("persistent_fp8", M, N, K)(a, b, c_rung)
    best = best_fp8(M, N, K, names=False)
    fast = [o for o in best.selection.outcomes
            if o.candidate.detail.get("fast_accum") is True and o.median_s is not None
            and o.candidate.kind == "cublaslt"]
    assert fast
    fast[0].candidate.run(a, b, c_lt, 1.0, 0.0)
    cp.cuda.get_current_stream().synchronize()
    x, y = bf16.from_bits(c_rung).astype(cp.float64), bf16.from_bits(c_lt).astype(cp.float64)
    rel = float(cp.linalg.norm(x - y) / cp.linalg.norm(y))
    print(f"rung vs {fast[0].candidate.name}: normwise {rel:.3e}")
    from gemmlab.numerics import fp8

    assert rel <= fp8.tolerance(K).normwise
