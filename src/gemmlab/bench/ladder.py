"""Run a list of kernels at one shape: check each, then time them and cuBLAS in interleaved rounds.

Every kernel and cuBLAS SGEMM (true FP32) is compiled (once) and checked on fresh inputs first; then all
are timed in rounds whose order reverses each time (kernels then cuBLAS, then cuBLAS then the kernels:
``bench.interleave``), in the same process, so a clock drifting under the power cap hits every side
alike; each kernel's row records its per-round ratio to cuBLAS and flags one that flips with the order.
Then each row gets

* speedup vs the previous row (previous median / this median),
* % of cuBLAS — cuBLAS measured here is the practical FP32 ceiling of this GPU at this shape,
* % of the clock-derived FP32 peak (SMs × FP32 lanes × 2 × max SM clock), which no SGEMM reaches
  (cuBLAS gets about 77% of it on an H100 at 4096³).

The orchestration (``run_targets``) takes a ``Bench`` with ``check`` and ``time`` methods, so it is
tested on a CPU with a fake; ``GpuBench`` is the real one and ``rung_targets`` builds the targets
from the kernel registry. The result is a ``bench.results.RunRecord``; the speed-ups and
percentages are derived from its rows when shown (``bench.results.ladder_extras``).

``dtype="bf16"`` runs the tensor-core ladder the same way: bf16 inputs (uint16 bits), the BF16
bound (gemmlab.numerics.bf16), cuBLAS at its best with the rungs' input/output types and FP32
compute (the fastest of cublasGemmEx's default and cuBLASLt's heuristic algorithms at the run's
shape, gemmlab.bench.cublas_best), % of the dense BF16 tensor peak at the SM clock each row's run saw. Rungs the GPU lacks
the architecture for are skipped with their one-line reason (the record's ``skipped``).

``dtype="fp8"`` runs the FP8 ladder: e4m3 inputs (uint8 bits) with B given N x K ("TN"), bf16 C,
the FP8 bound (gemmlab.numerics.fp8), cuBLASLt FP8 at its best with the same types as the reference
(``cublas_fp8_target``), % of the dense FP8 tensor peak (twice BF16's on Hopper) at each row's
clock.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Protocol, Sequence

from gemmlab.bench.check import Checker, CheckResult
from gemmlab.bench import interleave
from gemmlab.bench.results import Check, Row, RunRecord
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


def launched_by(run: Any) -> dict:
    """The rung and geometry a prepared launcher reports (``gemmlab.runtime.prepared.PreparedGemm``),
    or the record a launcher keeps itself as ``launched`` (the BF16 cuBLAS reference's selection,
    ``gemmlab.bench.cublas_best``)."""
    own = getattr(run, "launched", None)
    if isinstance(own, dict):
        return dict(own)
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
    progress: Optional[Progress] = None,
    rounds: int = interleave.ROUNDS,
) -> tuple[list[Row], Optional[Row]]:
    """Compile and check every target and the reference, then time them in interleaved rounds (in order,
    then reversed: each side once early and once late, so a clock that drifts under a power cap hits all
    alike). A side's samples are the union of its rounds; each kernel's row gets the per-round ratios to
    the reference and the clocks each saw (``extra["vs_reference"]``, ``interleave.compare``)."""
    everything = list(targets) + ([reference] if reference is not None else [])
    total = len(everything)

    def say_for(i: int):
        def say(phase: str, _name: str = everything[i].name, _i: int = i) -> None:
            if progress is not None:
                progress(_name, _i, total, phase)
        return say

    runs, verdicts = [], []
    for i, target in enumerate(everything):
        say = say_for(i)
        say("compile")
        run = target.prepare()
        say("check")
        verdict = bench.check(target, run)
        if not verdict.ok:
            log.warning("%s failed the correctness check: %s", target.name, verdict.reason)
        runs.append(run)
        verdicts.append(verdict)
    parts: list[list[tuple[Measurement, dict]]] = [[] for _ in everything]
    position: list[list[int]] = [[] for _ in everything]  # each side's place in each round
    for r in range(max(1, rounds)):
        for place, i in enumerate(interleave.order(total, r)):
            parts[i].append(bench.time(everything[i], runs[i], say_for(i)))
            position[i].append(place)
    measured: list[Row] = []
    for i, target in enumerate(everything):
        measurement, clocks = interleave.merge(parts[i])
        extra: dict = {}
        if reference is not None and target is not reference:
            ref_i = total - 1
            first = [p < q for p, q in zip(position[i], position[ref_i])]
            extra["vs_reference"] = interleave.compare(parts[i], parts[ref_i], first)
            if extra["vs_reference"]["order_flip"]:
                v = extra["vs_reference"]
                log.warning("%s at %s: faster than %s in the rounds where one of them ran first, slower in "
                            "the others (ratios %.2f-%.2f): the comparison depends on the clock each got",
                            target.name, "x".join(map(str, measurement.spec.shape)), reference.name,
                            v["ratio_min"], v["ratio_max"])
        measured.append(Row(measurement, Check.of(verdicts[i]), target is reference, dict(target.info),
                            launched_by(runs[i]), clocks, extra))
        say_for(i)("done")
    ref_row = measured.pop() if reference is not None else None
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
        return self.checker.check(run, s.M, s.N, s.K, s.alpha, s.beta, *_dtypes(target))

    def time(self, target: Target, run: Launch, on_phase: Callable[[str], None]) -> tuple[Measurement, dict]:
        cp = self._cupy
        s = target.spec
        t_in, t_out = _dtypes(target)
        from gemmlab.kernels.families import b_shape

        a = self._operand((s.M, s.K), t_in)
        b = self._operand(b_shape(t_in, s.K, s.N), t_in)  # fp8: N x K ("TN")
        c = self._operand((s.M, s.N), t_out)
        clocks: dict = {"source": self.clock_reader.source}

        def phase(name: str) -> None:
            if name == "measure":
                clocks["sm_mhz_before"] = self.clock_reader.sm_mhz()
            on_phase(name)

        result = time_fn(functools.partial(run, a, b, c, s.alpha, s.beta), self.backend, self.options, on_phase=phase)
        clocks["sm_mhz_after"] = self.clock_reader.sm_mhz()
        del a, b, c
        cp.get_default_memory_pool().free_all_blocks()
        return Measurement(s, result.samples_s, result.to_dict()), clocks

    def _operand(self, shape: tuple[int, int], dtype: str) -> Any:
        x = self._rng.random(shape, dtype=self._cupy.float32) * 2 - 1
        if dtype == "fp16":
            return x.astype(self._cupy.float16)
        if dtype == "bf16":
            from gemmlab.numerics.bf16 import to_bits

            return to_bits(x)
        if dtype == "fp8":
            from gemmlab.numerics import fp8

            return fp8.to_bits(x)
        return x


def _dtypes(target: Target) -> tuple[str, str]:
    """(A/B dtype, C dtype) of a target: its spec's."""
    return target.spec.dtype, target.spec.out_dtype


