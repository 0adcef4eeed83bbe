"""The BF16 tensor-core rungs on a GPU: every rung (and its float32-output and scalar twins)
correct at tile-aligned, awkward and tiny shapes through the harness's own checker (fresh bf16
inputs, poisoned output and guard, beta = 0 and beta != 0 passes, the derived BF16 bound), the
vector/scalar choice, clean refusals, and the cuBLAS BF16 reference. Skipped without a GPU
(conftest) and, per rung, on a GPU without the rung's architecture."""

from __future__ import annotations

import zlib

import pytest

from gemmlab.errors import InputError
from gemmlab.kernels.families import arch_refusal
from gemmlab.kernels.ladders import TC_LADDER, scalar_twin
from gemmlab.kernels.registry import all_rungs, get

pytestmark = pytest.mark.gpu

ALPHA, BETA = 1.25, -0.5
SHAPES = [
    (128, 128, 128),   # whole tiles
    (1, 1, 1),
    (7, 7, 7),
    (127, 127, 127),
    (1000, 3000, 77),  # K % 8 != 0: mma_sync_bf16 runs its scalar twin
    (1000, 3000, 80),  # vector path with partial edge tiles
    (64, 72, 4104),    # long K, N % 8 == 0 but not a tile multiple
    (300, 520, 136),   # Hopper rungs: partial tiles in M and N, K not a multiple of BK = 64
    (2000, 264, 8),    # one partial k-tile; persistent CTAs with more tiles than SMs... and fewer
    (4097, 264, 136),  # vector path: a 1-row last tile-row band (grouped order), partial k-tile
    (129, 4097, 257),  # scalar twins: odd N and K, long N
    (200, 256, 40),    # fewer k-tiles than cp_async_bf16's pipeline stages
]
LARGE = (4096, 4096, 4096)  # the ladder rungs only (time)


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.fixture(scope="module")
def dev():
    from gemmlab.runtime import device

    return device.info()


def _skip_unless_runnable(rung, dev):
    reason = arch_refusal(rung, dev.cc_major, dev.cc_minor, dev.name)
    if reason:
        pytest.skip(reason)


def _check(cp, run, shape, rung, seed=0):
    from gemmlab.bench.check import Checker

    M, N, K = shape
    checker = Checker(xp=cp, seed=seed, synchronize=cp.cuda.get_current_stream().synchronize)
    return checker.check(run, M, N, K, ALPHA, BETA, rung.dtype, rung.out_dtype)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("rung", all_rungs("bf16"), ids=lambda r: r.name)
def test_bf16_rung_correct(cp, dev, rung, shape):
    from gemmlab.runtime.launch import prepare

    _skip_unless_runnable(rung, dev)
    if rung.refusal(*shape):  # TMA rungs: K or N not a multiple of 8 is refused, never wrong
        with pytest.raises(InputError, match="use wgmma_bf16"):
            prepare(rung, *shape)
        return
    res = _check(cp, prepare(rung, *shape), shape, rung, seed=zlib.crc32(f"{rung.name}{shape}".encode()))
    assert res.ok, f"{rung.name} {shape}: {res.reason}"


@pytest.mark.parametrize("rung", TC_LADDER, ids=lambda r: r.name)
def test_bf16_ladder_rung_correct_large(cp, dev, rung):
    from gemmlab.runtime.launch import prepare

    _skip_unless_runnable(rung, dev)
    res = _check(cp, prepare(rung, *LARGE), LARGE, rung, seed=17)
    assert res.ok, f"{rung.name} {LARGE}: {res.reason}"


@pytest.mark.parametrize("rung", [r for r in TC_LADDER if r.arch == "sm_90a"], ids=lambda r: r.name)
def test_hopper_rung_correct_8192(cp, dev, rung):
    from gemmlab.runtime.launch import prepare

    _skip_unless_runnable(rung, dev)
    shape = (8192, 8192, 8192)
    res = _check(cp, prepare(rung, *shape), shape, rung, seed=23)
    assert res.ok, f"{rung.name} {shape}: {res.reason}"


