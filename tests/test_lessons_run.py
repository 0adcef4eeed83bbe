"""The lesson runner's orchestration on a CPU: NumPy stands in for CuPy, Python functions for the
CUDA kernels (computing what each kernel computes), a fake clock for CUDA events. Checks that every
variant is checked then timed, that rows carry rates and speed-ups, that a wrong kernel is caught
and stored as such, and that `gemmlab lesson` stores the run. SAMPLE DATA: no time here is measured."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest
from lesson_samples import as_dict
from conftest import run_cli

from gemmlab.bench.timer import TimingOptions
from gemmlab.lessons import registry
from gemmlab.lessons import run as lesson_run
from gemmlab.lessons.base import LaunchContext


def _kernels(broken: str = "") -> dict:
    def k(fn):
        def launch(grid, block, args, shared_mem=0):
            fn(*args)
        return launch

    def gemm(A, B, C, M, N, K):
        C[...] = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)

    def count(x, out, n, K):
        out[0] += int((x[:n] == K).sum())

    def count_off_by_one(x, out, n, K):
        out[0] += int((x[:n] == K).sum()) + 1

    def strided(A, B, n, s):
        B[:n] = A[:: int(s)][:n]

    def transpose(i, o, n):
        o[...] = i.T

    def copy(i, o, n):
        o[...] = i

    def scale_shift(x, y, a, b, n):
        y[:n] = a * x[:n] + b

    def scale(X, a, T, n):
        T[:n] = a * X[:n]

    def add(T, b, Y, n):
        Y[:n] = T[:n] + b[:n]

    def fused(X, a, b, Y, n):
        Y[:n] = a * X[:n] + b[:n]

    fns = {"matrix_multiplication_naive": gemm, "matrix_multiplication_smem": gemm, "count_equal_naive": count,
           "count_equal_optimized": count_off_by_one if broken == "count_equal_optimized" else count, "read_strided": strided, "tile_copy_rows": copy,
           "transpose_tile_32x32": transpose, "transpose_tile_32x33": transpose, "scale_shift": scale_shift,
           "kernel_scale": scale, "kernel_add": add, "kernel_fused": fused}
    return {name: k(f) for name, f in fns.items()}


class FakeBackend:
    """CUDA events on a fake clock: every launch of the timed function advances it."""

    l2_flush_bytes = 100

    def __init__(self, per_call):
        self.t, self.per_call = 0.0, per_call

    def event(self):
        ev = types.SimpleNamespace(t=None)
        ev.record = lambda: setattr(ev, "t", self.t)
        return ev

    def elapsed_s(self, a, b):
        return b.t - a.t

    def flush_l2(self):
        pass

    def hold(self, s):
        pass

    def synchronize(self):
        pass


@pytest.fixture
def fake_gpu(monkeypatch):
    """Point gemmlab.lessons.run at NumPy and fakes; yields a setter for the fake per-launch time."""
    state = {"broken": "", "time": 1e-3}
    np_cp = types.SimpleNamespace(
        **{k: getattr(np, k) for k in ("float32", "int32", "uint32", "float64", "full", "empty", "where", "isfinite",
                                       "abs", "argmax", "asarray", "ascontiguousarray", "zeros", "linalg")},
        random=types.SimpleNamespace(default_rng=np.random.default_rng),
        cuda=types.SimpleNamespace(get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: None)),
        get_default_memory_pool=lambda: types.SimpleNamespace(free_all_blocks=lambda: None))
    from gemmlab.bench import env as envmod
    from gemmlab.bench import timer
    from gemmlab.runtime import cublas, device

    monkeypatch.setattr(device, "require_gpu", lambda: np_cp)
    monkeypatch.setattr(envmod, "capture", lambda math_mode=None: ({"gpu": "Fake GPU"}, types.SimpleNamespace(source="fake", sm_mhz=lambda: 1980)))
    monkeypatch.setattr(envmod, "fp32_peak", lambda env: {"flops": 50e12})
    monkeypatch.setattr(cublas, "math_mode", lambda: "fake")
    monkeypatch.setattr(cublas, "sgemm", lambda a, b, c: c.__setitem__(Ellipsis, (a.astype(np.float64) @ b).astype(np.float32)))
    monkeypatch.setattr(lesson_run, "context", lambda les: LaunchContext(_kernels(state["broken"]), 4, 100 * 1024, {}))
    from gemmlab.bench import ceilings
    monkeypatch.setattr(ceilings, "copy_ceiling", lambda gpu: {"copy_bytes_per_s": 1e12, "source": "fake"})

    monkeypatch.setattr(timer, "CupyBackend", lambda flush_l2=True: FakeBackend(0))
    real_time_fn = timer.time_fn

    def time_fn(fn, backend, options, on_phase=None):  # each call of fn takes state["time"] on the fake clock
        def timed():
            fn()
            backend.t += state["time"]
        return real_time_fn(timed, backend, options, on_phase)

    monkeypatch.setattr(timer, "time_fn", time_fn)
    yield state


OPTS = TimingOptions(warmup_ms=0, rep_ms=0, repeats=11)


@pytest.mark.parametrize("name", registry.NAMES)
def test_every_variant_checked_timed_and_rated(fake_gpu, name):
    les = registry.get(name)
    small = {"tiling": "17,64", "bank_conflicts": "33,64", "fusion": "1000,4096"}
    pts = les.points(None, small[name]) if name in small else les.points(1000, ",".join(map(str, les.param.sweep[:2])))
    res = as_dict(lesson_run.measure(les, pts, OPTS, seed=3))
    assert len(res["rows"]) == len(pts) * len(les.variants)
    assert all(r["correct"] for r in res["rows"]), [r["check"]["reason"] for r in res["rows"]]
    assert all(r["n"] == 11 and r["median_s"] == pytest.approx(1e-3) for r in res["rows"])
    assert all(r["speedup_vs_baseline"] == pytest.approx(1.0) for r in res["rows"])
    if les.metric == "flops":
        assert res["rows"][0]["gflops"] == pytest.approx(2 * 17**3 / 1e-3 / 1e9)
    else:
        r = res["rows"][0]
        assert r["bandwidth_bytes_per_s"] == pytest.approx(r["bytes"] / 1e-3) and r["pct_of_copy"] is not None
    assert res["headline"]["verdict"]["effect"] == "same"
    json.dumps(res, allow_nan=False)


def test_a_wrong_kernel_is_caught_and_kept_out_of_the_verdict(fake_gpu):
    fake_gpu["broken"] = "count_equal_optimized"
    les = registry.get("atomics")
    res = as_dict(lesson_run.measure(les, les.points(1000, "0.5"), OPTS))
    bad = [r for r in res["rows"] if not r["correct"]]
    assert [r["kernel"] for r in bad] == ["block_reduce"] and "differ" in bad[0]["check"]["reason"]
    assert res["verdicts"] == [] and res["headline"] is None


def test_cli_lesson_stores_the_run_and_exits_1_on_a_wrong_variant(fake_gpu, capsys, tmp_path):
    db = tmp_path / "runs.sqlite"
    code, out, err = run_cli(capsys, "lesson", "fusion", "--points", "1000", "--repeats", "11", "--db", str(db))
    assert code == 0, err
    assert "fusion at size=1000" in out and "no measurable difference" in out
    fake_gpu["broken"] = "count_equal_optimized"
    code, out, err = run_cli(capsys, "lesson", "atomics", "--size", "1000", "--points", "1", "--repeats", "11",
                             "--db", str(db), "--json")
    assert code == 1 and "block_reduce at fraction=1.0" in err
    res = json.loads(out)
    assert res["run_id"] == 2
    code, out, err = run_cli(capsys, "runs", "--db", str(db), "--json")
    assert [r["kind"] for r in json.loads(out)] == ["lesson", "lesson"]


# --- --profile, with ncu faked by the real H100 capture's launches and the analyzer's diagnoses ---

def test_variant_target_catches_every_kernel_of_a_variant():
    from pathlib import Path

    from gemmlab.profile import collect, targets
    from gemmlab.workflows.lesson_profile import variant_target

    les = registry.get("fusion")
    t = variant_target(les, "two_kernels", {"size": 4096, "param": "size", "value": 4096}, python="python3")
    assert t.app_argv[:3] == ("python3", "-m", "gemmlab.lessons.target") and "--variant" in t.app_argv
    argv = targets.build_argv("ncu", t, collect.default_collection(), Path("x.ncu-rep"), False)
    joined = " ".join(argv)
    assert "--nvtx-include gemmlab/" in joined and "--launch-count 2" in joined
    assert variant_target(registry.get("tiling"), "cublas", {"size": 64, "param": "size", "value": 64}).launch_count == 1


def test_cli_profile_prints_diagnoses_and_what_mattered(fake_gpu, monkeypatch, capsys, tmp_path):
    from conftest import NCU_H100

    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.profile import runner
    from gemmlab.profile.load import load
    from gemmlab.workflows import profile_run

    launches = load(NCU_H100 / "gemm_ladder_raw.csv")
    diags = list(diagnose_all(launches))
    calls = []

    def fake_run_profile(target, collection, *, ncu, output, overwrite, **kw):
        i = len(calls)
        calls.append(target.app_argv)
        return profile_run.ProfileResult(target, collection, ["ncu"], output, 1.0, [], [launches[i]], [diags[i]])

    monkeypatch.setattr(runner, "find_ncu", lambda path=None: "/fake/ncu")
    monkeypatch.setattr(profile_run, "run_profile", fake_run_profile)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "lesson", "atomics", "--size", "1000", "--points", "0.1", "--repeats", "11",
                             "--no-store", "--profile")
    assert code == 0, err
    assert len(calls) == 2 and all("--lesson" in a and "atomics" in a for a in calls)
    assert "What actually mattered" in out and "(same)" in out  # the fake clock: equal times
    assert f"atomic_per_match: {launches[0].name}:" in out
    code, out, err = run_cli(capsys, "lesson", "atomics", "--size", "1000", "--points", "0.1", "--repeats", "11",
                             "--no-store", "--profile", "--json")
    prof = json.loads(out)["profile"]
    assert [p["rung"] for p in prof["profiles"]] == ["atomic_per_match", "block_reduce"]
    assert prof["mattered"][0]["optimization"] == "atomic_per_match -> block_reduce"


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_a_profile_that_stops_keeps_the_measured_run(fake_gpu, monkeypatch, capsys, tmp_path, stop):
    """Profiling every variant under ncu takes minutes; Ctrl-C (or a crash) there must not lose the
    timing run already measured: it is stored and written before the error goes on."""
    from gemmlab.profile import runner
    from gemmlab.store import Store
    from gemmlab.workflows import profile_run

    def interrupted(*a, **kw):
        raise stop("stopped while profiling")

    monkeypatch.setattr(runner, "find_ncu", lambda path=None: "/fake/ncu")
    monkeypatch.setattr(profile_run, "run_profile", interrupted)
    monkeypatch.chdir(tmp_path)
    db, out = tmp_path / "runs.sqlite", tmp_path / "run.json"
    argv = ["lesson", "atomics", "--size", "1000", "--points", "0.1", "--repeats", "11", "--db", str(db),
            "--out", str(out), "--profile"]
    if stop is KeyboardInterrupt:
        code, _, err = run_cli(capsys, *argv)
        assert code == 130 and "interrupted" in err
    else:
        with pytest.raises(RuntimeError):
            run_cli(capsys, *argv)
        err = capsys.readouterr().err
    assert "the measured run was kept (stored as run 1" in err
    with Store(db, create=False) as s:
        assert s.load_record(1).kind == "lesson"
    assert json.loads(out.read_text())["lesson"] == "atomics"
