"""The dispatch rung's registry entries and decisions (CPU only): which kernels run at which shape,
how many K-slices, how much workspace, when operands are copied, and the refusals."""

from __future__ import annotations

import re

from pathlib import Path

import pytest

from gemmlab.errors import InputError
from gemmlab.kernels import paths, registry
from gemmlab.runtime import dispatch as D
from gemmlab.shapes import grids

# Registers per thread of each path kernel as ptxas 13.0 reports them for sm_90 (the nvcc test
# prints the live values); with the static shared memory they give the H100's resident blocks.
_REGS = {"tile_ld_128x128": 255, "tile_ld_64x64": 107, "skinny_m1": 47, "skinny_m2": 64,
         "skinny_m4": 63, "skinny_m8": 101, "skinny_m16": 103, "skinny_n1": 63, "skinny_n2": 64,
         "skinny_n4": 80, "skinny_n8": 128, "skinny_n16": 128}


def _static_smem(k: paths.PathKernel) -> int:
    if k.family == "skinny_m":
        return 8 * min(k.params["MR"], 4) * 128 * 4
    if k.family == "skinny_n":
        return k.params["NR"] * 260 * 4
    return 0


def h100_blocks(k: paths.PathKernel) -> int:
    key = next(x for x in _REGS if k.name.startswith(x + "_"))
    return D.occupancy_blocks("sm_90", k.threads, _REGS[key], _static_smem(k) + k.dynamic_smem)


H100 = D.Machine(132, h100_blocks)


def plan(M, N, K, ops=D.Operands(), policy=D.Policy(), machine=H100):
    return D.plan(M, N, K, machine, ops, policy)


# --- registry ---------------------------------------------------------------------------------

def test_dispatch_is_a_rung_outside_the_ladder():
    r = registry.get("dispatch")
    assert r in registry.all_rungs() and r not in registry.LADDER and r.family == "dispatch"
    assert r.vectorized and registry.scalar_twin(r) in registry.all_rungs()
    assert dict(r.params) == dict(registry.get("double_buffered").params)  # its own tile kernel
    with pytest.raises(InputError, match="dispatch"):
        registry.get("dispath")


def test_path_kernels_have_unique_c_symbols_and_known_sources():
    ks = paths.all_path_kernels()
    names = [k.name for k in ks]
    assert len(names) == len(set(names)) == 29
    rung_names = {r.name for r in registry.all_rungs(None)}
    for k in ks:
        assert re.fullmatch(r"gemmlab_[A-Za-z0-9_]+", k.kernel) and k.name not in rung_names
        assert k.source in ("tile_ld.cu", "skinny.cu", "dispatch_helpers.cu")
        assert registry.arch_refusal(k, 8, 0) is None and registry.compile_arch(k, "sm_90") == "sm_90"
        unit = paths.translation_unit([k])
        assert "#include" not in unit and unit.count('extern "C" __global__') == 1
        bounds = f"{k.threads}, 4" if k.params.get("MINB") else f"{k.threads}"
        assert f"__launch_bounds__({bounds}) {k.kernel}(" in unit
    big = paths.tile_kernel("big", 1, 1)
    assert big.tile == (128, 128) and big.dynamic_smem == 49152 == registry.get("double_buffered").dynamic_smem
    assert paths.tile_kernel("small", 0, 0).dynamic_smem == 3 * 16 * 128 * 4
    assert "gemmlab::tile_ld<128, 128, 16, 64, 64, 4, 8, 4, 128, 3, 0, 1, 0>(M, N, K, lda" in \
        paths.translation_unit([paths.tile_kernel("big", 1, 0)])
    with pytest.raises(ValueError, match="sources"):
        paths.translation_unit([big, paths.PAD])


def test_small_tile_satisfies_the_warp_tiling_rules():
    # The registry's mirror of the kernels' static_asserts, applied to the SMALL tile shape.
    p = dict(paths.SMALL)
    registry._rung("probe", 10, "autotuned", "probe", **p, VEC=1)  # raises if inconsistent


# --- decisions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dims, path, kernels, split", [
    ((4096, 4096, 4096), "vector", ["tile_ld_128x128_v1c1"], 1),
    ((2048, 11008, 4096), "vector", ["tile_ld_64x64_v1c1"], 1),  # 1376 big tiles: 10.4 per SM
    ((4095, 4095, 4095), "padded", ["pad2", "tile_ld_128x128_v1c0"], 1),
    ((4097, 4097, 4097), "padded", ["pad2", "tile_ld_64x64_v1c0"], 1),  # 8.25 big tiles per SM
    ((1000, 3000, 77), "padded", ["pad2", "tile_ld_64x64_v1c1"], 1),  # only A: N % 4 == 0
    ((1024, 50257, 768), "padded", ["pad2", "tile_ld_128x128_v1c0"], 1),  # only B
    ((1024, 1024, 1024), "vector", ["tile_ld_64x64_v1c1"], 1),  # 256 tiles: no split
    ((1023, 1023, 1023), "padded", ["pad2", "tile_ld_64x64_v1c0"], 1),
    ((128, 128, 65536), "vector", ["tile_ld_64x64_v1c1", "splitk_reduce_v1"], 128),
    ((256, 256, 16384), "vector", ["tile_ld_64x64_v1c1", "splitk_reduce_v1"], 32),
    ((127, 127, 127), "scalar", ["tile_ld_64x64_v0c0"], 1),
    ((1, 4096, 4096), "skinny-M", ["skinny_m1_v1", "splitk_reduce_v1"], 16),
    ((8, 4096, 4096), "vector", ["tile_ld_64x64_v1c1", "splitk_reduce_v1"], 8),  # M > SKINNY_M
    ((16, 4096, 4096), "vector", ["tile_ld_64x64_v1c1", "splitk_reduce_v1"], 8),
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
    assert D.choose_tile(2048, 2048, 132) == "big"  # 256 tiles
    assert D.choose_tile(4096, 4096, 132) == "big"  # balance 0.97 either way: the big tile's FMAs win
    assert D.choose_tile(4097, 4097, 132) == "small"  # 1089 big tiles: 8.25 per SM, 9 on the busiest
    assert D.sm_balance(1089, 132) == pytest.approx(8.25 / 9)
    assert D.choose_tile(1024, 1024, 132) == "small"  # 64 tiles < 132 SMs
    # 60 SMs: 64 big tiles put 2 on 4 SMs and 1 on the rest (balance 0.53); 256 small tiles, 0.85
    assert D.choose_tile(1024, 1024, 60) == "small"
    assert D.choose_tile(2048, 2048, 64) == "big"  # 256 big tiles: 4 per SM exactly
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
    assert plan(127, 127, 127, policy=D.Policy(odd="pad")).path == "scalar"


