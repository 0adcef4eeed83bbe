"""Occupancy calculator: NVIDIA's numbers from the real H100 captures, and hand-derived values.

Hand derivations follow cuda_occupancy.h (CUDA 13.0): registers per warp = ceil(regs·32/256)·256,
warps per sub-partition = floor((65536/4) / that), blocks = floor(4 · that / warps per block);
shared memory per block = ceil((smem + reserve) / unit) · unit, blocks = floor(carve-out / that).
"""

from __future__ import annotations

import pytest
from ncu_raw_records import NCU_H100, number, raw_launches, raw_rows

from gemmlab.analysis.occupancy import (
    LIMIT_NAMES,
    NCU_LIMIT_METRICS,
    launch_arch,
    ncu_disagreements,
    occupancy,
    occupancy_from_launch,
)
from gemmlab.errors import InputError
from gemmlab.hardware import ARCHS
from gemmlab.profile.records import KernelLaunch, Metric

FIXTURE_KERNELS = ["gemm_uncoalesced", "gemm_coalesced", "gemm_tiled16", "gemm_tiled16_unroll", "gemm_blocktile2d"]


# --- Nsight Compute's own answers for the five captured kernels ---------------------------------


@pytest.mark.parametrize("row", raw_rows(), ids=lambda r: r["Kernel Name"].split("(")[0])
def test_every_ncu_limit_of_every_fixture_kernel(row):
    """Computed from the raw inputs only (block size, registers, static + dynamic shared memory,
    barriers, the carve-out the launch ran with); the architecture's reserve comes from our table."""
    res = occupancy(
        "sm_" + row["CC"].replace(".", ""),
        int(number(row, "launch__block_size")),
        int(number(row, "launch__registers_per_thread")),
        int(number(row, "launch__shared_mem_per_block_static") + number(row, "launch__shared_mem_per_block_dynamic")),
        barriers=int(number(row, "launch__barrier_count")),
        smem_config=int(number(row, "launch__shared_mem_config_size")),
    )
    for name, metric in NCU_LIMIT_METRICS.items():
        assert res.limits[name] == int(number(row, metric)), name
    assert 100 * res.occupancy == number(row, "sm__maximum_warps_per_active_cycle_pct")
    assert res.active_warps == number(row, "sm__maximum_warps_avg_per_active_cycle")
    assert res.inputs.regs_per_warp // 32 == number(row, "launch__registers_per_thread_allocated")
    assert res.inputs.smem_allocated == number(row, "launch__shared_mem_per_block_allocated")
    assert res.inputs.reserved == number(row, "launch__shared_mem_per_block_driver")


def test_fixture_values_are_the_known_ones():
    """What the five kernels are (from the fixture README): the limiter of each, spelled out."""
    got = {}
    for launch in raw_launches():
        r = occupancy_from_launch(launch)
        got[launch.name] = (r.blocks_per_sm, r.limiters, r.limits["registers"], r.limits["shared_mem"])
    assert list(got) == FIXTURE_KERNELS
    # 32 regs: 1024/warp, 16 warps per sub-partition → 64 warps → 8 blocks of 8 warps = the warp limit.
    assert got["gemm_coalesced"] == (8, ("warps", "registers"), 8, 32)
    # 22 regs → 704 → 768/warp (24 allocated), 21 warps per sub-partition → 84 → 10 blocks; 3 KiB/block
    # in a 64 KiB carve-out → 21.
    assert got["gemm_tiled16"] == (8, ("warps",), 10, 21)
    # 96 regs: 3072/warp, 5 warps per sub-partition → 20 warps → 2 blocks; 9 KiB/block → 7.
    assert got["gemm_blocktile2d"] == (2, ("registers",), 2, 7)


def test_occupancy_from_launch_agrees_with_ncu_on_raw_csv():
    for launch in raw_launches():
        res = occupancy_from_launch(launch)
        assert ncu_disagreements(res, launch) == {}, launch.name


