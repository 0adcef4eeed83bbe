"""The FP8 (e4m3) rung without a GPU: registry entry and launch needs, the TN layout and its
refusals, the kernel wrapper, the tensor-map parameters and the launcher's wiring (fake CuPy
arrays, a fake compiled kernel)."""

from __future__ import annotations

import types

import numpy as np
import pytest

from fakes_bench import FakeArray

from gemmlab.errors import InputError
from gemmlab.kernels import families, registry
from gemmlab.kernels.families import LaunchNeeds
from gemmlab.kernels.ladders import FP8_LADDER, FP8_SHAPE_RUNGS
from gemmlab.kernels.registry import all_rungs, get
from gemmlab.kernels.source import read_source, translation_unit, wrapper
from gemmlab.runtime import tma


# --- registry -------------------------------------------------------------------------------
def test_fp8_ladder_entry_and_needs():
    assert [r.name for r in FP8_LADDER] == ["persistent_fp8"]
    r = get("persistent_fp8")
    assert (r.dtype, r.out_dtype, r.accum_dtype, r.arch) == ("fp8", "bf16", "fp32", "sm_90a")
    assert r.b_layout == "nk" and get("persistent_bf16").b_layout == "kn"
    assert r.tma and r.persistent and r.tma_store and r.takes_c_map
    p = r.params
    assert (p["BM"], p["BN"], p["BK"], p["CLUSTER"]) == (128, 256, 128, 2)
    smem = p["STAGES"] * (128 + 256) * 128 + 2 * 64 * p["EPI_PIECE"] * 2 + 16 * p["STAGES"] + 1024
    assert r.needs == LaunchNeeds(arch="sm_90a", dynamic_smem=smem, cluster=(2, 1, 1),
                                  tensor_maps=3)
    assert smem <= 227 * 1024  # the H100's opt-in per block
    # the same stage bytes as the bf16 rung it is a diff away from (twice the K per stage)
    b = get("persistent_bf16")
    assert r.dynamic_smem == b.dynamic_smem and r.threads == b.threads == 384
    assert r.vector_elems == 16 and r.kernel == "gemmlab_persistent_fp8"


def test_fp8_is_reachable_like_the_other_ladders():
    assert registry.ladder("fp8") == FP8_LADDER
    assert all_rungs("fp8") == FP8_LADDER + FP8_SHAPE_RUNGS  # plus dispatch_fp8, off the climb
    assert set(FP8_LADDER) <= set(all_rungs(None))
    assert not set(FP8_LADDER) & set(all_rungs("bf16")) and not set(FP8_LADDER) & set(all_rungs())
    assert "fp8" in families.DTYPES and "persistent_fp8" in registry.names()
    with pytest.raises(InputError, match="fp8 rungs: persistent_fp8"):
        get("persistent_fp9")
    assert families.b_shape("fp8", 64, 32) == (32, 64) and families.b_shape("bf16", 64, 32) == (64, 32)


def test_fp8_refuses_k_not_a_multiple_of_16_and_nothing_else():
    r = get("persistent_fp8")
    for shape in [(128, 256, 128), (300, 520, 144), (1000, 3000, 128), (1, 1, 16), (7, 13, 48)]:
        assert r.refusal(*shape) is None, shape  # any M and N
    for shape in [(128, 256, 100), (64, 64, 8), (300, 520, 136)]:
        msg = r.refusal(*shape)
        assert msg.startswith("rung persistent_fp8 needs K a multiple of 16") and "\n" not in msg
        assert f"pad K with zeros to {-(-shape[2] // 16) * 16}" in msg


def test_bad_fp8_params_fail_at_construction():
    good = dict(FP8_LADDER[0].params)
    families.make_rung("ok", 1, "persistent_fp8", "x", **{**good, "CLUSTER": 1})
    # 2-D clusters up to the portable 8 CTAs, each share of A and B whole 8-row swizzle atoms
    families.make_rung("ok", 1, "persistent_fp8", "x", **{**good, "CLUSTER": 2, "CLUSTER_N": 4})
    for bad in ({"BK": 64}, {"BN": 192}, {"CLUSTER": 3}, {"CLUSTER": 4, "CLUSTER_N": 4},
                {"CLUSTER": 1, "CLUSTER_N": 32}, {"STAGES": 1}, {"EPI_PIECE": 96}):
        with pytest.raises(ValueError, match="FP8 Hopper tiling"):
            families.make_rung("bad", 1, "persistent_fp8", "x", **{**good, **bad})