def _rung_info(rung: Any, M: int, N: int, K: int) -> dict:
    from gemmlab.runtime import device

    sms = device.info().sm_count if rung.persistent else None  # persistent: one CTA per SM
    grid, block, smem = rung.launch_config(M, N, K, sms=sms)
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
        "dtype": rung.dtype,
        "out_dtype": rung.out_dtype,
        "arch": rung.arch,
    }


def rung_targets(rungs: Sequence[Any], M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0) -> list[Target]:
    """Targets for registry rungs; compilation happens when the target is prepared."""
    from gemmlab.runtime.launch import prepare

    out = []
    for rung in rungs:
        spec = BenchSpec(rung.name, M, N, K, alpha, beta, rung.dtype, params=dict(rung.params),
                         out_dtype=rung.out_dtype)
        out.append(Target(spec, (lambda r=rung: prepare(r, M, N, K)), _rung_info(rung, M, N, K)))
    return out


def cublas_target(M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0) -> Target:
    from gemmlab.runtime import cublas

    def prepare() -> Launch:
        return lambda a, b, c, al, be: cublas.sgemm(a, b, c, al, be)

    info = {"order": None, "family": "library", "summary": f"cuBLAS SGEMM ({cublas.math_mode()})"}
    return Target(BenchSpec(CUBLAS, M, N, K, alpha, beta), prepare, info)