def _bits(cp, shape, seed):
    from gemmlab.numerics.bf16 import to_bits

    rng = cp.random.default_rng(seed)
    return to_bits(rng.random(shape, dtype=cp.float32) * 2 - 1)


def _misaligned(cp, x):
    """A C-contiguous copy of x whose data starts one element (2 or 4 bytes) past a 16-byte
    boundary."""
    flat = cp.empty(x.size + 1, dtype=x.dtype)
    view = flat[1:].reshape(x.shape)
    view[...] = x
    assert view.flags.c_contiguous and view.data.ptr % 16 == x.itemsize
    return view


@pytest.mark.parametrize("rung", [r for r in TC_LADDER if r.vectorized], ids=lambda r: r.name)
def test_vector_path_choice_and_misaligned_fallback(cp, dev, rung):
    from gemmlab.bench.check import reference
    from gemmlab.numerics.bf16 import from_bits, tolerance, within
    from gemmlab.runtime.launch import prepare

    _skip_unless_runnable(rung, dev)
    M, N, K = 130, 136, 264
    a, b, c = _bits(cp, (M, K), 1), _bits(cp, (K, N), 2), _bits(cp, (M, N), 3)
    run = prepare(rung, M, N, K)
    assert run.rung_for(a, b, c) is rung
    assert prepare(rung, M, N, K - 1).rung == scalar_twin(rung)  # K % 8 != 0
    assert prepare(rung, M, N - 4, K).rung == scalar_twin(rung)  # N % 8 != 0
    a_m, c_m = _misaligned(cp, a), _misaligned(cp, c)
    assert run.rung_for(a_m, b, c_m) == scalar_twin(rung)
    run(a_m, b, c_m, ALPHA, BETA)
    ref, absref = reference(from_bits(a), from_bits(b), ALPHA, BETA, from_bits(c), xp=cp)
    ok, worst, n_over = within(from_bits(c_m), ref, absref, tolerance(K, "bf16"))
    assert ok, (worst, n_over)


@pytest.mark.parametrize("name", ["wgmma_bf16", "wgmma_bf16_f32out"])
def test_wgmma_misaligned_operands_take_the_scalar_twin(cp, dev, name):
    """Misaligned A and C (2 bytes past 16): the scalar twin runs, and its paired epilogue
    stores fall back to single stores where the pair's address is not aligned."""
    from gemmlab.bench.check import reference
    from gemmlab.numerics.bf16 import from_bits, tolerance, within
    from gemmlab.runtime.launch import prepare

    rung = get(name)
    _skip_unless_runnable(rung, dev)
    M, N, K = 130, 136, 264
    a, b = _bits(cp, (M, K), 4), _bits(cp, (K, N), 5)
    c = (_bits(cp, (M, N), 6) if rung.out_dtype == "bf16"
         else cp.random.default_rng(6).random((M, N), dtype=cp.float32))
    c0 = c.copy()
    run = prepare(rung, M, N, K)
    a_m, c_m = _misaligned(cp, a), _misaligned(cp, c)
    assert run.rung_for(a_m, b, c_m) == scalar_twin(rung)
    run(a_m, b, c_m, ALPHA, BETA)
    c_in = from_bits(c0) if rung.out_dtype == "bf16" else c0
    out = from_bits(c_m) if rung.out_dtype == "bf16" else c_m
    ref, absref = reference(from_bits(a), from_bits(b), ALPHA, BETA, c_in, xp=cp)
    ok, worst, n_over = within(out, ref, absref, tolerance(K, rung.out_dtype))
    assert ok, (worst, n_over)


@pytest.mark.parametrize("name", ["tma_bf16", "ws_bf16", "persistent_bf16"])
def test_tma_rungs_refuse_misaligned_operands(cp, dev, name):
    from gemmlab.runtime.launch import prepare

    rung = get(name)
    _skip_unless_runnable(rung, dev)
    M, N, K = 128, 128, 128
    a, b, c = _bits(cp, (M, K), 1), _bits(cp, (K, N), 2), _bits(cp, (M, N), 3)
    run = prepare(rung, M, N, K)
    with pytest.raises(InputError, match="^A: TMA needs a 16-byte aligned base"):
        run(_misaligned(cp, a), b, c)


