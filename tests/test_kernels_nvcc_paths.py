"""Every kernel of the dispatch rung (gemmlab.kernels.paths) compiles with nvcc for sm_80 and sm_90,
without spills or a stack frame, within the hardware's limits (CPU only; skipped without nvcc)."""

from __future__ import annotations

import pytest

from conftest import NVCC_JOBS, requires_nvcc
from gemmlab.kernels import paths
from gemmlab.runtime import nvcc

pytestmark = requires_nvcc

ARCHS = ("sm_80", "sm_90")
MAX_REGS = 255
STATIC_SMEM_MAX = 48 * 1024


@pytest.fixture(scope="module")
def report():
    res = nvcc.resources(paths.all_path_kernels(), archs=ARCHS, jobs=NVCC_JOBS, unit=paths.translation_unit)
    return {(r.kernel, r.arch): r for r in res}


def test_every_path_kernel_compiles_for_every_arch(report):
    missing = [(k.kernel, a) for k in paths.all_path_kernels() for a in ARCHS if (k.kernel, a) not in report]
    assert not missing


def test_no_spills_or_stack_frames(report):
    # A stack frame here would mean a register array indexed at run time (e.g. the skinny kernels'
    # accumulators or the reduce-scatter not fully unrolled): local-memory traffic in the hot loop.
    bad = {k: (r.spill_stores, r.spill_loads, r.stack_frame) for k, r in report.items()
           if r.spills or r.stack_frame}
    assert not bad


def test_resources_within_limits_and_shared_memory_as_designed(report):
    for (kernel, arch), r in report.items():
        assert 0 < r.registers <= MAX_REGS and r.smem <= STATIC_SMEM_MAX, (kernel, arch)
    # Static shared memory: the skinny_m reduction buffer (8 warps x up to 4 rows x 128 columns),
    # skinny_n's staged chunk (NR x 260), the reduce kernel's 8 x 32 float4; tile_ld is dynamic.
    assert report[("gemmlab_skinny_m16_v1", "sm_90")].smem == 8 * 4 * 128 * 4
    assert report[("gemmlab_skinny_m1_v1", "sm_90")].smem == 8 * 1 * 128 * 4
    assert report[("gemmlab_skinny_n16_v0", "sm_90")].smem == 16 * 260 * 4
    assert report[("gemmlab_splitk_reduce_v1", "sm_90")].smem == 8 * 32 * 16
    assert report[("gemmlab_tile_ld_64x128_v1c1", "sm_90")].smem == 0
    assert report[("gemmlab_tiny_32x8", "sm_90")].smem == (8 + 32) * 32 * 4  # As[8][32], Bs[32][32]


def test_tile_kernels_meet_their_resident_block_caps(report):
    # MINB asks ptxas for that many resident blocks: 3 x 128 threads x regs (and 4 for the small
    # tile) must fit the SM's 64K registers, or the occupancy the rules assume is not there.
    for k in paths.all_path_kernels():
        if k.params.get("MINB"):
            for arch in ARCHS:
                regs = report[(k.kernel, arch)].registers
                assert k.params["MINB"] * k.threads * regs <= 65536, (k.kernel, arch, regs)


def test_skinny_kernels_leave_room_for_two_blocks_per_sm(report):
    # 256 threads x 128 registers = 32K of the SM's 64K: at least two blocks (16 warps) resident,
    # the occupancy the streaming loads need to keep enough bytes in flight.
    for (kernel, arch), r in report.items():
        if "skinny" in kernel:
            assert r.registers <= 128, (kernel, arch, r.registers)
