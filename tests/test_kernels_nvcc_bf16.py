"""Every BF16 tensor-core rung instantiation compiles with nvcc for sm_80 and sm_90 with no
spills and within the hardware limits (CPU only; skipped where nvcc is missing)."""

from __future__ import annotations

import pytest

from conftest import NVCC_JOBS, requires_nvcc
from gemmlab.kernels.registry import all_rungs, get
from gemmlab.runtime import nvcc


pytestmark = requires_nvcc

ARCHS = ("sm_80", "sm_90")
STATIC_SMEM_MAX = 48 * 1024


@pytest.fixture(scope="module")
def report():
    res = nvcc.resources(all_rungs("bf16"), archs=ARCHS, jobs=NVCC_JOBS)
    return {(r.kernel, r.arch): r for r in res}


def _targets(rung):
    """sm_80 and sm_90 for the Ampere-style rungs; sm_90a only for the Hopper rungs."""
    return ("sm_90a",) if rung.arch == "sm_90a" else ARCHS


def test_every_bf16_rung_compiles_for_every_arch(report):
    missing = [(r.kernel, a) for r in all_rungs("bf16") for a in _targets(r)
               if (r.kernel, a) not in report]
    assert not missing
    assert not [k for k in report if k[1] == "sm_80" and "wgmma" in k[0]]


def test_hopper_rungs_fit_one_block_per_sm_with_the_register_cap(report):
    """The warp-specialised rungs run 3 warpgroups under __launch_bounds__(384, 1): ptxas must
    fit them in 65536 / 384 = 170 -> 168 registers at entry (setmaxnreg moves them later), and
    their dynamic shared memory within the H100's 227 KB opt-in."""
    hopper = {r.kernel for r in all_rungs("bf16") if r.arch == "sm_90a"}
    res = [r for (kernel, arch), r in report.items() if arch == "sm_90a"]
    assert hopper and {r.kernel for r in res} == hopper
    for r in res:
        rung = get(r.kernel.removeprefix("gemmlab_"))
        assert not r.spills and not r.stack_frame, r.kernel
        if rung.threads == 384:
            assert r.registers <= 168, (r.kernel, r.registers)
        assert rung.dynamic_smem <= 227 * 1024, rung.name


def test_no_bf16_rung_spills_and_resources_fit(report):
    bad = {k: (r.spill_stores, r.spill_loads, r.stack_frame) for k, r in report.items()
           if r.spills or r.stack_frame}
    assert not bad
    for (kernel, arch), r in report.items():
        assert 0 < r.registers <= 255, (kernel, arch)
        assert r.smem <= STATIC_SMEM_MAX, (kernel, arch)


def test_shared_tiles_are_the_sizes_the_kernels_declare(report):
    # wmma_bf16: padded A (64 x (32+8)) and B (32 x (64+8)) bf16 tiles + a padded f32 C tile.
    w = get("wmma_bf16").params
    want = (w["BM"] * (w["BK"] + 8) + w["BK"] * (w["BN"] + 8)) * 2 + w["BM"] * (w["BN"] + 4) * 4
    assert report[("gemmlab_wmma_bf16", "sm_90")].smem == want
    # mma_sync_bf16: unpadded (swizzled) A and B tiles only.
    m = get("mma_sync_bf16").params
    want = (m["BM"] * m["BK"] + m["BK"] * m["BN"]) * 2
    assert report[("gemmlab_mma_sync_bf16", "sm_90")].smem == want
    assert report[("gemmlab_mma_sync_bf16_scalar", "sm_90")].smem == want
    # cp_async_bf16: no static shared memory at all; its ring is dynamic (registry.dynamic_smem)
    for name in ("gemmlab_cp_async_bf16", "gemmlab_cp_async_bf16_scalar",
                 "gemmlab_cp_async_bf16_f32out"):
        assert report[(name, "sm_90")].smem == 0
    assert get("cp_async_bf16").dynamic_smem == 4 * (128 * 32 + 32 * 256) * 2