def test_bf16_launch_refuses_wrong_operands(cp, dev):
    from gemmlab.runtime.launch import gemm

    _skip_unless_runnable(get("wmma_bf16"), dev)
    a, b = _bits(cp, (8, 4), 1), _bits(cp, (4, 6), 2)
    with pytest.raises(InputError, match="expected dtype uint16"):
        gemm("wmma_bf16", a.astype(cp.float32), b, cp.zeros((8, 6), cp.uint16))
    with pytest.raises(InputError, match="c: expected dtype uint16"):
        gemm("wmma_bf16", a, b, cp.zeros((8, 6), cp.float32))
    with pytest.raises(InputError, match="c: expected dtype float32"):
        gemm("wmma_bf16_f32out", a, b, cp.zeros((8, 6), cp.uint16))
    with pytest.raises(InputError, match="b: expected 4 rows"):
        gemm("wmma_bf16", a, _bits(cp, (5, 6), 3), cp.zeros((8, 6), cp.uint16))
    from gemmlab.runtime.launch import prepare

    run = prepare("wmma_bf16", 8, 6, 4)
    with pytest.raises(InputError, match="takes a, b as uint16"):
        run(a.astype(cp.float32), b.astype(cp.float32), cp.zeros((8, 6), cp.float32))


def test_arch_refusal_on_this_gpu_is_consistent(dev):
    from gemmlab.runtime import compile as comp

    for rung in TC_LADDER:
        reason = arch_refusal(rung, dev.cc_major, dev.cc_minor, dev.name)
        if reason is None:
            comp.compile_rung(rung)  # compiles and loads
        else:
            with pytest.raises(comp.ArchUnsupported, match="needs"):
                comp.compile_rung(rung)


@pytest.mark.parametrize("out", ["bf16", "fp32"])
@pytest.mark.parametrize("shape", [(128, 128, 128), (1000, 3000, 77), (7, 7, 7)],
                         ids=lambda s: "x".join(map(str, s)))
def test_cublas_bf16_reference_correct(cp, out, shape):
    from gemmlab.bench.check import Checker
    from gemmlab.runtime import cublas

    M, N, K = shape
    checker = Checker(xp=cp, seed=23, synchronize=cp.cuda.get_current_stream().synchronize)
    res = checker.check(cublas.gemm_bf16, M, N, K, ALPHA, BETA, "bf16", out)
    assert res.ok, f"cuBLAS bf16 {shape} {out}: {res.reason}"


def test_checker_catches_a_wrong_bf16_kernel_on_the_gpu(cp, dev):
    """The bound is not so loose that a kernel missing one k-tile passes at K = 4096."""
    from gemmlab.runtime.launch import prepare

    rung = get("mma_sync_bf16")
    _skip_unless_runnable(rung, dev)
    M, N, K = 256, 256, 4096
    good = prepare(rung, M, N, K)

    def skips_a_tile(a, b, c, al, be):
        a2 = a.copy()
        a2[:, 1024:1056] = 0
        good(a2, b, c, al, be)

    res = _check(cp, skips_a_tile, (M, N, K), rung, seed=29)
    assert not res.ok


def test_profile_target_launches_bf16_rungs(dev):
    """`gemmlab profile mma_sync_bf16` runs this program under ncu: bf16 operands, the scalar
    twin where K % 8 != 0."""
    from gemmlab.errors import UserError
    from gemmlab.profile import target

    _skip_unless_runnable(get("mma_sync_bf16"), dev)
    try:
        assert target.run("mma_sync_bf16", (256, 256, 256), 1) == "gemmlab_mma_sync_bf16"
        assert target.run("mma_sync_bf16", (100, 64, 77), 0) == "gemmlab_mma_sync_bf16_scalar"
        assert target.run("wmma_bf16_f32out", (33, 65, 17), 0) == "gemmlab_wmma_bf16_f32out"
    except UserError as e:
        if "NVTX" in str(e):
            pytest.skip(str(e))
        raise