def test_occupancy_from_launch_on_the_ncu_rep():
    ncu_report = pytest.importorskip("ncu_report")
    ctx = ncu_report.load_report(str(NCU_H100 / "gemm_tiled16.ncu-rep"))
    action = ctx.range_by_idx(0).action_by_idx(0)
    metrics = {}
    for name in action.metric_names():
        if name.startswith(("launch__", "sm__maximum_warps", "device__attribute_compute_capability")):
            m = action.metric_by_name(name)
            value = m.as_string() if m.kind() == ncu_report.IMetric.ValueKind_STRING else m.as_double()
            metrics[name] = Metric(value, m.unit())
    launch = KernelLaunch(id=0, name=action.name(), demangled=action.name(), metrics=metrics, source="rep")
    res = occupancy_from_launch(launch)
    assert ncu_disagreements(res, launch) == {}
    assert res.limits == {"warps": 8, "registers": 10, "shared_mem": 21, "blocks": 32, "barriers": 32}
    assert launch_arch(launch).name == "sm_90"  # from the device attributes: no CC column in a report


def test_sm90_table_matches_the_h100_device_attributes():
    row = raw_rows()[0]
    a = ARCHS["sm_90"]
    attr = {
        "max_threads_per_multiprocessor": a.max_threads_per_sm,
        "max_warps_per_multiprocessor": a.max_warps_per_sm,
        "max_blocks_per_multiprocessor": a.max_blocks_per_sm,
        "max_registers_per_multiprocessor": a.regs_per_sm,
        "max_registers_per_block": a.regs_per_block,
        "max_registers_per_thread": a.max_regs_per_thread,
        "max_shared_memory_per_multiprocessor": a.smem_per_sm,
        "max_shared_memory_per_block_optin": a.smem_per_block_optin,
        "max_shared_memory_per_block": a.smem_per_block_default,
        "reserved_shared_memory_per_block": a.smem_reserved_per_block,
        "max_threads_per_block": a.max_threads_per_block,
        "num_schedulers_per_multiprocessor": a.sub_partitions,
        "warp_size": a.warp_size,
    }
    for name, ours in attr.items():
        assert number(row, f"device__attribute_{name}") == ours, name


# --- known calculator values (derived by hand in the comments) ----------------------------------


def test_sm90_256_threads_96_regs_8k():
    r = occupancy("sm_90", 256, 96, 8 * 1024)
    # warps 64/8 = 8; regs 3072/warp → 5 per sub-partition → 20 warps → 2; smem (8192+1024) = 9216 B in
    # the 228 KiB default carve-out → 233472 // 9216 = 25.
    assert r.limits == {"warps": 8, "registers": 2, "shared_mem": 25, "blocks": 32, "barriers": 32}
    assert (r.blocks_per_sm, r.limiter, r.occupancy) == (2, "registers", 0.25)
    assert r.smem_config == 228 * 1024 and r.min_carveout == 32 * 1024  # 2 × 9216 fits the 32 KiB step
    # 3 blocks need 6 warps per sub-partition: 16384 // 6 = 2730 → 2560 per warp = 80 registers.
    (adv,) = r.advice
    assert (adv.resource, adv.blocks_per_sm, adv.occupancy) == ("registers", 3, 0.375)
    assert "from 96 to 80" in adv.text and "__launch_bounds__(256, 3)" in adv.text


def test_sub_partition_rule_not_the_naive_division():
    # One warp with 192 registers (6144 per warp): 16384 // 6144 = 2 per sub-partition → 8 blocks.
    # Dividing the whole file, 65536 // 6144 = 10, would be wrong.
    assert occupancy("sm_90", 32, 192, 0).limits["registers"] == 8


def test_sm80_shared_memory_bound_and_the_advice():
    r = occupancy("sm_80", 128, 64, 48 * 1024)
    # (49152 + 1024) = 50176 B per block in 164 KiB: 167936 // 50176 = 3; registers 2048/warp → 8 blocks.
    assert r.limits == {"warps": 16, "registers": 8, "shared_mem": 3, "blocks": 32, "barriers": 32}
    assert (r.blocks_per_sm, r.limiters, r.occupancy) == (3, ("shared_mem",), 12 / 64)
    # 4 blocks: 167936 // 4 = 41984 (a multiple of 128) minus the 1 KiB reserve = 40960 B.
    (adv,) = r.advice
    assert adv.change == "shared memory per block 49152 B → 40960 B" and adv.blocks_per_sm == 4


