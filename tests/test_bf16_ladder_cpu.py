"""The BF16 tensor-core ladder without a GPU: registry entries (dtypes, architecture, launch
needs), wrappers, shape/alignment/dtype/architecture refusals, harness pieces and the CLI."""

from __future__ import annotations

import json
import types
from dataclasses import dataclass

import numpy as np
import pytest
from conftest import run_cli

from fakes_bench import FakeArray

from gemmlab.errors import InputError
from gemmlab.kernels import families, registry
from gemmlab.kernels.families import LaunchNeeds, arch_refusal, compile_arch
from gemmlab.kernels.ladders import LADDER, TC_LADDER, f32_out_twin, scalar_twin
from gemmlab.kernels.registry import all_rungs, get
from gemmlab.kernels.source import translation_unit, wrapper


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")


# --- registry -------------------------------------------------------------------------------
def test_tc_ladder_order_dtypes_and_arch():
    names = [r.name for r in TC_LADDER]
    assert names[-5:] == ["wgmma_bf16", "tma_bf16", "ws_bf16", "persistent_bf16", "autotuned_bf16"]
    orders = [r.order for r in TC_LADDER]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)
    # rungs 1-3 (the Hopper rungs, sm_90a, come after them)
    first = [r for r in TC_LADDER if r.order <= 3]
    assert [r.name for r in first] == ["wmma_bf16", "mma_sync_bf16", "cp_async_bf16"]
    assert [r.order for r in first] == [1, 2, 3] and TC_LADDER[:3] == tuple(first)
    for r in first:
        assert (r.dtype, r.out_dtype, r.accum_dtype, r.arch) == ("bf16", "bf16", "fp32", "sm_80")
        smem = 0 if r.name != "cp_async_bf16" else 4 * (128 * 32 + 32 * 256) * 2
        assert r.needs == LaunchNeeds(arch="sm_80", dynamic_smem=smem)
        assert r.needs.cluster == (1, 1, 1) and r.needs.tensor_maps == 0
        assert r.kernel == f"gemmlab_{r.name}" and r.summary.strip()
    for r in LADDER:  # the FP32 ladder is unchanged: float32 throughout, any GPU
        assert (r.dtype, r.out_dtype, r.arch) == ("fp32", "fp32", None)


def test_all_rungs_default_is_still_the_fp32_set_and_get_reaches_both():
    assert all(r.dtype == "fp32" for r in all_rungs())
    bf = all_rungs("bf16")
    assert {r.name for r in bf} >= {"wmma_bf16", "mma_sync_bf16", "wmma_bf16_f32out",
                                    "mma_sync_bf16_f32out", "mma_sync_bf16_scalar",
                                    "mma_sync_bf16_f32out_scalar", "cp_async_bf16",
                                    "cp_async_bf16_f32out", "cp_async_bf16_scalar",
                                    "cp_async_bf16_f32out_scalar"}
    # every ladder rung comes with its float32-output twin (the abstract autotuned_bf16 resolves to
    # a candidate instead), every vector one with scalar twins
    for r in TC_LADDER:
        assert f32_out_twin(r) in bf or r.name == "autotuned_bf16"
        if r.vectorized:
            assert scalar_twin(r) in bf and scalar_twin(f32_out_twin(r)) in bf
    assert set(all_rungs(None)) == set(all_rungs()) | set(bf) | set(all_rungs("fp8"))
    assert get("mma_sync_bf16_f32out").out_dtype == "fp32"
    assert registry.ladder("bf16") == TC_LADDER and registry.ladder() == LADDER
    assert "mma_sync_bf16" in registry.names()
    with pytest.raises(InputError, match="bf16 tensor-core rungs: wmma_bf16, mma_sync_bf16"):
        get("wgmma_bf16_nonexistent")
    with pytest.raises(InputError, match="dtype='fp16'"):
        all_rungs("fp16")


def test_twins():
    m = get("mma_sync_bf16")
    s = scalar_twin(m)
    assert s.name == "mma_sync_bf16_scalar" and s.params["VEC"] == 0 and s.dtype == "bf16"
    assert "2-byte global accesses" in s.summary
    f = f32_out_twin(m)
    assert f.params["OUT_F32"] == 1 and f.out_dtype == "fp32" and f32_out_twin(f) is f
    assert f32_out_twin(get("wmma_bf16")).name == "wmma_bf16_f32out"


