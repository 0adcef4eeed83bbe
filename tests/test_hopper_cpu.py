"""The Hopper rungs of the BF16 ladder without a GPU: registry entries and launch needs,
shape refusals, the persistent grid, the kernel wrappers (tensor maps, cluster shape) and the
TMA tensor-map parameters."""

from __future__ import annotations

import numpy as np
import pytest

from gemmlab.errors import InputError
from gemmlab.kernels.ladders import TC_LADDER, f32_out_twin
from gemmlab.kernels.registry import get
from gemmlab.kernels.source import wrapper
from gemmlab.runtime import tma

HOPPER = [r for r in TC_LADDER if r.arch == "sm_90a"]


def test_hopper_rungs_in_order_with_their_needs():
    assert [r.name for r in HOPPER] == ["wgmma_bf16", "tma_bf16", "ws_bf16", "persistent_bf16",
                                        "autotuned_bf16"]
    assert [r.order for r in HOPPER] == sorted(r.order for r in HOPPER)
    maps = {r.name: r.needs.tensor_maps for r in HOPPER}
    assert maps == {"wgmma_bf16": 0, "tma_bf16": 2, "ws_bf16": 2, "persistent_bf16": 3,
                    "autotuned_bf16": 3}
    assert get("persistent_bf16").needs.cluster == (2, 1, 1)
    assert get("ws_bf16").needs.cluster == (1, 1, 1)
    # float32 C cannot leave through the bf16 TMA-store epilogue: direct stores, two maps
    f = f32_out_twin(get("persistent_bf16"))
    assert f.needs.tensor_maps == 2 and not f.tma_store and f.takes_c_map
    assert {r.threads for r in HOPPER} == {256, 384}
    for r in HOPPER:
        assert r.dynamic_smem <= 227 * 1024, r.name  # the H100's opt-in limit per block
        assert r.summary.strip() and r.kernel == f"gemmlab_{r.name}"


