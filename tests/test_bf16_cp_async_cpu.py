"""BF16 rung 3 (cp_async_bf16) without a GPU: its registry entry and twins, launch geometry and
dynamic shared memory, refusals of inconsistent parameters, the launcher's >48 KB opt-in, the
grouped block order (a Python mirror of the kernel's index arithmetic: every tile exactly once),
the bank-conflict freedom of its swizzled ldmatrix reads, and - with nvcc - that the vector
instantiation really copies with cp.async.cg while the scalar twin does not."""

from __future__ import annotations

import re
import subprocess
import types

import pytest

from conftest import requires_nvcc
from gemmlab.errors import InputError
from gemmlab.kernels import families
from gemmlab.kernels.ladders import TC_LADDER, f32_out_twin, scalar_twin
from gemmlab.kernels.registry import all_rungs, get
from gemmlab.kernels.source import translation_unit, wrapper

RUNG = "cp_async_bf16"


def test_registry_entry():
    r = get(RUNG)
    assert r in TC_LADDER and r.order == 3 and r.source == "cp_async_bf16.cu"
    assert (r.dtype, r.out_dtype, r.arch, r.vectorized) == ("bf16", "bf16", "sm_80", True)
    assert dict(r.params) == dict(BM=128, BN=256, BK=32, WM=64, WN=64, STAGES=4, GROUP=8, VEC=1,
                                  OUT_F32=0)
    assert r.threads == 256 and r.tile == (128, 256)
    assert r.dynamic_smem == 4 * (128 * 32 + 32 * 256) * 2 == 98304
    assert r.needs.dynamic_smem == 98304 and r.needs.arch == "sm_80"
    assert r.template_call == "gemmlab::cp_async_bf16<128, 256, 32, 64, 64, 4, 8, 1, 0>"
    assert "cp.async" in r.summary and "stage" in r.summary
    assert 'void __launch_bounds__(256) gemmlab_cp_async_bf16(' in wrapper(r)


def test_twins_share_the_ring():
    r = get(RUNG)
    names = {x.name for x in all_rungs("bf16") if x.family == "cp_async_bf16"}
    assert names == {"cp_async_bf16", "cp_async_bf16_f32out", "cp_async_bf16_scalar",
                     "cp_async_bf16_f32out_scalar"}
    s, f = scalar_twin(r), f32_out_twin(r)
    assert s.params["VEC"] == 0 and s.dynamic_smem == r.dynamic_smem
    assert f.out_dtype == "fp32" and "float* __restrict__ C" in wrapper(f)
    assert scalar_twin(f).name == "cp_async_bf16_f32out_scalar"


def test_launch_geometry_and_shape_rules():
    r = get(RUNG)
    grid, block, smem = r.launch_config(1000, 3000, 77)
    assert grid == (-(-3000 // 256), -(-1000 // 128), 1) == (12, 8, 1)
    assert block == (256, 1, 1) and smem == 98304
    assert r.launch_config(4096, 4096, 4096)[0] == (16, 32, 1)
    assert r.launch_config(1, 1, 1)[0] == (1, 1, 1)
    assert r.accepts(4096, 4096, 4096) and r.accepts(4097, 264, 136)
    assert not r.accepts(1000, 3000, 77) and not r.accepts(127, 127, 127)  # scalar twin instead
    with pytest.raises(InputError, match="M=0"):
        r.launch_config(0, 5, 5)


@pytest.mark.parametrize("bad", [
    dict(STAGES=1),          # no pipeline
    dict(BN=96, WN=32),      # B rows must be 8k chunks for the swizzle
    dict(BK=48),             # A rows: 4 or 8k chunks
    dict(WM=48),             # warp tile not dividing BM
    dict(GROUP=-1),
])
def test_inconsistent_parameters_fail_at_construction(bad):
    params = {**get(RUNG).params, **bad}
    with pytest.raises(ValueError, match="tensor-core tiling"):
        families.make_rung("bad", 3, "cp_async_bf16", "x", **params)


def test_a_smaller_consistent_configuration_is_accepted():
    r = families.make_rung("small", 3, "cp_async_bf16", "x", BM=64, BN=64, BK=32, WM=32, WN=32,
                       STAGES=3, GROUP=0, VEC=1, OUT_F32=0)
    assert r.threads == 128 and r.dynamic_smem == 3 * (64 * 32 + 32 * 64) * 2


def test_compile_sets_the_dynamic_smem_opt_in(monkeypatch, tmp_path):
    """96 KB of dynamic shared memory is over the 48 KB default: compile_rung sets the kernel's
    max_dynamic_shared_size_bytes; a device allowing less refuses in one line."""
    from gemmlab.runtime import compile as comp
    from gemmlab.runtime import device

    monkeypatch.setattr(comp, "_LOADED", {})
    fake_cupy = types.SimpleNamespace(RawModule=lambda path: types.SimpleNamespace(
        get_function=lambda name: types.SimpleNamespace(name=name)))
    monkeypatch.setattr(device, "require_gpu", lambda: fake_cupy)

    class Fake:
        name, version = "fake", "fake 1"

        def compile(self, source, options, arch, name):
            return b"\x7fELF"

    monkeypatch.setattr(comp, "get_compiler", lambda backend="nvrtc": Fake())
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path))

    def info(optin):
        return device.DeviceInfo(0, "Fake GPU", 9, 0, 132, 50 << 20, optin, 228 << 10, 65536,
                                 2048, 80 << 30, 1_980_000)

    monkeypatch.setattr(device, "info", lambda index=None: info(227 << 10))
    k = comp.compile_rung(get(RUNG))
    assert k.name == "gemmlab_cp_async_bf16" and k.max_dynamic_shared_size_bytes == 98304
    monkeypatch.setattr(comp, "_LOADED", {})
    monkeypatch.setattr(device, "info", lambda index=None: info(64 << 10))
    with pytest.raises(InputError, match="needs 98304 bytes of shared memory per block") as e:
        comp.compile_rung(get(RUNG))
    assert "\n" not in str(e.value)


