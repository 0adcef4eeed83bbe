"""Run a list of kernels at one shape: check each, time each, time cuBLAS in the same process.

For every kernel, in order: compile (once), check correctness on fresh inputs, time it. cuBLAS
SGEMM (true FP32) is checked and timed the same way, in the same process, last. Then each row gets

* speedup vs the previous row (previous median / this median),
* % of cuBLAS — cuBLAS measured here is the practical FP32 ceiling of this GPU at this shape,
* % of the clock-derived FP32 peak (SMs × FP32 lanes × 2 × max SM clock), which no SGEMM reaches
  (cuBLAS gets about 77% of it on an H100 at 4096³).

The orchestration (``run_targets``) takes a ``Bench`` with ``check`` and ``time`` methods, so it is
tested on a CPU with a fake; ``GpuBench`` is the real one and ``rung_targets`` builds the targets
from the kernel registry.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence

from gemmlab.bench.check import Checker, CheckResult
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import Measurement
from gemmlab.bench.timer import TimingOptions, time_fn

log = logging.getLogger(__name__)

Launch = Callable[[Any, Any, Any, float, float], None]
# (target name, index of the target, number of targets, phase) — phase is "compile", "check",
# "first run", "estimate", "warm-up", "measure" or "done".
Progress = Callable[[str, int, int, str], None]

CUBLAS = "cublas"


@dataclass(frozen=True)
class Target:
    """One kernel to measure: ``prepare()`` compiles it and returns a launch-only callable."""

    spec: BenchSpec
    prepare: Callable[[], Launch]
    info: Mapping[str, Any] = field(default_factory=dict)  # order, family, summary, launch geometry

    @property
    def name(self) -> str:
        return self.spec.kernel


class Bench(Protocol):
    def check(self, target: Target, run: Launch) -> CheckResult: ...

    def time(self, target: Target, run: Launch, on_phase: Callable[[str], None]) -> tuple[Measurement, dict]:
        """The measurement and the SM clocks {"sm_mhz_before", "sm_mhz_after", "source"}."""
        ...


@dataclass
class Row:
    """One measured kernel and the numbers derived from it."""

    target: Target
    measurement: Measurement
    check: CheckResult
    clocks: dict
    speedup_vs_previous: Optional[float] = None
    pct_of_cublas: Optional[float] = None
    pct_of_peak: Optional[float] = None
    is_reference: bool = False
    # What was actually launched, when the prepared callable says (the autotuned rung resolves to
    # one of its candidates; a vectorized rung falls back to its scalar twin on unaligned shapes).
    launched: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.target.name

    def to_dict(self) -> dict:
        m = self.measurement.to_dict()
        return {
            "kernel": self.name,
            "is_reference": self.is_reference,
            "info": dict(self.target.info),
            **m,
            "correct": self.check.ok,
            "check": self.check.to_dict(),
            "clocks": dict(self.clocks),
            "speedup_vs_previous": self.speedup_vs_previous,
            "pct_of_cublas": self.pct_of_cublas,
            "pct_of_peak": self.pct_of_peak,
            "launched": dict(self.launched),
        }


@dataclass
class LadderResult:
    """Everything one command measured, ready for a table, a JSON file or the store."""

    command: str
    shape: tuple[int, int, int]
    rows: list[Row]
    reference: Optional[Row]
    env: dict
    peak: dict
    options: dict

    @property
    def all_rows(self) -> list[Row]:
        return self.rows + ([self.reference] if self.reference is not None else [])

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.all_rows if not r.check.ok]

    def to_dict(self) -> dict:
        M, N, K = self.shape
        return {
            "command": self.command,
            "shape": {"M": M, "N": N, "K": K},
            "env": self.env,
            "peak": self.peak,
            "options": self.options,
            "rows": [r.to_dict() for r in self.all_rows],
        }


def derive(rows: Sequence[Row], reference: Optional[Row], peak_flops: Optional[float]) -> None:
    """Fill in speedup vs previous, % of cuBLAS and % of peak (in place). All from medians."""
    prev: Optional[Row] = None
    for row in rows:
        t = row.measurement.median
        row.speedup_vs_previous = prev.measurement.median / t if prev is not None else None
        row.pct_of_cublas = 100.0 * reference.measurement.median / t if reference is not None else None
        row.pct_of_peak = 100.0 * row.measurement.gflops * 1e9 / peak_flops if peak_flops else None
        prev = row
    if reference is not None:
        reference.pct_of_cublas = 100.0
        reference.pct_of_peak = 100.0 * reference.measurement.gflops * 1e9 / peak_flops if peak_flops else None


def launched_by(run: Any) -> dict:
    """The rung and geometry a prepared launcher reports (``gemmlab.runtime.launch.PreparedGemm``)."""
    rung = getattr(run, "rung", None)
    if rung is None:
        return {}
    out = {"rung": rung.name, "params": dict(rung.params)}
    for key in ("grid", "block", "smem"):
        value = getattr(run, key, None)
        if value is not None:
            out[key] = list(value) if isinstance(value, tuple) else value
    return out


def run_targets(
    targets: Sequence[Target],
    reference: Optional[Target],
    bench: Bench,
    peak_flops: Optional[float] = None,
    progress: Optional[Progress] = None,
) -> tuple[list[Row], Optional[Row]]:
    """Check then time each target, then the reference; derive the comparisons."""
    everything = list(targets) + ([reference] if reference is not None else [])
    total = len(everything)
    measured: list[Row] = []
    for i, target in enumerate(everything):

        def say(phase: str, _name: str = target.name, _i: int = i) -> None:
            if progress is not None:
                progress(_name, _i, total, phase)

        say("compile")
        run = target.prepare()
        say("check")
        verdict = bench.check(target, run)
        if not verdict.ok:
            log.warning("%s failed the correctness check: %s", target.name, verdict.reason)
        measurement, clocks = bench.time(target, run, say)
        row = Row(target, measurement, verdict, clocks, is_reference=target is reference, launched=launched_by(run))
        measured.append(row)
        say("done")
    ref_row = measured.pop() if reference is not None else None
    derive(measured, ref_row, peak_flops)
    return measured, ref_row


# --------------------------------------------------------------------------------------------
# GPU side (CuPy and the runtime are imported inside the functions).


class GpuBench:
    """Checks with ``Checker`` on the GPU (float64 reference by cuBLAS DGEMM) and times with
    ``time_fn`` and ``CupyBackend``; reads the SM clock right before and after the timed runs."""

    def __init__(self, options: TimingOptions, clock_reader: Any, seed: int = 0) -> None:
        import cupy

        from gemmlab.bench.timer import CupyBackend

        self._cupy = cupy
        self.options = options
        self.backend = CupyBackend(flush_l2=options.flush_l2)
        self.clock_reader = clock_reader
        sync = lambda: cupy.cuda.get_current_stream().synchronize()  # noqa: E731
        self.checker = Checker(xp=cupy, seed=seed, synchronize=sync)
        # Timing inputs come from their own stream of random numbers (never zeros: see check.py).
        self._rng = cupy.random.default_rng(seed + 1_000_003)

    def check(self, target: Target, run: Launch) -> CheckResult:
        s = target.spec
        return self.checker.check(run, s.M, s.N, s.K, s.alpha, s.beta)

    def time(self, target: Target, run: Launch, on_phase: Callable[[str], None]) -> tuple[Measurement, dict]:
        cp = self._cupy
        s = target.spec
        a = self._rng.random((s.M, s.K), dtype=cp.float32) * 2 - 1
        b = self._rng.random((s.K, s.N), dtype=cp.float32) * 2 - 1
        c = self._rng.random((s.M, s.N), dtype=cp.float32) * 2 - 1
        clocks: dict = {"source": self.clock_reader.source}

        def phase(name: str) -> None:
            if name == "measure":
                clocks["sm_mhz_before"] = self.clock_reader.sm_mhz()
            on_phase(name)

        result = time_fn(lambda: run(a, b, c, s.alpha, s.beta), self.backend, self.options, on_phase=phase)
        clocks["sm_mhz_after"] = self.clock_reader.sm_mhz()
        del a, b, c
        cp.get_default_memory_pool().free_all_blocks()
        return Measurement(s, result.samples_s, result.to_dict()), clocks


def _rung_info(rung: Any, M: int, N: int, K: int) -> dict:
    grid, block, smem = rung.launch_config(M, N, K)
    return {
        "order": rung.order,
        "family": rung.family,
        "summary": rung.summary,
        "source": rung.source,
        "function": rung.kernel,
        "params": dict(rung.params),
        "grid": list(grid),
        "block": list(block),
        "smem_bytes": int(smem),
    }


def rung_targets(rungs: Sequence[Any], M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0) -> list[Target]:
    """Targets for registry rungs; compilation happens when the target is prepared."""
    from gemmlab.runtime.launch import prepare

    out = []
    for rung in rungs:
        spec = BenchSpec(rung.name, M, N, K, alpha, beta, params=dict(rung.params))
        out.append(Target(spec, (lambda r=rung: prepare(r, M, N, K)), _rung_info(rung, M, N, K)))
    return out


def cublas_target(M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0) -> Target:
    from gemmlab.runtime import cublas

    def prepare() -> Launch:
        return lambda a, b, c, al, be: cublas.sgemm(a, b, c, al, be)

    info = {"order": None, "family": "library", "summary": f"cuBLAS SGEMM ({cublas.math_mode()})"}
    return Target(BenchSpec(CUBLAS, M, N, K, alpha, beta), prepare, info)


def measure(
    command: str,
    rungs: Sequence[Any],
    M: int,
    N: int,
    K: int,
    options: TimingOptions,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    seed: int = 0,
    with_cublas: bool = True,
    progress: Optional[Progress] = None,
) -> LadderResult:
    """The whole GPU job behind ``gemmlab ladder / bench / sweep``."""
    from gemmlab.bench import env as envmod
    from gemmlab.runtime import cublas

    env, reader = envmod.capture(math_mode=cublas.math_mode())
    peak = envmod.fp32_peak(env)
    bench = GpuBench(options, reader, seed=seed)
    env["l2_flush_bytes"] = bench.backend.l2_flush_bytes
    targets = rung_targets(rungs, M, N, K, alpha, beta)
    ref = cublas_target(M, N, K, alpha, beta) if with_cublas else None
    rows, ref_row = run_targets(targets, ref, bench, peak["flops"], progress)
    opts = {
        "timing": options.to_dict(),
        "seed": seed,
        "alpha": alpha,
        "beta": beta,
        "cublas": with_cublas,
    }
    return LadderResult(command, (M, N, K), rows, ref_row, env, peak, opts)