def test_sm80_register_file_bounds_big_blocks():
    # 1024 threads × 64 registers = the whole 64K file: one block.
    assert occupancy("sm_80", 1024, 64).blocks_per_sm == 1
    # 65 registers round to 72 (2304 per warp) × 32 warps = 73728 > 65536: the launch cannot run.
    r = occupancy("sm_80", 1024, 65)
    assert (r.blocks_per_sm, r.limiters, r.occupancy) == (0, ("registers",), 0.0)
    assert r.advice[0].change == "registers per thread 65 → 64"


def test_sm80_carveout_preference():
    # 16 KiB + 1 KiB reserve = 17408 B per block; 8 warps, 32 registers → 8 blocks by warps and registers.
    assert occupancy("sm_80", 256, 32, 16 * 1024).blocks_per_sm == 8
    # 50 % of 164 KiB = 83968 B → the next step, 100 KiB: 102400 // 17408 = 5.
    r = occupancy("sm_80", 256, 32, 16 * 1024, carveout_pct=50)
    assert (r.smem_config, r.limits["shared_mem"], r.limiter) == (100 * 1024, 5, "shared_mem")
    # 0 % is below one block's need: the smallest step that holds one block (32 KiB) → 1 block.
    r = occupancy("sm_80", 256, 32, 16 * 1024, carveout_pct=0)
    assert (r.smem_config, r.blocks_per_sm) == (32 * 1024, 1)


def test_turing_and_ada_limits():
    # sm_75: 32 warps, 16 blocks; 40 registers = 1280 per warp → 12 per sub-partition → 48 warps → 12.
    r = occupancy("sm_75", 128, 40)
    assert r.limits["warps"] == 8 and r.limits["registers"] == 12 and r.occupancy == 1.0
    # No reserve before sm_80 and no shared memory: the limit never binds (shown at the 16 block slots).
    assert r.inputs.smem_allocated == 0 and r.limits["shared_mem"] == 16
    assert occupancy("sm_75", 128, 40, carveout_pct=0).smem_config == 32 * 1024  # Turing: 32 or 64 KiB
    # sm_89: 48 warps, 24 blocks: 64-thread blocks are bounded by the 24 block slots (48 of 48 warps).
    r = occupancy("sm_89", 64, 32)
    assert (r.blocks_per_sm, r.limiters, r.occupancy) == (24, ("warps", "blocks"), 1.0)


def test_gp100_refuses_what_gp10x_cannot_run():
    # 9 warps × 192 registers (6144/warp): GP100's 2 sub-partitions hold 5 warps each → 10 ≥ 9, but a
    # GP10x sub-partition holds 2 → 8 < 9, and the header refuses it on every Pascal part.
    assert occupancy("sm_60", 288, 192).blocks_per_sm == 0
    assert occupancy("sm_61", 288, 192).blocks_per_sm == 0
    # 8 warps fit both: GP100 10 // 8 = 1 block.
    assert occupancy("sm_60", 256, 192).limits["registers"] == 1


def test_barriers_from_sm90_on():
    # sm_90: 2 × 32 barrier slots; 3 barriers per block → 21 blocks, below the other limits.
    r = occupancy("sm_90", 64, 16, barriers=3)
    assert (r.blocks_per_sm, r.limiters) == (21, ("barriers",))
    assert r.advice[0].change == "barriers per block 3 → 2" and r.advice[0].blocks_per_sm == 32
    # Before sm_90 the header applies no barrier limit.
    assert occupancy("sm_80", 64, 16, barriers=16).limits["barriers"] == 32
    # A barrier count that allows more than the block slots is shown at the slot count (as ncu does).
    assert occupancy("sm_90", 64, 16, barriers=1).limits["barriers"] == 32
    assert "barriers" not in occupancy("sm_90", 32, 16, barriers=1).limiters  # 64 slots, not 32


def test_block_size_advice():
    # 640 threads = 20 warps: 3 blocks use 60 of 64 warps; 512 threads give 4 × 16 = 64.
    r = occupancy("sm_90", 640, 32)
    assert r.limiters == ("warps", "registers")
    by = {a.resource: a for a in r.advice}
    assert by["warps"].change == "threads per block 640 → 512" and by["warps"].occupancy == 1.0
    assert "gains nothing" in by["registers"].text  # fewer registers alone: warps still hold 3 blocks
    # 32-thread blocks: 32 block slots × 1 warp = half the warps.
    r = occupancy("sm_90", 32, 32)
    assert (r.limiter, r.occupancy) == ("blocks", 0.5)
    assert r.advice[0].change == "threads per block 32 → 64"