def _grouped(bx: int, by: int, gx: int, gy: int, group: int) -> tuple[int, int]:
    """The kernel's block -> tile mapping (cp_async_bf16.cu, GROUP > 0), in Python."""
    id_ = by * gx + bx
    per_band = group * gx
    first_m = (id_ // per_band) * group
    band_rows = min(gy - first_m, group)
    return first_m + (id_ % per_band) % band_rows, (id_ % per_band) // band_rows


@pytest.mark.parametrize("gx, gy", [(16, 32), (12, 8), (1, 1), (3, 33), (33, 3), (5, 17), (1, 9)])
def test_grouped_order_covers_every_tile_once(gx, gy):
    group = get(RUNG).params["GROUP"]
    tiles = [_grouped(bx, by, gx, gy, group) for by in range(gy) for bx in range(gx)]
    assert sorted(tiles) == [(m, n) for m in range(gy) for n in range(gx)]
    # consecutive blocks walk down a band of `group` tile-rows first
    if gy >= group:
        assert [t[0] for t in tiles[:group]] == list(range(group))
        assert {t[1] for t in tiles[:group]} == {0}


def _swz(chunks: int, r: int, c: int) -> int:
    return c ^ ((r >> 1) & 3) if chunks == 4 else c ^ (r & 7)


def test_ldmatrix_phases_are_bank_conflict_free():
    """Each 8-lane phase of an ldmatrix reads 8 rows at one logical 16-byte chunk; in the swizzled
    tiles of the registered shape those 8 reads land on 8 distinct 16-byte bank groups."""
    p = get(RUNG).params
    ach, bch = p["BK"] // 8, p["BN"] // 8
    for row_bytes, chunks in ((p["BK"] * 2, ach), (p["BN"] * 2, bch)):
        for r0 in range(0, 64, 8):
            for c in range(chunks):
                groups = {((r0 + i) * row_bytes + _swz(chunks, r0 + i, c) * 16) % 128 // 16
                          for i in range(8)}
                assert len(groups) == 8, (row_bytes, r0, c)


@requires_nvcc
def test_vector_path_copies_with_cp_async_and_scalar_twin_does_not(tmp_path):
    from gemmlab.runtime.toolchain import find_nvcc

    r = get(RUNG)
    src = tmp_path / "cpa.cu"
    src.write_text(translation_unit([r, scalar_twin(r)]))
    ptx = tmp_path / "cpa.ptx"
    subprocess.run([find_nvcc(), "-ptx", "-arch=sm_80", "-std=c++17", "-o", str(ptx), str(src)],
                   check=True, capture_output=True)
    text = ptx.read_text()

    def body(name):
        m = re.search(r"\.entry " + name + r"\(.*?\n}\n", text, re.S)
        assert m, name
        return m.group(0)

    vec, sca = body("gemmlab_cp_async_bf16"), body("gemmlab_cp_async_bf16_scalar")
    for b in (vec, sca):
        assert "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32" in b
        assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in b
        assert "cp.async.wait_group" in b and "%dynamic_smem_size" in b
    # 6 chunk copies per k-tile per thread (A: 2, B: 4), in the prologue (3 tiles) and main loop
    assert vec.count("cp.async.cg.shared.global") == 6 * 4
    assert "cp.async.cg" not in sca and "st.shared.v4" in sca
    assert "cvt.rn.bf16x2.f32" in vec  # paired epilogue stores on the vector path