def cublas_bf16_target(M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0,
                       out_dtype: str = "bf16", best: bool = True) -> Target:
    """cuBLAS with bf16 A, B, ``out_dtype`` C and CUBLAS_COMPUTE_32F.

    ``best`` (the default): cuBLAS at its best for this shape - preparing the target times
    cublasGemmEx's default and cuBLASLt's heuristic algorithms briefly (``bench.cublas_best``)
    and launches the fastest; the target's summary then names the winner and the row's
    ``launched`` record holds every candidate's time. ``best=False``: cublasGemmEx's default."""
    from gemmlab.runtime import cublas

    info = {"order": None, "family": "library", "summary": cublas.bf16_label(out_dtype),
            "dtype": "bf16", "out_dtype": out_dtype}

    def prepare() -> Launch:
        if not best:
            return lambda a, b, c, al, be: cublas.gemm_bf16(a, b, c, al, be)
        from gemmlab.bench.cublas_best import best_bf16

        run = best_bf16(M, N, K, out_dtype, alpha, beta)
        info["summary"] = run.summary  # the info dict is the Target's: the row shows the winner
        return run

    if best:
        c_type = "CUDA_R_16BF" if out_dtype == "bf16" else "CUDA_R_32F"
        info["summary"] = ("cuBLAS BF16 at its best: the fastest of cublasGemmEx's default and "
                           "cuBLASLt's heuristic algorithms, chosen when prepared; A,B "
                           f"CUDA_R_16BF, C {c_type}, CUBLAS_COMPUTE_32F")
    spec = BenchSpec(CUBLAS, M, N, K, alpha, beta, "bf16", out_dtype=out_dtype)
    return Target(spec, prepare, info)


def cublas_fp8_target(M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0) -> Target:
    """cuBLASLt FP8 at its best for this shape (``bench.cublas_best.best_fp8``): e4m3 A (M x K)
    and B given N x K ("TN"), bf16 C, CUBLAS_COMPUTE_32F; chosen among cuBLASLt's heuristic
    algorithms with FAST_ACCUM on and off (and torch._scaled_mm) when the target is prepared.
    The row's summary then names the winner, its ``launched`` record every candidate."""
    info = {"order": None, "family": "library", "dtype": "fp8", "out_dtype": "bf16",
            "summary": ("cuBLASLt FP8 at its best: the fastest of cuBLASLt's heuristic algorithms "
                        "(FAST_ACCUM 1 and 0), chosen when prepared; A,B CUDA_R_8F_E4M3 (TN: B "
                        "given N x K), C,D CUDA_R_16BF, CUBLAS_COMPUTE_32F")}

    def prepare() -> Launch:
        from gemmlab.bench.cublas_best import best_fp8

        run = best_fp8(M, N, K, alpha, beta)
        info["summary"] = run.summary
        return run

    spec = BenchSpec(CUBLAS, M, N, K, alpha, beta, "fp8", out_dtype="bf16")
    return Target(spec, prepare, info)


