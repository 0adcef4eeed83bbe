"""The dispatch rung's registry entries and decisions (CPU only): which kernels run at which shape,
how many K-slices, how much workspace, when operands are copied, and the refusals."""

from __future__ import annotations

import re

from pathlib import Path

import pytest

from gemmlab.analysis.occupancy import occupancy
from gemmlab.errors import InputError
from gemmlab.kernels import families, ladders, paths, registry
from gemmlab.runtime import dispatch as D
from gemmlab.shapes import grids

# Registers per thread of each path kernel as ptxas 13.0 reports them for sm_90 (the nvcc test
# prints the live values); with the static shared memory they give the H100's resident blocks.
_REGS = {"tile_ld_64x128": 167, "tile_ld_64x64": 107, "tiny_32x8": 32, "skinny_m1": 47, "skinny_m2": 64,
         "skinny_m4": 63, "skinny_m8": 101, "skinny_m16": 103, "skinny_n1": 63, "skinny_n2": 64,
         "skinny_n4": 80, "skinny_n8": 128, "skinny_n16": 128}


def _static_smem(k: paths.PathKernel) -> int:
    if k.family == "skinny_m":
        return 8 * min(k.params["MR"], 4) * 128 * 4
    if k.family == "skinny_n":
        return k.params["NR"] * 260 * 4
    if k.family == "tiny":
        return (k.params["BY"] + k.params["BX"]) * k.params["BK"] * 4
    return 0


def h100_blocks(k: paths.PathKernel) -> int:
    key = next(x for x in _REGS if k.name == x or k.name.startswith(x + "_"))
    # the occupancy calculator, checked against the driver on the H100 (tests/gpu/test_occupancy_driver.py)
    return max(1, occupancy("sm_90", k.threads, _REGS[key], _static_smem(k) + k.dynamic_smem, advise=False).blocks_per_sm)


H100 = D.Machine(132, h100_blocks)


def plan(M, N, K, ops=D.Operands(), policy=D.Policy(), machine=H100):
    return D.plan(M, N, K, machine, ops, policy)


# --- registry ---------------------------------------------------------------------------------

def test_dispatch_is_a_rung_outside_the_ladder():
    r = registry.get("dispatch")
    assert r in registry.all_rungs() and r not in ladders.LADDER and r.family == "dispatch"
    assert r.vectorized and ladders.scalar_twin(r) in registry.all_rungs()
    assert dict(r.params) == dict(registry.get("double_buffered").params)  # its own tile kernel
    with pytest.raises(InputError, match="dispatch"):
        registry.get("dispath")


def test_path_kernels_have_unique_c_symbols_and_known_sources():
    ks = paths.all_path_kernels()
    names = [k.name for k in ks]
    assert len(names) == len(set(names)) == 30
    rung_names = {r.name for r in registry.all_rungs(None)}
    for k in ks:
        assert re.fullmatch(r"gemmlab_[A-Za-z0-9_]+", k.kernel) and k.name not in rung_names
        assert k.source in ("tile_ld.cu", "skinny.cu", "dispatch_helpers.cu", "smem_tiled.cu")
        assert families.arch_refusal(k, 8, 0) is None and families.compile_arch(k, "sm_90") == "sm_90"
        unit = paths.translation_unit([k])
        assert "#include" not in unit and unit.count('extern "C" __global__') == 1
        bounds = f"{k.threads}, {k.params['MINB']}" if k.params.get("MINB") else f"{k.threads}"
        assert f"__launch_bounds__({bounds}) {k.kernel}(" in unit
    big = paths.tile_kernel("big", 1, 1)
    assert big.tile == (64, 128) and big.dynamic_smem == 2 * 32 * (64 + 128) * 4 and big.block == (128, 1, 1)
    assert paths.tile_kernel("small", 0, 0).dynamic_smem == 3 * 16 * 128 * 4
    assert "gemmlab::tile_ld<64, 128, 32, 32, 64, 2, 8, 4, 128, 2, 0, 1, 0>(M, N, K, lda" in \
        paths.translation_unit([paths.tile_kernel("big", 1, 0)])
    assert "__launch_bounds__(128, 3) gemmlab_tile_ld_64x128_v1c0(" in \
        paths.translation_unit([paths.tile_kernel("big", 1, 0)])
    tiny = paths.TINY
    assert (tiny.tile, tiny.threads, tiny.block, tiny.dynamic_smem) == ((8, 32), 256, (32, 8, 1), 0)
    assert "gemmlab::smem_tiled<32, 8, 32, 0, 1>(M, N, K, alpha, A, B, beta, C)" in paths.translation_unit([tiny])
    with pytest.raises(ValueError, match="sources"):
        paths.translation_unit([big, paths.PAD])