def test_full_occupancy_has_no_advice():
    assert occupancy("sm_90", 256, 32).advice == ()


def test_carveout_as_launched_and_its_advice():
    r = occupancy("sm_90", 256, 32, 48 * 1024, smem_config=64 * 1024)
    # (49152 + 1024) = 50176 B in 64 KiB → 1 block; in 228 KiB → 4.
    assert (r.blocks_per_sm, r.smem_config_source) == (1, "as launched")
    assert r.advice[0].change == "carve-out 64 KiB → 228 KiB" and r.advice[0].blocks_per_sm == 4


def test_odd_block_sizes_and_no_registers():
    r = occupancy("sm_90", 100, 0)  # 100 threads occupy 4 warps; 0 registers: no register limit
    assert r.inputs.warps_per_block == 4 and r.limits["registers"] == 32 and "registers" not in r.limiters


@pytest.mark.parametrize(
    "args,kw,fragment",
    [
        (("sm_42", 256, 32), {}, "known: sm_60"),
        (("sm_90", 0, 32), {}, "--threads 0"),
        (("sm_90", 1025, 32), {}, "1..1024"),
        (("sm_90", 256, 256), {}, "--regs 256"),
        (("sm_90", 256, 32, 227 * 1024 + 1), {}, "opt-in maximum"),
        (("sm_86", 256, 32, 100 * 1024), {}, "0..101376"),
        (("sm_90", 256, 32), {"barriers": 17}, "barriers 17"),
        (("sm_90", 256, 32), {"carveout_pct": 101}, "carveout 101"),
    ],
)
def test_bad_input_is_one_clear_error(args, kw, fragment):
    with pytest.raises(InputError) as e:
        occupancy(*args, **kw)
    assert fragment in e.value.message and "\n" not in e.value.message


def test_every_arch_is_self_consistent():
    for a in ARCHS.values():
        assert a.max_warps_per_sm * a.warp_size == a.max_threads_per_sm
        assert a.smem_carveouts[-1] == a.smem_per_sm, a.name
        # The largest block the opt-in allows, with its reserve, fits the largest carve-out exactly
        # or with room to spare: one such block must always be able to run.
        assert occupancy(a, 32, 32, a.smem_per_block_optin).blocks_per_sm >= 1, a.name
    assert {"sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_120"} <= set(ARCHS)


def test_launch_without_launch_metrics_names_what_is_missing():
    launch = KernelLaunch(id=0, name="k", demangled="k", cc="9.0", metrics={}, source="x.csv")
    with pytest.raises(InputError) as e:
        occupancy_from_launch(launch)
    assert "launch__registers_per_thread" in e.value.message and "--section Occupancy" in e.value.message
    with pytest.raises(InputError, match="compute capability"):
        launch_arch(KernelLaunch(id=0, name="k", demangled="k"))


def test_limit_names_cover_ncu_metrics():
    assert set(LIMIT_NAMES) == set(NCU_LIMIT_METRICS)


def test_shared_memory_allocation_unit():
    # sm_90 allocates in 128 B: 32276 + 1024 = 33300 → 33408 B; 233472 // 33408 = 6 (7 if unrounded).
    r = occupancy("sm_90", 64, 32, 32276)
    assert (r.inputs.smem_allocated, r.limits["shared_mem"]) == (33408, 6)
    # sm_70 allocates in 256 B and reserves nothing: 19600 → 19712 B; 98304 // 19712 = 4 (5 if unrounded).
    r = occupancy("sm_70", 64, 32, 19600)
    assert (r.inputs.smem_allocated, r.limits["shared_mem"]) == (19712, 4)


def test_through_gemmlabs_own_loader_on_every_csv_export():
    """The same agreement when the capture is read by gemmlab.profile.load (scaled units included)."""
    from gemmlab.profile.load import load

    files = [NCU_H100 / "gemm_ladder_raw.csv", NCU_H100 / "gemm_ladder_raw_base.csv"]
    for path in files:
        launches = load(path)
        assert [k.name for k in launches] == FIXTURE_KERNELS
        for launch in launches:
            assert ncu_disagreements(occupancy_from_launch(launch), launch) == {}, (path.name, launch.name)