def test_persistent_grid_is_whole_clusters():
    r = get("persistent_fp8")
    assert r.launch_config(4096, 4096, 4096, sms=132)[0] == (132, 1, 1)
    # 3 tile-rows -> 2 cluster-rows, 3 tile-columns: 6 cluster units = 12 CTAs
    assert r.launch_config(300, 520, 144, sms=132)[0] == (12, 1, 1)
    assert r.launch_config(128, 256, 128, sms=132)[0] == (2, 1, 1)


# --- kernel text ----------------------------------------------------------------------------
def test_wrapper_takes_uint8_operands_bf16_c_and_four_maps():
    w = wrapper(get("persistent_fp8"))
    assert "__cluster_dims__(2, 1, 1) __launch_bounds__(384, 1) gemmlab_persistent_fp8(" in w
    assert "const unsigned char* __restrict__ A" in w and "const unsigned char* __restrict__ B" in w
    assert "unsigned short* __restrict__ C" in w
    assert w.count("const __grid_constant__ gemmlab::tc::TensorMap") == 4  # A twice, B, C
    assert ("gemmlab::persistent_fp8<128, 256, 128, 4, 2, 8, 128, 0, 1, 0>(tmA, tmA_last, tmB, &tmC, "
            "M, N, K, alpha, beta, C);") in w


def test_kernel_source_uses_the_k_major_e4m3_wgmma():
    src = read_source("persistent_fp8.cu")
    assert "B is given as N x K row-major" in src  # the layout, stated in the header comment
    assert "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3" in src  # via tc_wgmma.cuh
    # both descriptors K-major: LBO 16 (unused), +32 bytes (2 units of 16) per k32 step, SBO 1024
    assert "desc_low(base, 16), desc_low(base + A_BYTES, 16)" in src
    assert "desc_with(a + 2 * kk, 1024), desc_with(b + 2 * kk, 1024)" in src
    assert "N % 8 == 0" in src  # the TMA-store epilogue only where C's pitch allows it
    tu = translation_unit(FP8_LADDER)
    assert "#include" not in tu and "// ---- begin tc_common.cuh" in tu


# --- tensor maps ----------------------------------------------------------------------------
def test_fp8_tensor_map_specs():
    r = get("persistent_fp8")
    a, b = tma.rung_specs(r, 1000, 3000, 144)
    assert (a.dims, a.pitch, a.box, a.elem_bytes, a.dtype) == ((144, 1000), 144, (128, 128), 1,
                                                               "uint8")
    assert (b.dims, b.pitch, b.box, b.elem_bytes, b.dtype) == ((144, 3000), 144, (128, 128), 1,
                                                               "uint8")
    for s in (a, b):
        s.check()
        assert s.box[0] * s.elem_bytes == 128  # one 128-byte swizzle row of K
    # one stage: A's box plus CLUSTER B boxes (one per CTA, multicast) = the kernel's STAGE_BYTES
    p = r.params
    assert a.box_bytes + p["CLUSTER"] * b.box_bytes == (p["BM"] + p["BN"]) * p["BK"]
    # a cluster of 1 would copy the whole 256-row B tile in one box (the TMA limit)
    _, b1 = tma.fp8_specs(64, 64, 64, 128, 128, 256)
    b1.check()
    assert tma.ELEMENT_TYPES["uint8"][0] == "CU_TENSOR_MAP_DATA_TYPE_UINT8" and tma.UINT8 == 0
    # bf16 rungs keep their maps
    a16, _ = tma.rung_specs(get("persistent_bf16"), 1000, 3000, 72)
    assert (a16.dims, a16.pitch, a16.box, a16.dtype) == ((72, 1000), 144, (64, 128), "bf16")


def test_fp8_tensor_map_refusals_say_e4m3():
    a, b = tma.fp8_specs(64, 64, 100, 128, 128, 128)
    with pytest.raises(InputError, match=r"^A: TMA needs rows whose pitch is a multiple of 16 "
                                         r"bytes, got 100 bytes \(100 e4m3 per row; use a "
                                         r"multiple of 16\)$"):
        a.check()
    with pytest.raises(InputError, match="box side 512"):
        tma.MapSpec("B", (128, 64), 128, (128, 512), elem_bytes=1, dtype="uint8").check()
    with pytest.raises(ValueError, match="element type"):
        tma.MapSpec("B", (128, 64), 128, (128, 64), elem_bytes=2, dtype="uint8").check()
    z = tma.zero_param()
    assert z.dtype.itemsize == 128 and not any(z.tobytes())


