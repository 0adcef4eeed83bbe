"""The FP8 rung compiles with nvcc for sm_90a with no spills, within the register cap its three
warpgroups need at entry (384 threads, one block per SM: 65536 / 384 -> 168) and within the H100's
shared memory (CPU only; skipped where nvcc is missing)."""

from __future__ import annotations

import pytest

from conftest import NVCC_JOBS, requires_nvcc
from gemmlab.kernels.ladders import FP8_LADDER
from gemmlab.kernels.registry import all_rungs, get
from gemmlab.runtime import nvcc, toolchain

pytestmark = requires_nvcc


@pytest.fixture(scope="module")
def report():
    # asking for sm_90 compiles the sm_90a-only rung for sm_90a; sm_80 has no such target
    return nvcc.resources(all_rungs("fp8"), archs=("sm_80", "sm_90"), jobs=NVCC_JOBS)


def test_fp8_rung_compiles_for_sm90a_only(report):
    assert {(r.kernel, r.arch) for r in report} == {(r.kernel, "sm_90a") for r in all_rungs("fp8")}


def test_fp8_rung_fits_the_register_cap_without_spills(report):
    for r in report:
        rung = get(r.kernel.removeprefix("gemmlab_"))
        assert rung.threads == 384
        assert not r.spills and not r.stack_frame, (r.kernel, r.spill_stores, r.spill_loads)
        assert 0 < r.registers <= 168, (r.kernel, r.registers)
        assert r.smem == 0  # everything is dynamic shared memory
        assert rung.dynamic_smem <= 227 * 1024, rung.name


def test_ptx_has_the_e4m3_wgmma_multicast_loads_and_tma_stores(tmp_path):
    """The PTX of the rung holds the k32 e4m3 wgmma (both operands from descriptors) and the
    multicast TMA load, as the header comment says."""
    import subprocess

    from gemmlab.kernels.source import translation_unit
    from gemmlab.runtime.toolchain import BASE_OPTIONS

    src = tmp_path / "unit.cu"
    src.write_text(translation_unit(FP8_LADDER))
    out = tmp_path / "unit.ptx"
    subprocess.run([toolchain.find_nvcc(), "-ptx", toolchain.arch_flag("sm_90a"), *BASE_OPTIONS, "-o",
                    str(out), str(src)], check=True, capture_output=True)
    ptx = out.read_text()
    assert "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3" in ptx
    assert "multicast::cluster" in ptx and "cp.async.bulk.tensor.2d.global.shared::cta" in ptx
    assert "setmaxnreg.inc.sync.aligned.u32 232" in ptx