def test_unaligned_pointers_copy_the_operand_or_drop_the_16_byte_epilogue():
    p = plan(4096, 4096, 4096, ops=D.Operands(a16=False))
    assert p.path == "padded" and p.buffers == {"Ap": 4096 * 4096}
    p = plan(4096, 4096, 4096, ops=D.Operands(c16=False))
    assert p.path == "vector" and p.main_launch.kernel.name == "tile_ld_128x128_v1c0" and not p.buffers
    p = plan(256, 256, 16384, ops=D.Operands(c16=False))  # split: slices are aligned, C is not
    assert p.main_launch.kernel.name == "tile_ld_64x64_v1c1" and p.launches[-1].kernel.name == "splitk_reduce_v0"
    assert plan(1, 4096, 4096, ops=D.Operands(b16=False)).main_launch.kernel.name == "skinny_m1_v0"
    assert plan(4096, 1, 4096, ops=D.Operands(b16=False)).main_launch.kernel.name == "skinny_n1_v1"  # B staged


def test_policies_select_the_alternatives():
    assert plan(4095, 4095, 4095, policy=D.Policy(odd="scalar")).launches[0].kernel.name == "tile_ld_128x128_v0c0"
    p = plan(1, 4096, 4096, policy=D.Policy(skinny=False))
    assert p.main_launch.kernel.family == "tile_ld" and p.split > 1
    p = plan(1024, 1024, 1024, policy=D.Policy(tile="big", split=4))
    assert p.main_launch.kernel.name == "tile_ld_128x128_v1c1" and p.split == 4 and p.main_launch.grid == (8, 8, 4)
    assert plan(128, 128, 65536, policy=D.Policy(split=1)).split == 1
    for bad, msg in ((dict(odd="guess"), "odd="), (dict(tile="huge"), "tile="), (dict(split=0), "split="),
                     (dict(split=True), "split=")):
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
    from gemmlab.bench import table
    from gemmlab.profile import targets

    rows = [{"kernel": "dispatch", "launched": {"rung": "skinny-M split-K 16: skinny_m1_v1 + splitk_reduce_v1"}},
            {"kernel": "coalesced", "launched": {"rung": "coalesced"}}]
    cap = table.caption({"shape": {"M": 1, "N": 4096, "K": 4096}, "rows": rows})
    assert "what ran: dispatch ran skinny-M split-K 16: skinny_m1_v1 + splitk_reduce_v1" in cap
    assert "coalesced ran" not in cap
    t = targets.rung_target("dispatch", (1, 4096, 4096), warmup=3)
    assert t.kernel_regex == paths.MAIN_KERNEL_REGEX and t.launch_skip == 3 and t.launch_count == 1
    assert re.match(t.kernel_regex, "gemmlab_skinny_m1_v1") and re.match(t.kernel_regex, "gemmlab_tile_ld_64x64_v1c1")
    assert not re.match(t.kernel_regex, "gemmlab_pad2") and not re.match(t.kernel_regex, "gemmlab_splitk_reduce_v1")
    assert targets.launched_kernel("dispatch", 1, 4096, 4096) is None


# The H100 measurements the rules were set from: every alternative the device run timed per shape
# (benchmarks/dispatch_compare.py). The plan the rules choose now must be within 3 points of cuBLAS %
# of the best alternative measured - the rules reproduce what the GPU showed, not what we guessed.
MEASURED = Path(__file__).resolve().parents[1] / "docs/results/shapes-dispatch-h100-2026-11-23/dispatch_compare.json"


def _ran(p) -> str:
    return ", ".join(x.kernel.name for x in p.launches)


# Where the rules still lose to a measured alternative by more than 3 points, and why (kept visible
# rather than hidden by a looser tolerance).
KNOWN_MISSES = {
    (256, 256, 16384): "128x128 tiles with 64 K-slices measured 88.4% vs the rule's 64x64 with 32 "
                       "(84.5%): choose_tile keeps 64x64 whenever 128x128 tiles are fewer than the SMs, "
                       "though a deep split makes enough blocks either way (not at 1023^3: 56.6 vs 75.2)",
}


def test_rules_pick_what_the_h100_measured_fastest():
    import json
    import re

    data = json.loads(MEASURED.read_text())
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
        assert miss == (tuple(shape["shape"]) in KNOWN_MISSES), (shape["shape"], _ran(p), found["pct_of_cublas"], best)
        checked += 1
    assert checked >= 15