# --- launcher (fake CuPy arrays and kernel) --------------------------------------------------


@pytest.fixture
def fake_gpu(monkeypatch):
    """A fake CuPy module, device and compiler: the launcher runs to the kernel call, which is
    recorded; tensor maps are encoded as their specs."""
    from gemmlab.runtime import compile as comp
    from gemmlab.runtime import device

    mod = types.SimpleNamespace(ndarray=FakeArray)
    monkeypatch.setattr(device, "require_cupy", lambda: mod)
    monkeypatch.setattr(device, "info", lambda index=None: types.SimpleNamespace(sm_count=132))
    calls = []

    def kernel(grid, block, args, shared_mem=0):
        calls.append(dict(grid=grid, block=block, args=args, smem=shared_mem))

    monkeypatch.setattr(comp, "compile_rung", lambda rung, backend="nvrtc": kernel)
    monkeypatch.setattr(tma, "encode", lambda spec, ptr: ("map", spec, ptr))
    return calls


def _ops(M, N, K, b_shape=None):
    return (FakeArray((M, K), np.uint8), FakeArray(b_shape or (N, K), np.uint8),
            FakeArray((M, N), np.uint16))


def test_operand_shape_takes_b_as_n_by_k_and_refuses_k_by_n(fake_gpu):
    from gemmlab.runtime.operands import operand_shape

    a, b, c = _ops(300, 520, 144)
    assert operand_shape(a, b, c, "fp8", "bf16") == (300, 520, 144)
    _, b_kn, _ = _ops(300, 520, 144, b_shape=(144, 520))
    with pytest.raises(InputError) as e:
        operand_shape(a, b_kn, c, "fp8", "bf16")
    msg = str(e.value)
    assert msg.startswith("b: shape (144, 520) is K x N; fp8 takes B as N x K row-major ('TN'")
    assert "cupy.ascontiguousarray(b.T)" in msg and "\n" not in msg
    with pytest.raises(InputError, match=r"b: expected shape \(520, 144\) \(N x K, 'TN'\)"):
        operand_shape(a, FakeArray((520, 128), np.uint8), c, "fp8", "bf16")
    with pytest.raises(InputError, match="c: expected 300 rows"):
        operand_shape(a, b, FakeArray((301, 520), np.uint16), "fp8", "bf16")
    with pytest.raises(InputError, match=r"a: expected dtype uint8 \(e4m3 bit patterns"):
        operand_shape(FakeArray((300, 144), np.uint16), b, c, "fp8", "bf16")
    with pytest.raises(InputError, match="c: expected dtype uint16"):
        operand_shape(a, b, FakeArray((300, 520), np.uint8), "fp8", "bf16")


def test_gemm_refuses_a_k_by_n_b_in_one_line(fake_gpu):
    from gemmlab.runtime.launch import gemm

    a, b, c = _ops(64, 32, 128, b_shape=(128, 32))
    with pytest.raises(InputError, match="is K x N; fp8 takes B as N x K"):
        gemm("persistent_fp8", a, b, c)
    assert fake_gpu == []


def test_prepared_launch_passes_fp8_maps_and_its_geometry(fake_gpu):
    from gemmlab.runtime.launch import prepare

    r = get("persistent_fp8")
    M, N, K = 1000, 3000, 128
    run = prepare(r, M, N, K)
    a, b, c = _ops(M, N, K)
    run(a, b, c, 1.5, 0.0)
    (call,) = fake_gpu
    # 8 tile-rows -> 4 cluster-rows x 12 tile-columns = 48 cluster units = 96 CTAs (< 132 SMs)
    assert call["grid"] == (96, 1, 1) and call["block"] == (384, 1, 1)
    assert call["smem"] == r.dynamic_smem
    (ma, sa, pa), (ml, sl, pl), (mb, sb, pb), (mc, sc, pc) = call["args"][:4]
    assert (sa.name, sa.dims, sa.box, sa.dtype, pa) == ("A", (K, M), (128, 128), "uint8", a.data.ptr)
    # A's second map: the ladder's rung runs clusters of 2, whose CTAs copy whole boxes
    assert (sl, pl) == (sa, a.data.ptr)
    assert (sb.name, sb.dims, sb.box, sb.dtype, pb) == ("B", (K, N), (128, 128), "uint8", b.data.ptr)
    assert (sc.name, sc.dims, sc.dtype, pc) == ("C", (N, M), "bf16", c.data.ptr)
    assert [int(x) for x in call["args"][4:7]] == [M, N, K]
    assert float(call["args"][7]) == 1.5 and call["args"][8] is a and call["args"][9] is b
    # the prepared call checks B's TN shape too
    with pytest.raises(InputError, match=r"b given N x K, 'TN'"):
        run(a, FakeArray((K, N), np.uint8), c)
    with pytest.raises(InputError, match="takes a, b as uint8"):
        run(FakeArray((M, K), np.uint16), FakeArray((N, K), np.uint16), c)


