"""The ladder's registry and generated sources (CPU only)."""

from __future__ import annotations

import itertools
import re

import pytest

from gemmlab.errors import InputError
from gemmlab.kernels import families
from gemmlab.kernels.ladders import LADDER, scalar_twin
from gemmlab.kernels.registry import all_rungs, get, sweep_variants
from gemmlab.kernels.source import read_source, translation_unit, wrapper

ISSUE_ORDER = ["naive_uncoalesced", "coalesced", "smem_tiled", "blocktile_1d", "blocktile_2d",
               "vectorized", "bank_conflict_free", "warptiling", "double_buffered", "autotuned"]


def test_ladder_has_every_family_in_issue_order():
    families = []
    for r in LADDER:
        if r.family not in families:
            families.append(r.family)
    assert families == ISSUE_ORDER
    assert [r.order for r in LADDER] == sorted(r.order for r in LADDER)
    assert {r.family: r.order for r in LADDER} == {f: i + 1 for i, f in enumerate(ISSUE_ORDER)}


def test_ladder_smem_tiled_is_the_articles_plain_kernel():
    r = get("smem_tiled")
    assert dict(r.params) == dict(BX=16, BY=16, BK=16, EXTRA_SYNC=0, UNROLL=0)
    assert dict(get("smem_tiled_unroll").params)["UNROLL"] == 1


def test_names_unique_symbols_are_c_identifiers_and_summaries_present():
    rungs = all_rungs()
    names = [r.name for r in rungs]
    assert len(names) == len(set(names))
    for r in rungs:
        assert r.kernel == f"gemmlab_{r.name}"
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", r.kernel), r.kernel
        assert r.summary.strip() and "\n" not in r.summary
        assert read_source(r.source)  # the file exists


def test_get_unknown_lists_valid_names():
    with pytest.raises(InputError) as e:
        get("tiled_fast")
    msg = str(e.value)
    assert "'tiled_fast'" in msg
    for name in ISSUE_ORDER:
        assert name in msg


def test_sweep_covers_the_first_articles_variants():
    sweep = sweep_variants()
    combos = {(r.params["BX"], r.params["BY"], r.params["BK"], r.params["EXTRA_SYNC"],
               r.params["UNROLL"]) for r in sweep}
    shapes = [(8, 8, 8), (16, 16, 16), (32, 32, 32), (32, 8, 32), (32, 16, 32)]
    assert combos == {(*s, e, u) for s, e, u in itertools.product(shapes, (0, 1), (0, 1))}
    assert all(r.family == "smem_tiled" and r.order == 3 for r in sweep)
    assert get("smem_tiled_t16_b16x16").params == get("smem_tiled").params
    assert "smem_tiled_t32_b32x8_extrasync_unroll" in {r.name for r in sweep}


@pytest.mark.parametrize("shape", [(1, 1, 1), (7, 7, 7), (127, 33, 65), (4097, 129, 257),
                                   (1000, 1000, 1000)])
def test_grid_covers_c_exactly_once(shape):
    M, N, K = shape
    for r in all_rungs():
        grid, block, smem = r.launch_config(M, N, K)
        rows, cols = r.tile
        assert block[0] * block[1] * block[2] == r.threads
        gx, gy, gz = grid
        assert gz == 1
        if r.family == "naive_uncoalesced":  # grid.x walks rows
            gx, gy = gy, gx
        assert (gy - 1) * rows < M <= gy * rows, r.name
        assert (gx - 1) * cols < N <= gx * cols, r.name
        assert smem == r.dynamic_smem


def test_naive_maps_threadidx_x_to_rows():
    assert get("naive_uncoalesced").launch_config(100, 20, 5)[0] == (7, 2, 1)  # ceil(100/16)
    assert get("coalesced").launch_config(100, 20, 5)[0] == (2, 7, 1)


def test_double_buffered_dynamic_smem():
    r = get("double_buffered")
    p = r.params
    assert r.dynamic_smem == p["STAGES"] * p["BK"] * (p["BM"] + p["BN"]) * 4 == 49152
    # every other family uses static shared memory only
    assert all(x.dynamic_smem == 0 for x in LADDER if x.family not in
               ("double_buffered", "autotuned"))
    big = get("autotuned_128x256x16_w64x64n4_s3")
    assert big.dynamic_smem == 3 * 16 * (128 + 256) * 4 > 48 * 1024  # needs the opt-in


@pytest.mark.parametrize("bad", [(0, 1, 1), (1, -3, 1), (1, 1, 0), (2.0, 1, 1), (True, 1, 1)])
def test_launch_config_rejects_bad_shapes(bad):
    with pytest.raises(InputError):
        get("coalesced").launch_config(*bad)


def test_launch_config_rejects_grid_and_index_overflow():
    with pytest.raises(InputError, match="grid"):
        get("coalesced").launch_config(16 * 65536, 16, 1)  # grid.y = 65536 > 65535
    with pytest.raises(InputError, match="32-bit"):
        get("warptiling").launch_config(65536, 32768, 4)  # C has 2^31 elements


def test_scalar_twin():
    v = get("vectorized")
    s = scalar_twin(v)
    assert v.vectorized and not s.vectorized
    assert s.name == "vectorized_scalar" and s.kernel == "gemmlab_vectorized_scalar"
    assert s.launch_config(33, 65, 7) == v.launch_config(33, 65, 7)
    assert get("vectorized_scalar") == s
    assert scalar_twin(get("coalesced")) == get("coalesced")
    vec_rungs = [r for r in all_rungs() if r.vectorized]
    assert vec_rungs and all(scalar_twin(r) in all_rungs() for r in vec_rungs)


def test_vector_rungs_accept_only_multiple_of_4_shapes():
    v = get("warptiling")
    assert v.accepts(4096, 4096, 4096)
    assert not v.accepts(8, 8, 7) and not v.accepts(8, 7, 8)
    assert v.accepts(7, 8, 8)  # M is free
    assert get("coalesced").accepts(7, 7, 7)


def test_translation_unit_is_self_contained_with_one_wrapper_per_rung():
    r = get("warptiling")
    unit = translation_unit([r])
    assert "#include" not in unit  # headers inlined: the cache key covers them
    assert "namespace gemmlab" in unit and "struct WarpTile" in unit
    assert unit.count('extern "C" __global__') == 1
    assert (f"__launch_bounds__({r.threads}) gemmlab_warptiling(" in unit)
    assert "gemmlab::warptiling<128, 128, 16, 64, 64, 4, 8, 4, 128, 1>(M, N, K" in unit
    assert wrapper(r) in unit


def test_translation_unit_rejects_mixed_sources():
    with pytest.raises(ValueError):
        translation_unit([get("coalesced"), get("warptiling")])


def test_bad_warp_tiling_fails_at_construction():
    with pytest.raises(ValueError, match="warp tiling"):
        families.make_rung("x", 9, "warptiling", "s", BM=128, BN=128, BK=16, WM=64, WN=64,
                       WNITER=4, TM=8, TN=4, NT=256, VEC=1)