def test_tile_shapes_satisfy_the_warp_tiling_rules():
    # The registry's mirror of the kernels' static_asserts, applied to both tile shapes.
    for p in (dict(paths.SMALL), dict(paths.BIG)):
        families.make_rung("probe", 10, "autotuned", "probe", **p, VEC=1)  # raises if inconsistent


def test_big_tile_is_the_autotuners_h100_winner():
    # The sweep's 4096^3 winner is one of the autotuner's own candidates (64x128x32, 2 stages, 3
    # blocks/SM), so `gemmlab ladder --rungs autotuned` and the dispatch rung agree on the H100.
    names = {r.name: r for r in registry.autotune_candidates()}
    cand = names["autotuned_64x128x32_w32x64n2_s2_b3"]
    assert {k: cand.params[k] for k in paths.BIG} == dict(paths.BIG)


# --- decisions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dims, path, kernels, split", [
    ((4096, 4096, 4096), "vector", ["tile_ld_64x128_v1c1"], 1),
    ((2048, 11008, 4096), "vector", ["tile_ld_64x128_v1c1"], 1),  # 2752 big tiles: 20.8 per SM
    ((4095, 4095, 4095), "padded", ["pad2", "tile_ld_64x128_v1c0"], 1),
    ((4097, 4097, 4097), "padded", ["pad2", "tile_ld_64x128_v1c0"], 1),  # 16.25 big tiles per SM
    # only A: N % 4 == 0; 64x64 tiles: K = 77 takes 80 in steps of 16, 96 in steps of 32
    ((1000, 3000, 77), "padded", ["pad2", "tile_ld_64x64_v1c1"], 1),
    ((1024, 50257, 768), "padded", ["pad2", "tile_ld_64x128_v1c0"], 1),  # only B
    ((1024, 1024, 1024), "vector", ["tile_ld_64x128_v1c1"], 1),  # 128 big tiles: balance 0.97, no split
    ((1025, 1025, 1025), "padded", ["pad2", "tile_ld_64x64_v1c0"], 1),  # 153 big tiles: 0.58; 289 small: 0.73
    ((4096, 4096, 16), "vector", ["tile_ld_64x64_v1c1"], 1),  # K = 16: half of a 32-deep step is zeros
    ((300, 520, 136), "vector", ["tile_ld_64x64_v1c1"], 1),  # 25 big tiles vs 45 small, neither splits
    ((4097, 127, 1000), "padded", ["pad2", "tile_ld_64x64_v1c0"], 1),  # 130 small tiles: no split needed
    ((1023, 1023, 1023), "padded", ["pad2", "tile_ld_64x128_v1c0"], 1),
    # both tiles split to fill one wave: the big tile's FMAs win
    ((128, 128, 65536), "vector", ["tile_ld_64x128_v1c1", "splitk_reduce_v1"], 187),
    ((256, 256, 16384), "vector", ["tile_ld_64x128_v1c1", "splitk_reduce_v1"], 47),
    ((96, 96, 1024), "vector", ["tile_ld_64x64_v1c1", "splitk_reduce_v1"], 8),  # K caps S at 8: 32 blocks vs 16
    ((127, 127, 127), "tiny", ["tiny_32x8"], 1),  # 64 blocks, 4 K-steps
    ((255, 255, 255), "tiny", ["tiny_32x8"], 1),  # 255^3 <= 2^24
    ((256, 256, 256), "tiny", ["tiny_32x8"], 1),  # 256^3 = 2^24: the last tiny one
    ((256, 257, 256), "padded", ["pad2", "tile_ld_64x64_v1c0", "splitk_reduce_v1"], 2),  # over 2^24
    ((257, 255, 257), "scalar", ["tile_ld_64x64_v0c0", "splitk_reduce_v1"], 2),  # K > 256
    ((64, 64, 512), "vector", ["tile_ld_64x128_v1c1", "splitk_reduce_v1"], 4),  # K > 256: split-K instead
    ((1024, 1024, 4), "vector", ["tile_ld_64x64_v1c1"], 1),  # 4096 tiny blocks: over one wave (1056)
    ((1, 4096, 4096), "skinny-M", ["skinny_m1_v1", "splitk_reduce_v1"], 16),
    ((8, 4096, 4096), "vector", ["tile_ld_64x128_v1c1", "splitk_reduce_v1"], 12),  # M > SKINNY_M
    ((16, 4096, 4096), "vector", ["tile_ld_64x128_v1c1", "splitk_reduce_v1"], 12),
    ((4, 4096, 4096), "skinny-M", ["skinny_m4_v1", "splitk_reduce_v1"], 16),
    ((4096, 16, 4096), "skinny-N", ["skinny_n16_v1", "splitk_reduce_v1"], 3),
    ((4096, 1, 4096), "skinny-N", ["skinny_n1_v1", "splitk_reduce_v1"], 4),
    ((1, 4097, 4095), "skinny-M", ["skinny_m1_v0", "splitk_reduce_v1"], 15),  # kc 288
    ((4097, 1, 4095), "skinny-N", ["skinny_n1_v0", "splitk_reduce_v1"], 4),
    ((7, 9, 100), "skinny-N", ["skinny_n16_v1"], 1),  # both skinny: N decides; K < 256: one slice
])
def test_representative_shapes(dims, path, kernels, split):
    p = plan(*dims)
    assert p.path == path and [x.kernel.name for x in p.launches] == kernels and p.split == split, D.describe(p)
    assert p.main_launch.kernel.name == kernels[1 if kernels[0] == "pad2" else 0]
    assert p.name.startswith(path) and all(k in p.name for k in kernels)