def test_prepared_launch_gives_an_unused_zero_c_map_when_n_is_not_a_multiple_of_8(fake_gpu):
    from gemmlab.runtime.launch import prepare

    M, N, K = 300, 517, 144
    run = prepare(get("persistent_fp8"), M, N, K)
    run(*_ops(M, N, K))
    c_map = fake_gpu[0]["args"][3]
    assert isinstance(c_map, np.ndarray) and not any(c_map.tobytes())


def test_prepare_refuses_k_not_a_multiple_of_16(fake_gpu):
    from gemmlab.runtime.launch import prepare

    with pytest.raises(InputError, match="needs K a multiple of 16"):
        prepare("persistent_fp8", 128, 256, 136)


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_dispatch_passes_a_second_map_of_a_boxed_to_the_last_row_tile(monkeypatch, dtype):
    # 96 rows in 64 x 64 tiles: the second row-tile holds 32, copied through A's second map
    # (tma.last_rows_spec) - the kernel's parameters are A, A's last rows, B, C in that order
    from gemmlab.runtime import compile as comp
    from gemmlab.runtime import device
    from gemmlab.runtime.dispatch_tc import Policy
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

    mod = types.SimpleNamespace(ndarray=FakeArray, uint8=np.uint8, uint16=np.uint16,
                                float32=np.float32)
    monkeypatch.setattr(device, "require_gpu", lambda: mod)
    monkeypatch.setattr(device, "info", lambda index=None: types.SimpleNamespace(
        sm_count=132, name="NVIDIA H100 80GB HBM3", smem_per_block_optin=232448))
    calls = []
    monkeypatch.setattr(comp, "compile_rung", lambda rung, backend="nvrtc": (
        lambda grid, block, args, shared_mem=0: calls.append(args)))
    monkeypatch.setattr(tma, "encode", lambda spec, ptr: ("map", spec, ptr))
    M, N, K = 96, 4096, 4096
    g = TcDispatchedGemm(registry.get(f"dispatch_{dtype}"), M, N, K, policy=Policy(config="64x64"))
    store = np.uint8 if dtype == "fp8" else np.uint16
    a, b, c = FakeArray((M, K), store), FakeArray((N, K) if dtype == "fp8" else (K, N), store), \
        FakeArray((M, N), np.uint16)
    g(a, b, c)
    (args,) = calls
    bk = {"bf16": 64, "fp8": 128}[dtype]
    (_, sa, pa), (_, sl, pl), (_, sb, pb), (_, sc, _) = args[:4]
    assert (sa.name, sa.box, pa) == ("A", (bk, 64), a.data.ptr)
    assert (sl.name, sl.dims, sl.box, pl) == ("A", sa.dims, (bk, 32), a.data.ptr)
    assert (sb.name, pb, sc.name) == ("B", b.data.ptr, "C")


def test_prepared_unclustered_persistent_rung_boxes_a_to_the_last_row_tile(fake_gpu):
    # a persistent rung without clusters (an autotune candidate's shape) gets A's second map
    # boxed to its last row-tile's rows: 1000 rows in 128-row tiles leave 104 in the eighth
    from gemmlab.runtime.launch import prepare

    r = families.make_rung("persistent_fp8_c1", 1, "persistent_fp8", "one CTA a cluster",
                           BM=128, BN=256, BK=128, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=1,
                           GROUP=8, EPI_PIECE=128)
    M, N, K = 1000, 3000, 128
    a, b, c = _ops(M, N, K)
    prepare(r, M, N, K)(a, b, c)
    (_, sa, pa), (_, sl, pl), (_, sb, _) = fake_gpu[0]["args"][:3]
    assert (sa.box, sl.dims, sl.box, pl) == ((128, 128), sa.dims, (128, 104), pa)
    assert sb.name == "B"