def test_vector_width_follows_the_dtype():
    m = get("mma_sync_bf16")
    assert m.vector_elems == 8 and get("vectorized").vector_elems == 4
    assert m.accepts(128, 128, 128) and m.accepts(1000, 3000, 80)
    assert not m.accepts(1000, 3000, 77)  # K % 8 != 0: the scalar twin is launched instead
    assert not m.accepts(128, 12, 128)  # N % 8 != 0
    assert get("vectorized").accepts(128, 12, 128)  # float32: N % 4 == 0 is enough
    assert get("wmma_bf16").accepts(7, 7, 7)  # element-wise loads: any shape


def test_launch_geometry():
    grid, block, smem = get("wmma_bf16").launch_config(1000, 3000, 77)
    assert grid == (-(-3000 // 64), -(-1000 // 64), 1) and block == (128, 1, 1) and smem == 0
    grid, block, _ = get("mma_sync_bf16").launch_config(1, 1, 1)
    assert grid == (1, 1, 1) and block == (256, 1, 1)


def test_bad_tc_params_fail_at_construction():
    with pytest.raises(ValueError, match="tensor-core tiling"):
        families.make_rung("bad", 1, "mma_sync_bf16", "x", BM=128, BN=96, BK=32, WM=64, WN=32,
                       VEC=1, OUT_F32=0)
    with pytest.raises(ValueError, match="tensor-core tiling"):
        families.make_rung("bad", 1, "wmma_bf16", "x", BM=64, BN=64, BK=24, WM=32, WN=32, OUT_F32=0)


def test_wrapper_signatures_follow_the_dtypes():
    w = wrapper(get("wmma_bf16"))
    assert "const unsigned short* __restrict__ A" in w and "unsigned short* __restrict__ C" in w
    assert "float* __restrict__ C" in wrapper(get("wmma_bf16_f32out"))
    # the FP32 wrapper text is what it always was (cached cubins keep their keys)
    assert wrapper(get("coalesced")) == (
        'extern "C" __global__ void __launch_bounds__(256) gemmlab_coalesced(\n'
        "    int M, int N, int K, float alpha, const float* __restrict__ A,\n"
        "    const float* __restrict__ B, float beta, float* __restrict__ C) {\n"
        "    gemmlab::coalesced<16, 16>(M, N, K, alpha, A, B, beta, C);\n"
        "}\n")
    tu = translation_unit([get("mma_sync_bf16"), get("mma_sync_bf16_scalar")])
    assert "// ---- begin tc_common.cuh" in tu and "#include" not in tu


# --- architecture ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _R:
    name: str
    arch: str | None


def test_arch_refusal_is_one_line_and_names_the_need():
    msg = arch_refusal(get("wmma_bf16"), 7, 5, "Tesla T4")
    assert msg == ("rung wmma_bf16 needs sm_80 (compute capability 8.0 or newer); Tesla T4 is "
                   "sm_75: skipped")
    assert arch_refusal(get("wmma_bf16"), 8, 6) is None
    assert arch_refusal(get("wmma_bf16"), 9, 0) is None
    assert arch_refusal(get("coalesced"), 6, 0) is None  # FP32 rungs: any GPU
    hopper = _R("wgmma_bf16", "sm_90a")
    assert arch_refusal(hopper, 9, 0) is None
    assert "exactly compute capability 9.0" in arch_refusal(hopper, 10, 0)
    assert "sm_89" in arch_refusal(hopper, 8, 9)
    assert compile_arch(hopper, "sm_90") == "sm_90a"
    assert compile_arch(get("wmma_bf16"), "sm_90") == "sm_90"
    assert compile_arch(get("coalesced"), "sm_86") == "sm_86"


def _fake_gpu(monkeypatch, cc):
    from gemmlab.runtime import compile as comp
    from gemmlab.runtime import device

    # kernels loaded earlier in this process (the GPU tests on a GPU machine) must not answer for the fake
    monkeypatch.setattr(comp, "_LOADED", {})

    info = device.DeviceInfo(0, "Fake GPU", cc[0], cc[1], 80, 40 << 20, 99 << 10, 100 << 10,
                             65536, 2048, 16 << 30, 1_500_000)
    fake_cupy = types.SimpleNamespace(RawModule=lambda path: types.SimpleNamespace(
        get_function=lambda name: types.SimpleNamespace(name=name, path=path)))
    monkeypatch.setattr(device, "require_gpu", lambda: fake_cupy)
    monkeypatch.setattr(device, "info", lambda index=None: info)


class _FakeCompiler:
    name = "fake"
    version = "fake 1"

    def __init__(self):
        self.archs = []

    def compile(self, source, options, arch, name):
        self.archs.append(arch)
        return b"\x7fELF"


def test_compile_refuses_a_rung_the_gpu_cannot_run(monkeypatch, tmp_path):
    from gemmlab.runtime import compile as comp

    _fake_gpu(monkeypatch, (7, 5))
    fake = _FakeCompiler()
    monkeypatch.setattr(comp, "get_compiler", lambda backend="nvrtc": fake)
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path))
    with pytest.raises(comp.ArchUnsupported) as e:
        comp.compile_rung(get("wmma_bf16"))
    assert "\n" not in str(e.value) and "needs sm_80" in str(e.value)
    assert isinstance(e.value, InputError) and fake.archs == []
    comp.compile_rung(get("coalesced"))  # the FP32 rungs still compile there
    assert fake.archs == ["sm_75"]


