"""The FP8 ladder through the harness without a GPU: the checker on e4m3 inputs with B drawn N x K
(an emulated right kernel passes, wrong ones fail), spec dtypes, targets, the FP8 peak, the table,
the store and the CLI (refusals before any GPU work; no GPU: one line, exit 3)."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import gpu_status, run_cli
from test_fp8_numerics import fp8_mma

from gemmlab.bench.check import Checker
from gemmlab.errors import InputError
from gemmlab.kernels.ladders import FP8_LADDER
from gemmlab.kernels.registry import get
from gemmlab.numerics import bf16, fp8

SRC = Path(__file__).resolve().parents[1] / "src"
M, N, K = 37, 45, 160  # K: one full k-tile of 128 and a partial one


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture
def h100_sms(monkeypatch):
    """A device with the H100 SXM's 132 SMs: a persistent rung's grid depends on the SM count."""
    from gemmlab.runtime import device

    monkeypatch.setattr(device, "info", lambda index=None: types.SimpleNamespace(sm_count=132))


def emulate(a, b, c, alpha, beta, bits=13):
    """A right FP8 rung in NumPy: the truncating tensor-core accumulation (test_fp8_numerics),
    alpha/beta epilogue in FP32 (beta == 0: C unread), one bf16 rounding."""
    acc = fp8_mma(a, b, bits).astype(np.float32)
    v = np.float32(alpha) * acc
    if beta != 0.0:
        v = v + np.float32(beta) * bf16.from_bits(c)
    c[...] = bf16.to_bits(v)


# --- the checker ------------------------------------------------------------------------------
@pytest.mark.parametrize("beta", [0.0, -0.5])
def test_checker_passes_a_right_fp8_kernel_with_tn_operands(beta):
    seen = {}

    def run(a, b, c, al, be):
        seen["ops"] = (a.shape, b.shape, a.dtype, b.dtype, c.dtype)
        emulate(a, b, c, al, be)

    res = Checker(seed=3).check(run, M, N, K, 1.25, beta, in_dtype="fp8", out_dtype="bf16")
    assert res.ok, res.reason
    assert seen["ops"] == ((M, K), (N, K), np.dtype(np.uint8), np.dtype(np.uint8),
                           np.dtype(np.uint16))
    assert res.bound == fp8.tolerance(K).normwise and res.rel_err <= res.bound


def _fails(run, part, beta=0.0, K_=K):
    res = Checker(seed=5).check(run, M, N, K_, 1.0, beta, in_dtype="fp8", out_dtype="bf16")
    assert not res.ok and part in res.reason, res.reason
    return res


def test_wrong_fp8_kernels_fail():
    def b_read_as_k_by_n(a, b, c, al, be):  # the layout bug the TN contract is about
        bb = b.reshape(-1)[: K * N].reshape(K, N).T.copy()  # same bytes, read K x N
        emulate(a, bb, c, al, be)

    _fails(b_read_as_k_by_n, "bound")

    def skipped_k_tile(a, b, c, al, be):
        a = a.copy()
        a[:, 128:] = 0  # the partial k-tile never loaded
        emulate(a, b, c, al, be)

    _fails(skipped_k_tile, "bound")

    def unwritten_last_column(a, b, c, al, be):
        full = np.zeros_like(c)
        emulate(a, b, full, al, be)
        c[:, :-1] = full[:, :-1]

    r = _fails(unwritten_last_column, "poison")
    assert r.n_unwritten == M and r.first_unwritten == (0, N - 1)

    def ignores_beta(a, b, c, al, be):
        emulate(a, b, c, al, 0.0)

    _fails(ignores_beta, "FP8-input componentwise bound (bf16 output, gemmlab.numerics.fp8)",
           beta=-0.5)

    def nan_out(a, b, c, al, be):
        emulate(a, b, c, al, be)
        c[1, 2] = bf16.to_bits(np.float32(np.nan))

    _fails(nan_out, "NaN or inf")


def test_a_missing_k_tile_fails_at_large_k():
    """The FP8 bound is loose next to FP32's, but not so loose that a kernel dropping one
    128-deep k-tile of 32 passes at K = 4096."""
    def drops_a_tile(a, b, c, al, be):
        a = a.copy()
        a[:, 1024:1152] = 0
        emulate(a, b, c, al, be)

    res = Checker(seed=9).check(drops_a_tile, 16, 24, 4096, 1.0, 0.0, "fp8", "bf16")
    assert not res.ok
    good = Checker(seed=9).check(emulate, 16, 24, 4096, 1.0, 0.0, "fp8", "bf16")
    assert good.ok, good.reason


# --- targets, peak, table -----------------------------------------------------------------------
def test_fp8_targets_carry_their_dtypes(h100_sms):
    from gemmlab.bench.ladder import (
        _dtypes,
        cublas_fp8_target,
        run_dtypes,
        rung_targets,
    )
    from gemmlab.bench.spec import BenchSpec

    (t,) = rung_targets(FP8_LADDER, 4096, 4096, 4096)
    assert (t.spec.dtype, t.spec.out_dtype) == ("fp8", "bf16") and _dtypes(t) == ("fp8", "bf16")
    assert t.info["arch"] == "sm_90a" and t.info["grid"] == [132, 1, 1]
    ref = cublas_fp8_target(4096, 4096, 4096)
    assert (ref.spec.dtype, ref.spec.out_dtype) == ("fp8", "bf16") and _dtypes(ref) == ("fp8", "bf16")
    assert "CUDA_R_8F_E4M3 (TN" in ref.info["summary"] and "FAST_ACCUM 1 and 0" in ref.info["summary"]
    assert BenchSpec("x", 2, 2, 2, dtype="fp8").to_dict()["out_dtype"] == "bf16"  # the FP8 ladder writes bf16
    # the name runs stored before one vocabulary use still loads
    old = BenchSpec.from_dict({"kernel": "x", "M": 2, "N": 2, "K": 2, "dtype": "fp8_e4m3"})
    assert (old.dtype, old.out_dtype) == ("fp8", "bf16")
    assert run_dtypes(FP8_LADDER) == ("fp8", "bf16")
    with pytest.raises(InputError, match="different dtypes"):
        run_dtypes([get("persistent_fp8"), get("persistent_bf16")])


def test_fp8_peak_is_twice_bf16s():
    from gemmlab.bench.env import bf16_peak, fp8_peak, tensor_peak

    env = {"sm_count": 132, "compute_capability": "9.0", "sm_clock_max_mhz": 1980}
    assert fp8_peak(env, 1830)["flops"] == pytest.approx(1978.9e12, rel=1e-3)  # the datasheet
    assert fp8_peak(env)["flops"] == 2 * bf16_peak(env)["flops"]
    p = fp8_peak(env)
    assert p["fp8_flops_per_clk_per_sm"] == 8192 and p["formula"].startswith("SMs x dense FP8")
    assert tensor_peak("fp8", env) == p and tensor_peak("bf16", env) == bf16_peak(env)
    assert fp8_peak({**env, "compute_capability": "8.0"})["flops"] is None  # A100: no FP8


def test_observed_fp8_peak_uses_each_rows_clock():
    from gemmlab.bench.ladder import with_tensor_peaks
    from gemmlab.bench.results import Row, pct_of_peak
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.stats import Measurement

    env = {"sm_count": 132, "compute_capability": "9.0", "sm_clock_max_mhz": 1980}
    spec = BenchSpec("r", 4096, 4096, 4096, dtype="fp8")
    row = Row(Measurement(spec, (spec.flops / 989.4e12,)), clocks={"sm_mhz_before": 1830, "sm_mhz_after": 1830})
    (row,) = with_tensor_peaks([row], env, "fp8")
    assert pct_of_peak(row, {}) == pytest.approx(50.0, rel=1e-3)
    assert row.clocks["fp8_peak_flops"] == pytest.approx(1978.9e12, rel=1e-3)


def test_fp8_table_caption_and_columns():
    from gemmlab.bench.env import fp8_peak
    from gemmlab.bench.results import Row, RunRecord
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.stats import Measurement
    from gemmlab.report import tables as table

    env = {"sm_count": 132, "compute_capability": "9.0", "sm_clock_max_mhz": 1830, "gpu": "H100"}
    cublas = Row(Measurement(BenchSpec("cublas", 4096, 4096, 4096, dtype="fp8"), (1e-3,)), reference=True,
                 info={"summary": "cuBLASLt FP8 at its best: X"})
    result = RunRecord("ladder", (cublas,), env, {"dtype": "fp8", "shape": {"M": 4096, "N": 4096, "K": 4096},
                                                  "peak": fp8_peak(env), "options": {"out_dtype": "bf16", "timing": {}}})
    cap = table.caption(result)
    assert "A e4m3 (M x K), B e4m3 given N x K ('TN')" in cap and "C bf16" in cap
    assert "dense FP8 peak 1978.9 TFLOP/s = 132 SMs x 8192 FLOP/clk x 1830 MHz" in cap
    assert "cuBLAS row: cuBLASLt FP8 at its best: X" in cap
    assert "% of FP8 peak" in table.ladder_columns(result)


def test_fp8_run_is_stored_and_shown_with_its_dtype(tmp_path, capsys, h100_sms):
    from fakes_bench import FakeBench, record_dict

    from gemmlab.bench.env import fp8_peak
    from gemmlab.bench.ladder import cublas_fp8_target, run_targets, rung_targets, with_tensor_peaks
    from gemmlab.bench.results import RunRecord
    from gemmlab.store import Store

    S = 4096
    targets = rung_targets(FP8_LADDER, S, S, S)
    for t in targets:
        object.__setattr__(t, "prepare", lambda: (lambda a, b, c, al, be: None))
    ref = cublas_fp8_target(S, S, S)
    object.__setattr__(ref, "prepare", lambda: (lambda a, b, c, al, be: None))
    bench = FakeBench({"persistent_fp8": [0.1], "cublas": [0.125]}, clocks=(1830, 1830))
    env = {"gpu": "Fake H100", "sm_count": 132, "compute_capability": "9.0",
           "sm_clock_max_mhz": 1980}
    peak = fp8_peak(env)
    rows, ref_row = run_targets(targets, ref, bench)
    rows = with_tensor_peaks(rows + [ref_row], env, "fp8")
    res = RunRecord("ladder", tuple(rows), env, {"shape": {"M": S, "N": S, "K": S}, "peak": peak, "dtype": "fp8",
                                                "options": {"timing": {"flush_l2": True}, "out_dtype": "bf16",
                                                            "dtype": "fp8"}, "skipped": []})
    d = record_dict(res)
    assert d["dtype"] == "fp8" and [(r["spec"]["dtype"], r["spec"]["out_dtype"]) for r in d["rows"]] == [("fp8", "bf16")] * 2
    assert d["rows"][0]["pct_of_cublas"] == pytest.approx(125.0)
    # 2*4096^3 / 0.1 ms = 1374.4 TFLOP/s; at 1830 MHz the FP8 peak is 1978.9 TFLOP/s
    assert d["rows"][0]["pct_of_peak"] == pytest.approx(100 * 1374.39 / 1978.86, rel=1e-3)
    db = tmp_path / "runs.sqlite"
    with Store(db) as store:
        run_id = store.add_record(res)
    code, out, _ = run_cli(capsys, "runs", str(run_id), "--db", str(db))
    assert code == 0 and "FP8 (e4m3) tensor-core ladder" in out and "% of FP8 peak" in out


# --- CLI --------------------------------------------------------------------------------------
def test_cli_kernels_lists_the_fp8_ladder(capsys):
    code, out, _ = run_cli(capsys, "kernels", "--dtype", "fp8", "--json")
    assert code == 0
    (item,) = json.loads(out)
    assert (item["name"], item["dtype"], item["out_dtype"], item["arch"]) == (
        "persistent_fp8", "fp8", "bf16", "sm_90a")
    code, out, _ = run_cli(capsys, "kernels", "--dtype", "fp8")
    assert code == 0 and "FP8 (e4m3) tensor-core ladder rungs" in out


@pytest.mark.parametrize("argv, msg", [
    (["ladder", "--dtype", "fp8", "--rung", "persistent_bf16"],
     "rung persistent_bf16 takes bf16 inputs; pass --dtype bf16"),
    (["ladder", "--rung", "persistent_fp8"], "pass --dtype fp8"),
    (["ladder", "--dtype", "fp8", "--profile"], "--profile is not wired for --dtype fp8"),
    (["bench", "persistent_fp8", "persistent_bf16"], "different dtypes"),
    (["ladder", "--dtype", "fp4"], "--dtype 'fp4': expected fp32, bf16 or fp8"),
])
def test_cli_refuses_before_the_gpu(capsys, argv, msg):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_cli_help_states_the_tn_layout(capsys):
    code, out, _ = run_cli(capsys, "ladder", "--help")
    flat = " ".join(out.split())
    assert code == 0 and "given N x K" in flat and "'TN'" in flat


@pytest.mark.skipif(gpu_status()[0], reason="this machine has a GPU; the no-GPU path cannot be "
                                            "exercised")
def test_cli_ladder_fp8_without_a_gpu_is_one_line_and_exit_3(tmp_path):
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "COLUMNS": "120"}
    p = subprocess.run([sys.executable, "-m", "gemmlab", "ladder", "--dtype", "fp8", "--size",
                        "256"], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 3, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemmlab: error: ") and p.stdout == ""
    assert "GPU" in lines[0] or "CuPy" in lines[0]
