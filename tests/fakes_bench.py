"""Fakes for the harness tests: a Bench that returns prepared measurements, and a ladder result."""

from __future__ import annotations

import types

import numpy as np

from gemmlab.bench.check import CheckResult
from gemmlab.bench.ladder import Target, run_targets
from gemmlab.bench.results import RunRecord
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import Measurement


def ok_check(rel_err: float = 1e-7) -> CheckResult:
    return CheckResult(True, "ok", rel_err, 1e-4, 1e-6, 0, None, 0, None, 0, None, 0)


def bad_check(reason: str = "3 elements are NaN or inf, first at (0, 1)") -> CheckResult:
    return CheckResult(False, reason, 2e-3, 1e-4, 1.0, 0, None, 3, (0, 1), 0, None, 0)


class FakeBench:
    """Returns the given samples (ms) per kernel name; records the order of calls."""

    def __init__(self, samples_ms: dict, checks: dict | None = None, clocks=(1755, 1980)):
        self.samples_ms = samples_ms
        self.checks = checks or {}
        self.clocks = clocks
        self.calls: list[tuple[str, str]] = []

    def check(self, target, run):
        self.calls.append(("check", target.name))
        run(None, None, None, target.spec.alpha, target.spec.beta)
        return self.checks.get(target.name, ok_check())

    def time(self, target, run, on_phase):
        self.calls.append(("time", target.name))
        for phase in ("first run", "estimate", "warm-up", "measure"):
            on_phase(phase)
        samples = tuple(v * 1e-3 for v in self.samples_ms[target.name])
        before, after = self.clocks
        return (
            Measurement(target.spec, samples, {"n_repeat": len(samples)}),
            {"source": "fake", "sm_mhz_before": before, "sm_mhz_after": after},
        )


def target(name: str, M=2048, N=2048, K=2048, launches=None, **params) -> Target:
    def prepare():
        def run(a, b, c, alpha, beta):
            if launches is not None:
                launches.append(name)

        return run

    return Target(BenchSpec(name, M, N, K, params=params), prepare, {"summary": f"{name} kernel", "params": params})


# The first article's ladder, as times (ms) on its RTX 5060, five runs each.
ARTICLE_MS = {
    "bad": [55.8695] * 5,
    "coalesced": [13.6520] * 5,
    "tiled16": [15.0255] * 5,
    "tiled16_unroll": [10.1478, 10.1478, 10.1478, 9.9, 10.4],
    "cublas": [1.39574] * 5,
}


def article_result(checks: dict | None = None, peak_flops: float | None = 20e12) -> RunRecord:
    bench = FakeBench(ARTICLE_MS, checks)
    targets = [target(n) for n in ("bad", "coalesced", "tiled16", "tiled16_unroll")]
    rows, ref = run_targets(targets, target("cublas"), bench)
    env = {"gpu": "Fake GPU", "driver": "1.0", "cuda_runtime": "13.0", "gemmlab": "0.1.0"}
    peak = {"flops": peak_flops, "sm_count": 10, "fp32_lanes_per_sm": 128, "clock_mhz": 7812.5}
    opts = {"timing": {"flush_l2": True}, "seed": 0}
    meta = {"shape": {"M": 2048, "N": 2048, "K": 2048}, "peak": peak, "options": opts, "dtype": "fp32", "skipped": []}
    return RunRecord("ladder", tuple(rows) + (ref,), env, meta)


def record_dict(record: RunRecord) -> dict:
    """The record as ``--out`` writes it (rows with their derived numbers)."""
    from gemmlab.workflows.kinds import as_dict

    return as_dict(record)


class FakeArray:
    """A stand-in for a cupy.ndarray as the launcher checks it (shape, dtype, layout, device,
    address): distinct, 4 KB-aligned fake addresses, no data."""

    _next = 1 << 20

    def __init__(self, shape, dtype, ptr=None):
        self.shape, self.dtype, self.ndim = tuple(shape), np.dtype(dtype), len(shape)
        self.nbytes = int(np.prod(shape)) * self.dtype.itemsize
        if ptr is None:
            ptr = FakeArray._next
            FakeArray._next += (self.nbytes + 4095) // 4096 * 4096 + 4096
        self.data = types.SimpleNamespace(ptr=ptr)
        self.flags = types.SimpleNamespace(c_contiguous=True)
        self.device = types.SimpleNamespace(id=0)