def test_compile_uses_the_device_arch_for_sm80_rungs(monkeypatch, tmp_path):
    from gemmlab.runtime import compile as comp

    _fake_gpu(monkeypatch, (9, 0))
    fake = _FakeCompiler()
    monkeypatch.setattr(comp, "get_compiler", lambda backend="nvrtc": fake)
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path))
    k = comp.compile_rung(get("mma_sync_bf16"))
    assert k.name == "gemmlab_mma_sync_bf16" and fake.archs == ["sm_90"]


# --- launcher checks (fake CuPy arrays) -----------------------------------------------------


@pytest.fixture
def fake_cupy(monkeypatch):
    from gemmlab.runtime import device

    mod = types.SimpleNamespace(ndarray=FakeArray)
    monkeypatch.setattr(device, "require_cupy", lambda: mod)
    return mod


def test_operand_dtypes_checked_per_rung(fake_cupy):
    from gemmlab.runtime.operands import operand_shape

    a, b = FakeArray((5, 3), np.uint16), FakeArray((3, 4), np.uint16)
    assert operand_shape(a, b, FakeArray((5, 4), np.uint16), "bf16", "bf16") == (5, 4, 3)
    assert operand_shape(a, b, FakeArray((5, 4), np.float32), "bf16", "fp32") == (5, 4, 3)
    with pytest.raises(InputError, match=r"c: expected dtype uint16 \(bfloat16 bit patterns"):
        operand_shape(a, b, FakeArray((5, 4), np.float32), "bf16", "bf16")
    with pytest.raises(InputError, match="a: expected dtype uint16"):
        operand_shape(FakeArray((5, 3), np.float32), b, FakeArray((5, 4), np.uint16), "bf16")
    with pytest.raises(InputError, match="a: expected dtype float32, got uint16"):
        operand_shape(a, FakeArray((3, 4), np.float32), FakeArray((5, 4), np.float32))


def test_gemm_refuses_fp32_arrays_for_a_bf16_rung(fake_cupy):
    from gemmlab.runtime.launch import gemm

    f = [FakeArray(s, np.float32) for s in ((5, 3), (3, 4), (5, 4))]
    with pytest.raises(InputError, match="expected dtype uint16"):
        gemm("wmma_bf16", *f)


# --- harness pieces -------------------------------------------------------------------------
def test_split_runnable_and_run_dtypes():
    from gemmlab.bench.ladder import run_dtypes, split_runnable

    keep, skipped = split_runnable(list(TC_LADDER) + [get("coalesced")], (7, 5), "Tesla T4")
    assert [r.name for r in keep] == ["coalesced"]
    assert [s["kernel"] for s in skipped] == [r.name for r in TC_LADDER]
    assert all(f"needs {r.arch}" in s["reason"] for r, s in zip(TC_LADDER, skipped))
    keep, skipped = split_runnable(TC_LADDER, (9, 0), "H100")
    assert list(keep) == list(TC_LADDER) and skipped == []
    keep, skipped = split_runnable(TC_LADDER, (8, 9), "L4")  # Ada: the sm_90a rungs skip
    assert {r.arch for r in keep} == {"sm_80"}
    assert {s["kernel"] for s in skipped} == {r.name for r in TC_LADDER if r.arch == "sm_90a"}
    assert run_dtypes(TC_LADDER) == ("bf16", "bf16")
    assert run_dtypes([get("wmma_bf16_f32out")]) == ("bf16", "fp32")
    with pytest.raises(InputError, match="different dtypes"):
        run_dtypes([get("wmma_bf16"), get("wmma_bf16_f32out")])