def test_smem_counts_stages_staging_and_alignment_slack():
    p = get("persistent_bf16").params
    stages = p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 2
    staging = (p["BM"] // 64) * 64 * p["EPI_PIECE"] * 2
    assert get("persistent_bf16").dynamic_smem == stages + staging + 16 * p["STAGES"] + 1024
    assert f32_out_twin(get("persistent_bf16")).dynamic_smem == stages + 16 * p["STAGES"] + 1024


@pytest.mark.parametrize("name", ["tma_bf16", "ws_bf16", "persistent_bf16"])
def test_tma_rungs_refuse_unpitchable_shapes_and_name_the_rung_that_can(name):
    r = get(name)
    assert r.refusal(1000, 3000, 80) is None and r.refusal(1, 8, 8) is None
    for shape in [(1000, 3000, 77), (127, 127, 127), (64, 12, 64)]:
        msg = r.refusal(*shape)
        assert msg and msg.startswith(f"rung {name} needs K and N multiples of 8")
        assert "use wgmma_bf16" in msg and "\n" not in msg
    # wgmma_bf16 itself has a scalar twin: it never refuses
    assert get("wgmma_bf16").refusal(1000, 3000, 77) is None


def test_persistent_grid_is_whole_clusters_capped_by_sms_and_tiles():
    r = get("persistent_bf16")  # 128 x 256 tiles, clusters of 2 along M
    grid, block, smem = r.launch_config(4096, 4096, 4096, sms=132)
    assert grid == (132, 1, 1) and block == (384, 1, 1) and smem == r.dynamic_smem
    assert r.launch_config(4096, 4096, 4096, sms=131)[0] == (130, 1, 1)  # whole clusters
    # 3 x 1 tiles -> 2 cluster units -> 4 CTAs (the lone odd tile's partner computes zeros)
    assert r.launch_config(300, 200, 64, sms=132)[0] == (4, 1, 1)
    assert r.launch_config(1, 1, 8, sms=132)[0] == (2, 1, 1)
    # non-persistent rungs keep the 2-D grid of tiles
    assert get("ws_bf16").launch_config(4096, 4096, 4096)[0] == (16, 32, 1)


@pytest.mark.parametrize("name", ["persistent_bf16", "autotuned_bf16_128x128_s4_c1_g8_e128", "persistent_fp8"])
def test_persistent_grid_needs_the_devices_sm_count(name):
    """No GPU's SM count is assumed: a persistent rung without ``sms`` is refused, naming it."""
    for sms in (None, 0):
        with pytest.raises(ValueError, match=f"rung {name} is persistent .* SM count"):
            get(name).launch_config(4096, 4096, 4096, sms=sms)
    # the count given decides the grid (108: an A100-sized device)
    assert get(name).launch_config(4096, 4096, 4096, sms=108)[0] == (108, 1, 1)
    # non-persistent rungs ignore it
    assert get("ws_bf16").launch_config(64, 64, 64, sms=7) == get("ws_bf16").launch_config(64, 64, 64)


def test_wrappers_pass_tensor_maps_by_value_and_the_cluster_shape():
    w = wrapper(get("persistent_bf16"))
    assert "__cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)" in w
    # A, A boxed to its last row-tile's rows (tma.last_rows_spec), B, C
    assert w.count("const __grid_constant__ gemmlab::tc::TensorMap") == 4
    assert "(tmA, tmA_last, tmB, &tmC, M, N, K, alpha, beta, C)" in w
    w = wrapper(f32_out_twin(get("persistent_bf16")))
    assert w.count("__grid_constant__") == 3 and "(tmA, tmA_last, tmB, nullptr, M, N" in w
    w = wrapper(get("ws_bf16"))
    assert "__cluster_dims__" not in w and "(tmA, tmB, M, N, K, alpha, beta, C)" in w
    w = wrapper(get("wgmma_bf16"))
    assert "TensorMap" not in w and "(M, N, K, alpha, A, B, beta, C)" in w


def test_tensor_map_specs_for_the_rungs_layouts():
    a, b = tma.specs(M=1000, N=3000, K=72, BM=128, BK=64)
    assert (a.dims, a.pitch, a.box) == ((72, 1000), 144, (64, 128))
    assert (b.dims, b.pitch, b.box) == ((3000, 72), 6000, (64, 64))
    c = tma.c_spec(1000, 3000)
    assert (c.dims, c.pitch, c.box) == ((3000, 1000), 6000, (64, 64))
    for s in (a, b, c):
        s.check()
        assert s.box[0] * s.elem_bytes == 128  # one row of the 128-byte swizzle
    assert a.box_bytes + 4 * b.box_bytes == 128 * 64 * 2 + 64 * 256 * 2  # one stage of ws/persistent


def test_tensor_map_spec_refuses_what_the_driver_would():
    a, _ = tma.specs(M=64, N=64, K=77, BM=128, BK=64)
    with pytest.raises(InputError, match=r"^A: TMA needs rows whose pitch is a multiple of 16 bytes, got 154"):
        a.check()
    with pytest.raises(InputError, match="box side 512"):
        tma.MapSpec("A", (64, 64), 128, (64, 512)).check()
    with pytest.raises(InputError, match="exceeds the 128-byte swizzle"):
        tma.MapSpec("B", (256, 64), 512, (128, 64)).check()
    with pytest.raises(InputError, match="16-byte aligned base address, got 0x1002"):
        tma.encode(tma.c_spec(64, 64), 0x1002)


def test_encode_hands_the_driver_the_spec_and_128_byte_promotion(monkeypatch):
    """What cuTensorMapEncodeTiled receives, through a stand-in driver module (CPU CI has no
    cuda-bindings): the spec's dims, pitch and box, its swizzle, and L2 promotion of 128 bytes
    (tma.L2_PROMOTION: 256 bytes cost bf16's swapped decode 8 points on the H200)."""
    import sys
    import types

    seen = {}

    class Enum:
        def __init__(self, prefix):
            self.prefix = prefix

        def __getattr__(self, name):
            if not name.startswith(self.prefix):
                raise AttributeError(name)
            return name

    def encode(dtype, rank, ptr, dims, pitches, box, strides, interleave, swizzle, promo, oob):
        seen.update(dtype=dtype, rank=rank, ptr=ptr, dims=dims, pitches=pitches, box=box,
                    swizzle=swizzle, promo=promo)
        return "CUDA_SUCCESS", list(range(16))

    driver = types.SimpleNamespace(
        cuuint32_t=int, cuuint64_t=int, cuTensorMapEncodeTiled=encode,
        CUtensorMapDataType=Enum("CU_TENSOR_MAP_DATA_TYPE_"),
        CUtensorMapInterleave=Enum("CU_TENSOR_MAP_INTERLEAVE_"),
        CUtensorMapSwizzle=Enum("CU_TENSOR_MAP_SWIZZLE_"),
        CUtensorMapL2promotion=Enum("CU_TENSOR_MAP_L2_PROMOTION_"),
        CUtensorMapFloatOOBfill=Enum("CU_TENSOR_MAP_FLOAT_OOB_FILL_"),
        CUresult=types.SimpleNamespace(CUDA_SUCCESS="CUDA_SUCCESS"))
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", driver)
    a, _ = tma.specs(M=300, N=200, K=512, BM=128, BK=64)
    p = tma.encode(a, 0x1000)
    assert p.dtype.itemsize == 128
    assert seen == {"dtype": "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", "rank": 2, "ptr": 0x1000,
                    "dims": list(a.dims), "pitches": [a.pitch], "box": list(a.box),
                    "swizzle": "CU_TENSOR_MAP_SWIZZLE_128B",
                    "promo": "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"}


def test_tensor_map_param_is_one_128_byte_value():
    words = list(range(16))
    p = tma.as_param(words)
    assert p.shape == (1,) and p.dtype.itemsize == 128 and p.size == 1
    assert np.frombuffer(p.tobytes(), dtype=np.uint64).tolist() == words
    with pytest.raises(ValueError):
        tma.as_param(list(range(15)))


def test_bf16_autotune_candidates_fit_and_are_keyed_apart_from_fp32():
    from gemmlab.kernels.registry import AUTOTUNED, all_rungs, autotune_candidates
    from gemmlab.runtime import autotune

    cands = autotune_candidates("bf16")
    assert len(cands) == 8 and len({c.name for c in cands}) == 8
    assert cands[0].params == {**get("persistent_bf16").params}  # the default is a candidate
    for c in cands:
        assert c.family == "persistent_bf16" and c.dynamic_smem <= 227 * 1024, c.name
        assert c in all_rungs("bf16") and get(c.name) is c
    assert autotune_candidates() == autotune_candidates("fp32") and cands[0] not in autotune_candidates()
    assert "autotuned_bf16" in AUTOTUNED and get("autotuned_bf16").dtype == "bf16"
    assert autotune.size_bucket(4096, 4096, 4096, "bf16") == "bf16_m4096_n4096_k4096_vec"
    assert autotune.size_bucket(4096, 4096, 4096) == "m4096_n4096_k4096_vec"
    assert autotune.shape_class(1000, 3000, 77, "bf16") == "odd"
    assert autotune.shape_class(1000, 3000, 4092, "bf16") == "odd"  # % 4 but not % 8
    assert autotune.shape_class(1000, 3000, 4092) == "vec"


def test_autotuned_bf16_sends_shapes_tma_cannot_take_to_wgmma(monkeypatch):
    from gemmlab.runtime import autotune

    def no_device():
        raise AssertionError("odd BF16 shapes resolve without the GPU or the records")

    monkeypatch.setattr(autotune, "lookup", lambda *a, **k: no_device())
    rung, backend = autotune.resolve(1000, 3000, 77, "bf16")
    assert rung.name == "wgmma_bf16" and backend == "nvrtc"


def test_c_maps_for_tiles_that_are_not_whole_64_column_boxes():
    # BN = 160 (fp8 128 x 160): five 32-column boxes, 64 bytes a row, the 64-byte swizzle
    c = tma.c_spec(1000, 4800, 32)
    assert (c.box, c.swizzle) == ((32, 64), 64)
    c.check()
    assert tma.c_spec(1000, 4800).swizzle == 128
    with pytest.raises(ValueError):
        tma.c_spec(64, 64, 36)  # 72-byte rows: not whole 16-byte units
    assert (tma.c_spec(64, 64, 48).box, tma.c_spec(64, 64, 48).swizzle) == ((48, 64), 0)
    with pytest.raises(InputError, match="64-byte swizzle"):
        tma.MapSpec("C", (4800, 1000), 9600, (64, 64), swizzle=64).check()
    from gemmlab.runtime import dispatch_tc as D

    assert D.config_rung("fp8", "128x160c1").c_box_cols == 32
    assert D.config_rung("fp8", "128x256c2").c_box_cols == 64
    assert D.config_rung("fp8", "128x160c1").params["EPI_PIECE"] == 160


def test_bf16_b_maps_for_160_column_tiles_use_three_64_column_chunks():
    # bf16's B is N-major: a 160-column tile takes three 64-column chunks of the 128-byte swizzle
    # (192 columns a stage; the MMAs read 160) - five 32-column chunks of the 64-byte swizzle ran
    # at two-thirds of the wide tile's speed
    from gemmlab.kernels.families import bf16_b_span, make_rung
    from gemmlab.runtime import dispatch_tc as D

    assert (bf16_b_span(160), bf16_b_span(192), bf16_b_span(32)) == (192, 192, 32)
    r = D.config_rung("bf16", "128x160c1")
    assert (r.b_box_cols, r.c_box_cols, r.params["EPI_PIECE"]) == (64, 32, 160)
    # 40 KB stages (fp8's 128 x 160 keeps 5 of 36 KB): 4 of them and two 20 KB C pieces
    assert r.params["STAGES"] == 4 and D.config_rung("fp8", "128x160c1").params["STAGES"] == 5
    assert r.dynamic_smem == 4 * (128 + 192) * 64 * 2 + 2 * 64 * 160 * 2 + 16 * 4 + 1024
    assert r.dynamic_smem <= 227 * 1024
    _, b = tma.rung_specs(r, 1000, 4800, 1600)
    assert (b.box, b.swizzle) == ((64, 64), 128)
    b.check()
    # in clusters of 2 the three chunks are shared by rows of K: 32 rows each
    _, b = tma.rung_specs(D.config_rung("bf16", "128x160c2"), 1000, 4800, 1600)
    assert (b.box, b.swizzle) == ((64, 32), 128)
    with pytest.raises(ValueError):
        tma.specs(64, 64, 64, 128, 64, b_box_cols=48)
    # the C piece stays one 160-column piece; no other kernel of the family takes 160
    with pytest.raises(ValueError, match="Hopper tiling"):
        make_rung("x", 9, "persistent_bf16", "", BM=128, BN=160, BK=64, STAGES=4, PRODUCER=1,
                  MINB=1, CLUSTER=1, GROUP=8, EPI_PIECE=32, OUT_F32=0)
    with pytest.raises(ValueError, match="Hopper tiling"):
        make_rung("x", 9, "ws_bf16", "", BM=128, BN=160, BK=64, STAGES=4, OUT_F32=0)
    # ping-pong holds a whole tile per warpgroup: at most 128 x 128 accumulators (a 128 x 160
    # ping-pong lost to 128x160c1 at every shape tried, docs/results/tc-pp160-2026-11-27)
    with pytest.raises(ValueError, match="Hopper tiling"):
        make_rung("x", 9, "persistent_bf16", "", BM=128, BN=160, BK=64, STAGES=4, PRODUCER=1,
                  MINB=1, CLUSTER=1, GROUP=8, EPI_PIECE=160, OUT_F32=0, PINGPONG=1)


def test_2d_clusters_share_a_along_n_and_b_along_m():
    # clusters of CLUSTER x CLUSTER_N CTAs launch as one dimension; each CTA copies 1 / CLUSTER_N
    # of A's tile and 1 / CLUSTER of B's, so its maps' boxes are those shares
    from gemmlab.kernels.source import wrapper
    from gemmlab.runtime import dispatch_tc as D

    for dtype in ("bf16", "fp8"):
        r = D.config_rung(dtype, "64x32c2x4")
        assert r.cluster_ctas == 8 and r.needs.cluster == (8, 1, 1)
        assert "__cluster_dims__(8, 1, 1)" in wrapper(r)
        assert r.template_call.endswith(", 0, 4, 0>")  # SPLITK 0, CLUSTER_N 4, PINGPONG 0
        a, b = tma.rung_specs(r, 128, 1600, 6400)
        assert a.box == ((64 if dtype == "bf16" else 128), 16)  # 64 rows of A over 4 CTAs
        a.check()
        b.check()
        if dtype == "fp8":
            assert b.box == (128, 16)  # 32 rows of B (N x K) over 2 CTAs
        else:
            # one 32-column chunk of the 64-byte swizzle cannot be split by columns between two
            # CTAs: each copies half of its 64 rows of K
            assert (b.box, b.swizzle) == ((32, 32), 64)
        # 128 x 1600: 2 x 50 tiles, 13 clusters of 2 x 4 (cuBLAS's 104 CTAs)
        assert r.launch_config(128, 1600, 6400, sms=132)[0] == (104, 1, 1)
        assert D.grid_ctas(128, 1600, "64x32c2x4", 1, 132) == 104
        # 15 clusters of 8 on 132 SMs: what fits at once (16 would leave one to run after)
        assert D.grid_ctas(8192, 8192, "64x32c2x4", 1, 132) == 120
        assert r.launch_config(8192, 8192, 4096, sms=132)[0] == (120, 1, 1)
    # one 64-column chunk per tile over a cluster of 2 along M: split by rows of K as well
    from gemmlab.kernels.families import make_rung

    r = make_rung("x", 9, "persistent_bf16", "", BM=64, BN=64, BK=64, STAGES=12, PRODUCER=1,
                  MINB=1, CLUSTER=2, CLUSTER_N=2, GROUP=8, EPI_PIECE=64, OUT_F32=0)
    a, b = tma.rung_specs(r, 1000, 1000, 1000)
    assert a.box == (64, 32) and b.box == (64, 32) and b.swizzle == 128
    with pytest.raises(ValueError, match="Hopper tiling"):  # 16 CTAs: past the portable 8
        make_rung("x", 9, "persistent_bf16", "", BM=64, BN=64, BK=64, STAGES=12, PRODUCER=1,
                  MINB=1, CLUSTER=4, CLUSTER_N=4, GROUP=8, EPI_PIECE=64, OUT_F32=0)
    r = D.config_rung("bf16", "128x256c2")  # four chunks over two CTAs: whole chunks, as before
    a, b = tma.rung_specs(r, 1000, 1000, 1000)
    assert a.box == (64, 128) and b.box == (64, 64)
    assert r.template_call.endswith(", 0, 1, 0>")


def test_a_boxes_copy_only_the_rows_a_has():
    # an unclustered persistent tile copies its last row-tile, where that holds fewer rows than
    # the tile, through a second map of A boxed to those rows (the kernel counts a stage's bytes
    # alike): never rows past M for the copy engine to fill
    from gemmlab.kernels.registry import get
    from gemmlab.runtime import dispatch_tc as D

    def boxes(r, m):
        a, _ = tma.rung_specs(r, m, 4096, 14336)
        return a.box, tma.last_rows_spec(r, a, m).box

    for dtype, bk in (("bf16", 64), ("fp8", 128)):
        r = D.config_rung(dtype, "128x64c1", split=True)
        assert [boxes(r, m)[1] for m in (1, 72, 127, 128, 129, 1000, 1024)] == [
            (bk, 1), (bk, 72), (bk, 127), (bk, 128), (bk, 1), (bk, 104), (bk, 128)]
        assert {boxes(r, m)[0] for m in (1, 72, 1000)} == {(bk, 128)}  # the other row-tiles'
        r = D.config_rung(dtype, "64x64")
        assert [boxes(r, m)[1] for m in (40, 64, 72, 96, 112, 4097)] == [
            (bk, 40), (bk, 64), (bk, 8), (bk, 32), (bk, 48), (bk, 1)]
        # a cluster's CTAs copy their shares of rows at fixed offsets: whole boxes, as before
        r = D.config_rung(dtype, "128x256c2")
        assert boxes(r, 72) == ((bk, 128), (bk, 128))
    ladder = get("persistent_bf16")  # the ladder's rung runs clusters of 2
    a, _ = tma.rung_specs(ladder, 100, 512, 512)
    assert ladder.cluster_ctas == 2 and tma.last_rows_spec(ladder, a, 100).box == (64, 128)
    # rungs whose kernels count whole boxes keep them (tma_bf16.cu, ws_bf16.cu)
    assert tma.rung_specs(get("tma_bf16"), 100, 512, 512)[0].box[1] == get("tma_bf16").params["BM"]
    assert [tma.box_rows(16, m) for m in (1, 9, 16, 17)] == [1, 9, 16, 16]
    # the swapped decode kernel trims its token boxes from 64-token tiles on (8 to 32 keep whole
    # boxes: no gain there); the host builds the tokens' map from the same parameter
    from gemmlab.kernels import paths

    assert [paths.swap_kernel("fp8", t, 1, 4).params["TRIM"] for t in paths.SWAP_TOKENS] == [
        0, 0, 0, 1, 1]
    assert paths.swap_kernel("fp8", 100, 1, 4).template_call.endswith("swap_decode<1, 128, 4, 1, 1>")