def test_every_grid_shape_has_a_plan_whose_slices_cover_k_exactly():
    for s in grids.DEFAULT + grids.QUICK:
        p = plan(*s.dims)
        main = p.main_launch
        if main.kernel.family == "tiny":
            assert p.split == 1 and p.launches == (main,) and not p.buffers and main.grid[2] == 1
            continue
        kc = main.args[main.kernel.signature.index(("int", "kc"))]
        S = main.grid[2] if main.kernel.family == "tile_ld" else main.grid[1]
        assert S == p.split
        assert (S - 1) * kc < s.K <= S * kc, (s.name, S, kc)  # every slice non-empty, K covered
        if S > 1:
            assert kc % {"tile_ld": 16, "skinny_m": 32, "skinny_n": 256}[main.kernel.family] == 0
            assert p.buffers["W"] == S * (-(-s.M * s.N // 4) * 4)
            assert p.launches[-1].kernel.family == "reduce"
        else:
            assert "W" not in p.buffers and p.launches[-1] is main


def test_split_k_fills_one_wave_and_no_more():
    # 64x64 tiles on the H100: 4 resident blocks per SM (MINB = 4, 107 registers), 528 slots.
    slots = H100.slots(paths.tile_kernel("small", 1, 1))
    assert slots == 132 * 4
    assert D.tile_split(4, 65536, slots, 16) == (128, 512)  # 132 wanted, kc 497 -> 512: 512 blocks
    assert D.tile_split(256, 1024, slots, 16) == (2, 512)
    assert D.tile_split(256, 1024, slots, 16, sm_count=132) == (1, 1024)  # every SM already busy
    assert D.tile_split(66, 4096, slots, 16, sm_count=132) == (1, 4096)  # half the SMs busy
    assert D.tile_split(65, 4096, slots, 16, sm_count=132)[0] > 1
    assert D.tile_split(256, 200, slots, 16) == (1, 200)  # 200 // 128 = 1: too shallow to split
    assert D.tile_split(1024, 4096, slots, 16) == (1, 4096)  # already more than a wave
    assert D.tile_split(4, 65536, slots, 16, forced=8) == (8, 8192)
    for tiles, K in ((4, 65536), (16, 16384), (64, 100000), (3, 129)):
        S, kc = D.tile_split(tiles, K, slots, 16)
        assert tiles * S <= max(slots, tiles) and (S == 1 or kc >= D.MIN_SLICE_K)


def test_skinny_split_respects_waves_depth_and_workspace():
    assert D.skinny_split(1, 4096, 4096, 32, 660) == (16, 256)  # depth-capped: 4096 // 256
    assert D.skinny_split(16, 4096, 4096, 32, 264) == (9, 480)  # wave: ceil(264 / 32)
    # Workspace cap: M = 16, K = 1024 -> 0.1 * (16K + 4M) / (2 * 64K) = 3 slices at most.
    assert D.skinny_split(16, 4096, 1024, 32, 660) == (3, 352)
    assert D.skinny_split(4096, 1, 4096, 128, 264, unit=256) == (3, 1536)  # whole staged chunks
    assert D.skinny_split(4096, 1, 200, 128, 264) == (1, 200)
    assert D.skinny_split(4096, 1, 4096, 128, 264, forced=1) == (1, 4096)


def test_tile_shape_follows_the_sm_count():
    K = 4096
    assert D.choose_tile(2048, 2048, K, H100) == "big"  # 512 tiles
    assert D.choose_tile(4096, 4096, K, H100) == "big"  # balance 0.97 either way: the big tile's FMAs win
    # 2145 tiles of 64x128: 16.25 per SM, 17 on the busiest (0.956); 64x64 balances 0.970: within 8%
    assert D.choose_tile(4097, 4097, K, H100) == "big"
    assert D.sm_balance(2145, 132) == pytest.approx(2145 / 132 / 17)
    assert D.tile_option(4097, 4097, K, "big", H100) == (1, pytest.approx(2145 / 132 / 17))
    assert D.choose_tile(1024, 1024, K, H100) == "big"  # 128 big tiles on 132 SMs: 0.97
    # 3 x 132 + 1 = 397 big tiles balance 3.008 / 4 = 0.75; 64x64 (794 tiles) 0.86: small
    assert D.choose_tile(64 * 397, 128, K, H100) == "small"
    # K-steps: at K = 16 a 32-deep step is half zeros; at K = 48 the big tile runs 64 deep (0.75)
    assert D.k_efficiency(16, 32) == 0.5 and D.k_efficiency(48, 32) == 0.75 and D.k_efficiency(48, 16) == 1
    assert D.choose_tile(4096, 4096, 16, H100) == "small" and D.choose_tile(4096, 4096, 64, H100) == "big"
    # A split the other tile avoids decides: 65 big tiles (< 66) would split, 130 small ones not
    assert D.choose_tile(4097, 127, 1000, H100) == "small"
    # 60 SMs: 128 big tiles put 3 on 8 SMs and 2 on the rest (balance 0.71); 256 small tiles, 0.85
    assert D.choose_tile(1024, 1024, K, D.Machine(60, h100_blocks)) == "small"
    assert D.choose_tile(2048, 2048, K, D.Machine(64, h100_blocks)) == "big"  # 8 big tiles per SM exactly
    p = plan(1024, 1024, 1024, machine=D.Machine(60, h100_blocks))
    # 256 small tiles already give every SM a block: no split-K pass
    assert p.main_launch.kernel.name == "tile_ld_64x64_v1c1" and p.split == 1


def test_padding_sizes_and_pad_launch():
    p = plan(1000, 3000, 77)
    assert p.buffers == {"Ap": 1000 * 80}
    pad, main = p.launches[0], p.launches[1]
    a = dict(zip([n for _, n in pad.kernel.signature], pad.args))
    assert (a["rows_a"], a["cols_a"], a["ld_a"], a["Ap"], a["rows_b"]) == (1000, 77, 80, "Ap", 0)
    assert pad.grid[0] == a["blocks_a"] == -(-1000 * 20 // 256)
    m = dict(zip([n for _, n in main.kernel.signature], main.args))
    assert (m["lda"], m["ldb"], m["ldc"], m["A"], m["B"], m["C"]) == (80, 3000, 3000, "Ap", "B", "C")
    p = plan(4095, 4095, 4095)
    assert p.buffers == {"Ap": 4095 * 4096, "Bp": 4095 * 4096}
    m = dict(zip([n for _, n in p.main_launch.kernel.signature], p.main_launch.args))
    assert (m["K"], m["lda"], m["ldb"], m["N"], m["ldc"]) == (4095, 4096, 4096, 4095, 4095)
    assert p.workspace_bytes == 8 * 4095 * 4096


def test_pad_pays_only_when_the_copies_are_cheap_against_the_product():
    assert D.pad_pays(4095, 4095, 4095, True, True)
    assert D.pad_pays(1000, 3000, 77, True, False)
    assert not D.pad_pays(127, 127, 127, True, True)  # 4 µs of launch-bound work: copies dominate
    assert plan(127, 127, 127, policy=D.Policy(odd="pad", tiny=False)).path == "scalar"


def test_unaligned_pointers_copy_the_operand_or_drop_the_16_byte_epilogue():
    p = plan(4096, 4096, 4096, ops=D.Operands(a16=False))
    assert p.path == "padded" and p.buffers == {"Ap": 4096 * 4096}
    p = plan(4096, 4096, 4096, ops=D.Operands(c16=False))
    assert p.path == "vector" and p.main_launch.kernel.name == "tile_ld_64x128_v1c0" and not p.buffers
    p = plan(256, 256, 16384, ops=D.Operands(c16=False))  # split: slices are aligned, C is not
    assert p.main_launch.kernel.name == "tile_ld_64x128_v1c1" and p.launches[-1].kernel.name == "splitk_reduce_v0"
    assert plan(1, 4096, 4096, ops=D.Operands(b16=False)).main_launch.kernel.name == "skinny_m1_v0"
    assert plan(4096, 1, 4096, ops=D.Operands(b16=False)).main_launch.kernel.name == "skinny_n1_v1"  # B staged


def test_policies_select_the_alternatives():
    assert plan(4095, 4095, 4095, policy=D.Policy(odd="scalar")).launches[0].kernel.name == "tile_ld_64x128_v0c0"
    p = plan(1, 4096, 4096, policy=D.Policy(skinny=False))
    assert p.main_launch.kernel.family == "tile_ld" and p.split > 1
    p = plan(1024, 1024, 1024, policy=D.Policy(tile="big", split=4))
    assert p.main_launch.kernel.name == "tile_ld_64x128_v1c1" and p.split == 4 and p.main_launch.grid == (8, 16, 4)
    assert plan(128, 128, 65536, policy=D.Policy(split=1)).split == 1
    assert plan(127, 127, 127, policy=D.Policy(tiny=False)).path == "scalar"
    assert plan(127, 127, 127, policy=D.Policy(split=1)).path == "scalar"  # a forced split or tile: tiles
    p = plan(1024, 1024, 1024, policy=D.Policy(tiny=True))  # forced on past its bounds
    assert p.path == "tiny" and p.main_launch.grid == (32, 128, 1)
    for bad, msg in ((dict(odd="guess"), "odd="), (dict(tile="huge"), "tile="), (dict(split=0), "split="),
                     (dict(split=True), "split="), (dict(tiny="yes"), "tiny="), (dict(tiny=1.0), "tiny=")):
        with pytest.raises(InputError, match=msg):
            D.Policy(**bad)


def test_refusals_are_one_line():
    with pytest.raises(InputError) as e:
        plan(65537 * 128, 32, 1)  # 65537 row tiles of 128: grid.y over 65535
    assert "grid" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(InputError, match="M=0"):
        plan(0, 4, 4)
    with pytest.raises(InputError, match="32-bit"):
        plan(65536, 32768, 4)


def test_tiny_plan_launches_the_rung_signature_once():
    p = plan(127, 127, 127)
    (main,) = p.launches
    assert main.kernel.signature[3] == ("float", "alpha")
    assert main.args == (127, 127, 127, "alpha", "A", "B", "beta", "C")
    assert main.grid == (4, 16, 1) and main.block == (32, 8, 1) and main.smem == 0
    assert p.name == "tiny: tiny_32x8" and D.describe(p).startswith("tiny: tiny_32x8 (64 blocks of 8x32")
    # unaligned or odd operands change nothing: 4-byte loads
    assert plan(127, 127, 127, ops=D.Operands(False, False, False)).name == p.name
    assert D.tiny_fits(8 * 33, 32 * 32, 15, H100)  # 1056 blocks: exactly one wave (8 per SM)
    assert not D.tiny_fits(8 * 34, 32 * 32, 15, H100)  # 1088 blocks, M*N*K still under 2^22


def test_reduce_and_skinny_arguments():
    p = plan(1, 4096, 4096)
    main, red = p.launches
    s = dict(zip([n for _, n in main.kernel.signature], main.args))
    assert (s["kc"], s["ws"], s["alpha"], s["beta"], s["W"]) == (256, 4096, 1.0, 0.0, "W")
    r = dict(zip([n for _, n in red.kernel.signature], red.args))
    assert (r["count"], r["S"], r["ws"], r["alpha"], r["beta"], r["C"]) == (4096, 16, 4096, "alpha", "beta", "C")
    assert red.grid == (4096 // 4 // 32, 1, 1)
    assert main.grid == (32, 16, 1) and main.block == (256, 1, 1)
    p = plan(7, 9, 100)  # one slice: the kernel applies alpha and beta itself
    s = dict(zip([n for _, n in p.main_launch.kernel.signature], p.main_launch.args))
    assert (s["alpha"], s["beta"], s["C"], s["W"]) == ("alpha", "beta", "C", "C")
    assert D.describe(p).startswith("skinny-N: skinny_n16_v1 (N = 9 <= 16")


def test_plan_reports_params_for_result_rows():
    p = plan(1023, 1023, 1023)
    assert p.params["BM"] == 64 and p.params["SPLIT"] == 1 and p.params["PAD_A"] == p.params["PAD_B"] == 1
    assert plan(255, 255, 16383).params["SPLIT"] > 1
    assert all(isinstance(v, int) for v in p.params.values())


def test_ladder_caption_and_profile_target_name_what_ran():
    import dataclasses

    from gemmlab.bench.results import RunRecord
    from gemmlab.profile import targets
    from gemmlab.report import tables
    from report_samples import kernel_row

    rows = (dataclasses.replace(kernel_row("dispatch", 1, 4096, 4096, median_s=1e-3),
                                launched={"rung": "skinny-M split-K 16: skinny_m1_v1 + splitk_reduce_v1"}),
            dataclasses.replace(kernel_row("coalesced", 1, 4096, 4096, median_s=2e-3),
                                launched={"rung": "coalesced"}))
    cap = tables.caption(RunRecord("ladder", rows, {}, {"shape": {"M": 1, "N": 4096, "K": 4096}}))
    assert "what ran: dispatch ran skinny-M split-K 16: skinny_m1_v1 + splitk_reduce_v1" in cap
    assert "coalesced ran" not in cap
    t = targets.rung_target("dispatch", (1, 4096, 4096), warmup=3)
    assert t.kernel_regex == paths.MAIN_KERNEL_REGEX and t.launch_skip == 3 and t.launch_count == 1
    assert re.match(t.kernel_regex, "gemmlab_skinny_m1_v1") and re.match(t.kernel_regex, "gemmlab_tile_ld_64x64_v1c1")
    assert not re.match(t.kernel_regex, "gemmlab_pad2") and not re.match(t.kernel_regex, "gemmlab_splitk_reduce_v1")
    assert targets.launched_kernel("dispatch", 1, 4096, 4096) is None


# The H100 measurements the rules were set from (v3: every alternative the device run timed per
# shape, benchmarks/dispatch_compare.py), the re-run with the rules in place (v4, two new shapes),
# and the same run on an H200 (132 SMs and sm_90 like the H100: the same plans).
# The plan the rules choose now must be within 3 points of cuBLAS % of the best alternative measured
# - the rules reproduce what the GPU showed, not what we guessed.
_RESULTS = Path(__file__).resolve().parents[1] / "docs/results/shapes-dispatch-h100-2026-11-23"
MEASURED = (_RESULTS / "v3/dispatch_compare.json", _RESULTS / "v4/dispatch_compare.json",
            _RESULTS.parent / "shapes-dispatch-h200-2026-11-23/dispatch_compare.json")


def _ran(p) -> str:
    return ", ".join(x.kernel.name for x in p.launches)


# Where the rules still lose to a measured alternative by more than 3 points, and why (kept visible
# rather than hidden by a looser tolerance).
KNOWN_MISSES = {
    ("v4", (200, 200, 200)): "the tiny kernel measured 98.3% vs 102.1% for 16 unsplit 64x64 tiles "
                             "on 16-byte loads (a 10 us product): TINY_MAX_MNK = 2^24 was set where "
                             "the tile plans ran 4-byte loads (255^3) or split (127^3)",
    ("shapes-dispatch-h200-2026-11-23", (200, 200, 200)): "the same on the H200: 96.2 vs 101.6%",
}


@pytest.mark.parametrize("measured", MEASURED, ids=lambda p: p.parent.name)
def test_rules_pick_what_the_h100_measured_fastest(measured):
    import json
    import re

    data = json.loads(measured.read_text())
    checked = 0
    for shape in data["shapes"]:
        p = plan(*shape["shape"])
        mine = [p.path] + [x.kernel.name for x in p.launches]
        found = None
        for v in shape["variants"]:
            if v.get("pct_of_cublas") is None or v["variant"] == "double_buffered":
                continue
            path, _, kernels = v["ran"].partition(": ")
            names = [k.strip() for k in kernels.split("+")]
            split = re.search(r"split-K (\d+)", path)
            if [path.split(" ")[0]] + names == mine and (int(split.group(1)) if split else 1) == p.split:
                found = v
        if found is None:
            continue  # this plan was not among the measured alternatives
        best = max(v["pct_of_cublas"] for v in shape["variants"] if v.get("pct_of_cublas"))
        miss = found["pct_of_cublas"] < best - 3.0
        known = (measured.parent.name, tuple(shape["shape"])) in KNOWN_MISSES
        assert miss == known, (shape["shape"], _ran(p), found["pct_of_cublas"], best)
        checked += 1
    assert checked >= 25