def test_bf16_targets_carry_their_dtypes():
    from gemmlab.bench.ladder import _dtypes, cublas_bf16_target, rung_targets

    (t,) = rung_targets([get("mma_sync_bf16")], 1000, 3000, 77)
    assert t.spec.dtype == "bf16" and _dtypes(t) == ("bf16", "bf16")
    assert t.info["arch"] == "sm_80"
    (t,) = rung_targets([get("wmma_bf16_f32out")], 64, 64, 64)
    assert (t.spec.dtype, t.spec.out_dtype) == ("bf16", "fp32") and _dtypes(t) == ("bf16", "fp32")
    ref = cublas_bf16_target(64, 64, 64, out_dtype="fp32")
    assert _dtypes(ref) == ("bf16", "fp32") and "CUBLAS_COMPUTE_32F" in ref.info["summary"]
    (t,) = rung_targets([get("coalesced")], 64, 64, 64)
    assert t.spec.dtype == "fp32" and _dtypes(t) == ("fp32", "fp32")


def test_bf16_peak_from_the_clock():
    from gemmlab.bench.env import bf16_peak

    env = {"sm_count": 132, "compute_capability": "9.0", "sm_clock_max_mhz": 1980}
    assert bf16_peak(env, 1830)["flops"] == pytest.approx(989.4e12, rel=1e-3)  # the datasheet
    p = bf16_peak(env)
    assert p["clock_mhz"] == 1980 and p["clock_from"] == "sm_clock_max_mhz"
    assert bf16_peak({**env, "compute_capability": "8.6"})["flops"] is None  # unknown: no guess
    a100 = {"sm_count": 108, "compute_capability": "8.0", "sm_clock_max_mhz": 1410}
    assert bf16_peak(a100)["flops"] == pytest.approx(312e12, rel=1e-2)


def test_observed_peak_uses_each_rows_clock():
    from gemmlab.bench.ladder import with_tensor_peaks
    from gemmlab.bench.results import Row, pct_of_peak
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.stats import Measurement

    env = {"sm_count": 132, "compute_capability": "9.0", "sm_clock_max_mhz": 1980}
    spec = BenchSpec("r", 4096, 4096, 4096, dtype="bf16")
    meas = Measurement(spec, (spec.flops / 494.7e12,))  # 494.7 TFLOP/s
    row = Row(meas, clocks={"sm_mhz_before": 1830, "sm_mhz_after": 1830})
    row2 = Row(meas)
    row, row2 = with_tensor_peaks([row, row2], env)
    assert pct_of_peak(row, {}) == pytest.approx(50.0, rel=1e-3)
    assert pct_of_peak(row2, {}) == pytest.approx(50.0 * 1830 / 1980, rel=1e-3)  # max clock fallback


def test_spec_accepts_the_bf16_dtypes():
    from gemmlab.bench.spec import BenchSpec

    assert (BenchSpec("x", 2, 2, 2, dtype="bf16").dtype, BenchSpec("x", 2, 2, 2, dtype="bf16").out_dtype) == ("bf16", "bf16")
    assert BenchSpec("x", 2, 2, 2, dtype="bf16", out_dtype="fp32").to_dict()["out_dtype"] == "fp32"
    # the name runs stored before one vocabulary use still loads: bf16 in, fp32 out
    old = BenchSpec.from_dict({"kernel": "x", "M": 2, "N": 2, "K": 2, "dtype": "bf16_fp32out"})
    assert (old.dtype, old.out_dtype) == ("bf16", "fp32")
    with pytest.raises(InputError):
        BenchSpec("x", 2, 2, 2, dtype="fp64")
    assert BenchSpec("x", 2, 2, 2, dtype="fp16").out_dtype == "fp16"  # your own fp16 kernels


# --- CLI ------------------------------------------------------------------------------------
def test_cli_kernels_lists_the_tc_ladder(capsys):
    code, out, _ = run_cli(capsys, "kernels", "--dtype", "bf16", "--json")
    assert code == 0
    items = json.loads(out)
    assert [i["name"] for i in items] == [r.name for r in TC_LADDER]
    assert [i["name"] for i in items][:3] == ["wmma_bf16", "mma_sync_bf16", "cp_async_bf16"]
    assert all(i["dtype"] == "bf16" and i["arch"] == "sm_80" for i in items[:3])
    assert all(i["arch"] == "sm_90a" for i in items[3:])
    code, out, _ = run_cli(capsys, "kernels", "--dtype", "bf16")
    assert code == 0 and "BF16 tensor-core ladder rungs" in out