def split_runnable(rungs: Sequence[Any], cc: tuple[int, int], gpu: str) -> tuple[list, list]:
    """(rungs this GPU can run, [{"kernel", "reason"}] for the others) - a GPU without a rung's
    architecture skips that rung with one line; the rest still run."""
    from gemmlab.kernels.families import arch_refusal

    keep, skipped = [], []
    for r in rungs:
        reason = arch_refusal(r, cc[0], cc[1], gpu)
        if reason:
            skipped.append({"kernel": r.name, "reason": reason})
        else:
            keep.append(r)
    return keep, skipped


def run_dtypes(rungs: Sequence[Any]) -> tuple[str, str]:
    """The one (input, output) dtype pair of a run; InputError when the rungs mix them (cuBLAS is
    timed with one pair, so a mixed run would compare unlike with like)."""
    from gemmlab.errors import InputError

    pairs = {(r.dtype, r.out_dtype) for r in rungs}
    if len(pairs) > 1:
        listing = "; ".join(f"{r.name}: {r.dtype} in, {r.out_dtype} out" for r in rungs)
        raise InputError(f"rungs of different dtypes cannot share one run (cuBLAS is timed with "
                         f"one input/output type): {listing}")
    return pairs.pop() if pairs else ("fp32", "fp32")


def with_tensor_peaks(rows: Sequence[Row], env: dict, dtype: str = "bf16") -> list[Row]:
    """The rows with the dense BF16 (``dtype="fp8"``: FP8) peak at the SM clock each row's timed runs
    saw (the mean of the clock read before and after; the maximum clock when none was read) added to
    their clocks, as ``<dtype>_peak_flops``: their % of peak is measured against it
    (``bench.results.pct_of_peak``)."""
    from dataclasses import replace

    from gemmlab.bench import env as envmod

    out = []
    for row in rows:
        seen = [row.clocks.get(k) for k in ("sm_mhz_before", "sm_mhz_after")]
        seen = [float(v) for v in seen if v]
        peak = envmod.tensor_peak(dtype, env, sum(seen) / len(seen) if seen else None)
        out.append(replace(row, clocks={**row.clocks, f"{dtype}_peak_flops": peak["flops"]}))
    return out


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
) -> RunRecord:
    """The whole GPU job behind ``gemmlab ladder / bench / sweep``: a run record of kind ``command``."""
    from gemmlab.bench import env as envmod
    from gemmlab.runtime import cublas, device

    in_dtype, out_dtype = run_dtypes(rungs)
    env, reader = envmod.capture(math_mode=cublas.math_mode())
    dev = device.info()
    rungs, skipped = split_runnable(rungs, (dev.cc_major, dev.cc_minor), dev.name)
    for s in skipped:
        log.warning("%s", s["reason"])
    tensor = in_dtype in ("bf16", "fp8")
    peak = envmod.tensor_peak(in_dtype, env) if tensor else envmod.fp32_peak(env)
    bench = GpuBench(options, reader, seed=seed)
    env["l2_flush_bytes"] = bench.backend.l2_flush_bytes
    targets = rung_targets(rungs, M, N, K, alpha, beta)
    ref = None
    if with_cublas:
        if in_dtype == "fp8":
            ref = cublas_fp8_target(M, N, K, alpha, beta)
        elif in_dtype == "bf16":
            ref = cublas_bf16_target(M, N, K, alpha, beta, out_dtype)
        else:
            ref = cublas_target(M, N, K, alpha, beta)
    rows, ref_row = run_targets(targets, ref, bench, progress)
    rows = rows + ([ref_row] if ref_row is not None else [])
    if tensor:
        rows = with_tensor_peaks(rows, env, in_dtype)
    opts = {
        "timing": options.to_dict(),
        "seed": seed,
        "alpha": alpha,
        "beta": beta,
        "cublas": with_cublas,
        "dtype": in_dtype,
        "out_dtype": out_dtype,
    }
    meta = {"shape": {"M": M, "N": N, "K": K}, "peak": peak, "options": opts, "dtype": in_dtype,
            "skipped": list(skipped)}
    return RunRecord(command, tuple(rows), env, meta)
