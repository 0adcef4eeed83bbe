"""A fake shapes run (SAMPLE DATA, not measured): the real orchestration (``run_grid``) over a fake
bench whose times are given per shape, so the CPU tests see exactly the rows a GPU run stores."""

from __future__ import annotations

from fakes_bench import ok_check

from gemmlab.bench.ladder import Target
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import Measurement
from gemmlab.bench.timer import TimingOptions
from gemmlab.shapes import grids
from gemmlab.shapes.measure import assemble, run_grid


class ShapeBench:
    """Times (ms) per (kernel, M, N, K): the rung's and cuBLAS's, three samples each."""

    def __init__(self, ms: dict, checks: dict | None = None):
        self.ms = ms
        self.checks = checks or {}
        self.calls: list[tuple] = []

    def check(self, target, run):
        s = target.spec
        self.calls.append(("check", target.name, s.shape))
        run(None, None, None, s.alpha, s.beta)
        return self.checks.get((target.name, s.shape), ok_check())

    def time(self, target, run, on_phase):
        s = target.spec
        self.calls.append(("time", target.name, s.shape))
        for phase in ("first run", "estimate", "warm-up", "measure"):
            on_phase(phase)
        t = self.ms[(target.name, s.shape)]
        if isinstance(t, (tuple, list)):  # one time per interleaved round
            t = t[sum(c == ("time", target.name, s.shape) for c in self.calls) - 1]
        t *= 1e-3
        return Measurement(s, (t * 0.99, t, t * 1.01), {"n_repeat": 3}), {"source": "fake"}


class _Prepared:
    """What runtime.prepared.PreparedGemm answers: the launched instantiation and its geometry."""

    def __init__(self, name, params, grid):
        self.rung = type("R", (), {"name": name, "params": params})()
        self.grid, self.block, self.smem, self.backend = grid, (128, 1, 1), 49152, "nvcc"

    def __call__(self, a, b, c, alpha, beta):
        pass


def _targets(rung="autotuned", no_ref=()):
    def targets_for(s):
        odd = s.N % 4 or s.K % 4
        name = "autotuned_128x128x16_w64x64n4_s3" + ("_scalar" if odd else "")
        params = {"BM": 128, "BN": 128, "VEC": 0 if odd else 1}
        grid = (-(-s.N // 128), -(-s.M // 128), 1)
        info = {"family": "autotuned", "params": {"BM": 128, "BN": 128}, "backend": "nvcc"}
        t = Target(BenchSpec(rung, *s.dims), lambda: _Prepared(name, params, grid), info)
        ref = Target(BenchSpec("cublas", *s.dims), lambda: (lambda a, b, c, al, be: None), {"family": "library"})
        if s.dims in no_ref:
            t.info["no_reference"] = "no cuBLASLt FP8 candidate (sample)"
            return t, None
        return t, ref

    return targets_for


def fake_result(pcts: dict, shapes=None, checks=None, gpu="NVIDIA H100 80GB HBM3", copy=3.0e12, grid="quick", goals=None,
                dtype="fp32", no_ref=(), rounds: dict | None = None):
    """A shapes run where the rung reaches ``pcts[(M, N, K)]`` % of cuBLAS (default 90), or
    ``rounds[(M, N, K)]`` (one % per interleaved round); ``dtype`` bf16 / fp8 maps that dtype's
    dispatch rung; shapes in ``no_ref`` have no reference."""
    shapes = tuple(shapes or (grids.QUICK if dtype == "fp32" else grids.TENSOR_QUICK))
    rung = "autotuned" if dtype == "fp32" else grids.DISPATCH[dtype]
    ms = {}
    for s in shapes:
        cub = 2e-9 * s.M * s.N * s.K / 20.0 + 0.005  # ms: ~20 TFLOP/s plus 5 µs of launch
        ms[("cublas", s.dims)] = cub
        ms[(rung, s.dims)] = cub * 100.0 / pcts.get(s.dims, 90.0)
        if s.dims in (rounds or {}):
            ms[(rung, s.dims)] = [cub * 100.0 / pct for pct in rounds[s.dims]]
    bench = ShapeBench(ms, checks)
    rows = run_grid(shapes, _targets(rung, no_ref), bench)
    opts = grids.ShapesOptions(shapes, grid_name=grid, rung=rung, timing=TimingOptions(warmup_ms=10, rep_ms=50),
                               goals=goals or grids.Goals.for_dtype(dtype), dtype=dtype)
    env = {"gpu": gpu, "gemmlab": "test", "cuda_runtime": "13.0"}
    ceiling = {"copy_bytes_per_s": copy, "source": "sample"} if copy else {}
    peak = {"flops": 66.9e12, "sm_count": 132, "fp32_lanes_per_sm": 128, "clock_mhz": 1980}
    return assemble(rows, env, peak, ceiling, opts)


def as_dict(record) -> dict:
    """The record as ``gemmlab shapes --out`` writes it."""
    from gemmlab.workflows.kinds import as_dict as _as_dict

    return _as_dict(record)


def store(db, record) -> int:
    """Append ``record`` to the database at ``db``, as ``gemmlab shapes`` does; its run id."""
    from gemmlab.store import Store

    with Store(db) as s:
        return s.add_record(record, record.ladder_extras())