@pytest.mark.parametrize("argv, msg", [
    (["ladder", "--dtype", "fp16"], "--dtype 'fp16': expected fp32, bf16 or fp8"),
    (["ladder", "--dtype", "bf16", "--rung", "coalesced"], "rung coalesced takes fp32 inputs"),
    (["ladder", "--rung", "wmma_bf16"], "pass --dtype bf16"),
    (["bench", "coalesced", "wmma_bf16"], "different dtypes"),
    (["bench", "wmma_bf16", "wmma_bf16_f32out"], "different dtypes"),
])
def test_cli_refuses_before_the_gpu(capsys, argv, msg):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_cli_ladder_bf16_profile_is_accepted(capsys, monkeypatch):
    """--profile works for the tensor-core ladder: validation lets it through to the GPU step."""
    from gemmlab.commands import ladder as cmd
    from gemmlab.errors import UserError

    def no_gpu():
        raise UserError("stand-in: the GPU step was reached", code=3)

    monkeypatch.setattr(cmd, "require_gpu", no_gpu)
    code, _, err = run_cli(capsys, "ladder", "--dtype", "bf16", "--profile", "--no-store")
    assert code == 3 and "the GPU step was reached" in err and "not wired" not in err


def test_bf16_table_caption_and_columns():
    from gemmlab.bench.env import bf16_peak
    from gemmlab.bench.results import RunRecord
    from gemmlab.report import tables as table

    env = {"sm_count": 132, "compute_capability": "9.0", "sm_clock_max_mhz": 1980, "gpu": "H100"}
    result = RunRecord("ladder", (), env, {"dtype": "bf16", "shape": {"M": 4096, "N": 4096, "K": 4096},
                                           "peak": bf16_peak(env), "options": {"out_dtype": "bf16", "timing": {}}})
    cap = table.caption(result)
    assert "A, B bf16, FP32 accumulate, C bf16" in cap and "FP32 peak" not in cap
    assert "dense BF16 peak 1070.5 TFLOP/s = 132 SMs x 4096 FLOP/clk x 1980 MHz" in cap
    assert "% of BF16 peak" in table.ladder_columns(result)
    assert table.ladder_columns(RunRecord("ladder", ())) == table.LADDER_COLUMNS


def test_bf16_run_is_stored_and_shown_with_its_dtype(tmp_path, capsys):
    """A bf16 ladder result (fake bench, real rung targets) goes through the store and `runs`
    with its dtypes: per result (spec dtype) and per run (dtype, skipped)."""
    from fakes_bench import FakeBench, record_dict

    from gemmlab.bench.env import bf16_peak
    from gemmlab.bench.ladder import cublas_bf16_target, rung_targets, run_targets, with_tensor_peaks
    from gemmlab.bench.results import RunRecord
    from gemmlab.store import Store

    M = N = K = 4096
    targets = rung_targets(TC_LADDER[:2], M, N, K)
    for t in targets:  # no GPU: a launch-only stand-in
        object.__setattr__(t, "prepare", lambda: (lambda a, b, c, al, be: None))
    ref = cublas_bf16_target(M, N, K)
    object.__setattr__(ref, "prepare", lambda: (lambda a, b, c, al, be: None))
    bench = FakeBench({"wmma_bf16": [1.0], "mma_sync_bf16": [0.5], "cublas": [0.25]},
                      clocks=(1830, 1830))
    env = {"gpu": "Fake H100", "sm_count": 132, "compute_capability": "9.0",
           "sm_clock_max_mhz": 1980}
    peak = bf16_peak(env)
    rows, ref_row = run_targets(targets, ref, bench)
    rows = with_tensor_peaks(rows + [ref_row], env)
    skipped = [{"kernel": "wgmma_bf16", "reason": "rung wgmma_bf16 needs sm_90a (...)"}]
    res = RunRecord("ladder", tuple(rows), env, {"shape": {"M": M, "N": N, "K": K}, "peak": peak,
                                                "options": {"timing": {"flush_l2": True}, "out_dtype": "bf16"},
                                                "dtype": "bf16", "skipped": skipped})
    d = record_dict(res)
    assert d["dtype"] == "bf16" and d["skipped"] == skipped
    assert [r["spec"]["dtype"] for r in d["rows"]] == ["bf16"] * 3
    assert d["rows"][1]["pct_of_cublas"] == pytest.approx(50.0)
    # 2*4096^3 / 0.25 ms = 549.8 TFLOP/s; at 1830 MHz the peak is 989.4 TFLOP/s
    assert d["rows"][2]["pct_of_peak"] == pytest.approx(100 * 549.76 / 989.36, rel=1e-3)
    db = tmp_path / "runs.sqlite"
    with Store(db) as store:
        run_id = store.add_record(res)
        back = store.load_run(run_id)
    assert back["dtype"] == "bf16" and back["skipped"] == skipped
    assert [r["spec"]["dtype"] for r in back["rows"]] == ["bf16"] * 3
    code, out, _ = run_cli(capsys, "runs", str(run_id), "--db", str(db))
    assert code == 0 and "BF16 tensor-core ladder" in out and "% of BF16 peak" in out
    assert "C bf16" in out
