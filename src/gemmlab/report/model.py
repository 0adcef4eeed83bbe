"""What a report is drawn from: one run's results, its sweep, and the analyzer's diagnoses.

The report layer reads only these dataclasses; ``gemmlab.report.sources`` turns a stored run, a
run JSON file (``gemmlab ladder --out``) or an analyzer export into them. Times are seconds and
never rounded here; the median and GFLOP/s are computed from the raw samples when not given.

- ``KernelResult``: one kernel at one problem size (M, N, K): raw samples (seconds) and/or the
  median, GFLOP/s, % of cuBLAS, the correctness check. ``order`` is the kernel's rung on the
  ladder (the report's "speedup vs previous" follows it); ``family == REFERENCE`` marks the library
  reference (cuBLAS) that "% of cuBLAS" is measured against.
- ``SweepPoint``: one configuration of a parameter sweep (tile size, block shape, unroll, ...).
- ``ProfileNote``: what ``gemmlab ladder --profile`` recorded for a rung (bottleneck, signal).
- ``RunView``: the run: GPU, environment (driver, CUDA, ...), creation time, command, results,
  optional sweep, optional diagnoses (``gemmlab analyze --json`` documents), optional roofline
  ceilings, and where the data came from (``source``; ``data_note`` is shown as a banner). Its
  ``dtype`` says which ladder it measured (``gemmlab.report.ladders``): a report shows each ladder
  in its own section and ``compare`` never sets one ladder's rungs against the other's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from gemmlab.errors import InputError
from gemmlab.problem import gemm_flops
from gemmlab.report.ladders import Ladder, ladder_of

if TYPE_CHECKING:
    from gemmlab.analysis.roofline import Ceilings

# family of the library reference kernel that "% of cuBLAS" is measured against
REFERENCE = "reference"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_shape(what: str, M: Any, N: Any, K: Any) -> None:
    for name, v in (("M", M), ("N", N), ("K", K)):
        if not _is_int(v) or v < 1:
            raise InputError(f"{what}: {name} must be a positive integer, got {v!r}")


def _opt_positive(what: str, name: str, v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise InputError(f"{what}: {name} must be a finite positive number or null, got {v!r}")
    return float(v)


def _opt_finite(what: str, name: str, v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise InputError(f"{what}: {name} must be a number or null, got {v!r}")
    return float(v)  # NaN is kept: a NaN relative error is a failed check, not missing data


def _samples(what: str, samples: Iterable[Any]) -> tuple[float, ...]:
    out = []
    for s in samples:
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
            raise InputError(f"{what}: samples_s must be finite positive seconds, got {s!r}")
        out.append(float(s))
    return tuple(out)


@dataclass(frozen=True)
class KernelResult:
    """One kernel at one problem size; times in seconds."""

    name: str
    M: int
    N: int
    K: int
    samples_s: tuple[float, ...] = ()
    median_s: float | None = None  # computed from samples_s when not given
    order: int = 0  # rung on the ladder; "speedup vs previous" follows it
    family: str = "ladder"  # "ladder", or REFERENCE for cuBLAS
    gflops: float | None = None  # computed from the median when not given
    pct_of_cublas: float | None = None  # computed against the run's reference when not given
    pct_of_peak: float | None = None  # as the harness stored it (the BF16 ladder's uses each row's clock)
    correct: bool | None = None  # None: not checked
    rel_err: float | None = None
    beta: float = 0.0  # C = alpha*A@B + beta*C: beta != 0 also reads C (roofline bytes)
    config: Mapping[str, Any] = field(default_factory=dict)  # launch geometry, params, function name

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InputError(f"kernel result: name must be a non-empty string, got {self.name!r}")
        what = f"kernel result {self.name!r}"
        _check_shape(what, self.M, self.N, self.K)
        object.__setattr__(self, "samples_s", _samples(what, self.samples_s))
        median = _opt_positive(what, "median_s", self.median_s)
        if median is None:
            if not self.samples_s:
                raise InputError(f"{what}: needs samples_s or median_s")
            median = float(np.median(np.asarray(self.samples_s, dtype=np.float64)))
        object.__setattr__(self, "median_s", median)
        gf = _opt_positive(what, "gflops", self.gflops)
        object.__setattr__(self, "gflops", gf if gf is not None else self.flops / median / 1e9)
        object.__setattr__(self, "pct_of_cublas", _opt_positive(what, "pct_of_cublas", self.pct_of_cublas))
        object.__setattr__(self, "pct_of_peak", _opt_positive(what, "pct_of_peak", self.pct_of_peak))
        object.__setattr__(self, "rel_err", _opt_finite(what, "rel_err", self.rel_err))
        beta = _opt_finite(what, "beta", self.beta)
        if beta is None or not math.isfinite(beta):
            raise InputError(f"{what}: beta must be a finite number, got {self.beta!r}")
        object.__setattr__(self, "beta", beta)
        if not _is_int(self.order):
            raise InputError(f"{what}: order must be an integer, got {self.order!r}")
        if self.correct is not None and not isinstance(self.correct, bool):
            raise InputError(f"{what}: correct must be true, false or null, got {self.correct!r}")
        if not isinstance(self.config, Mapping):
            raise InputError(f"{what}: config must be a mapping, got {type(self.config).__name__}")
        object.__setattr__(self, "config", dict(self.config))

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.M, self.N, self.K)

    @property
    def flops(self) -> int:
        return gemm_flops(self.M, self.N, self.K)

    @property
    def is_reference(self) -> bool:
        return self.family == REFERENCE

    def quantile(self, q: float) -> float | None:
        """The q-quantile of the raw samples (None without samples)."""
        if not self.samples_s:
            return None
        return float(np.quantile(np.asarray(self.samples_s, dtype=np.float64), q))

    @property
    def iqr_s(self) -> float | None:
        if not self.samples_s:
            return None
        return self.quantile(0.75) - self.quantile(0.25)

@dataclass(frozen=True)
class SweepPoint:
    """One configuration of a parameter sweep: params (e.g. tile=16, unroll=1) → time."""

    kernel: str
    params: Mapping[str, Any]
    M: int
    N: int
    K: int
    samples_s: tuple[float, ...] = ()
    median_s: float | None = None

    def __post_init__(self) -> None:
        what = f"sweep point {self.kernel!r}"
        if not isinstance(self.kernel, str) or not self.kernel.strip():
            raise InputError(f"sweep point: kernel must be a non-empty string, got {self.kernel!r}")
        _check_shape(what, self.M, self.N, self.K)
        if not isinstance(self.params, Mapping) or not self.params:
            raise InputError(f"{what}: params must be a non-empty mapping, got {self.params!r}")
        for k, v in self.params.items():
            if not isinstance(k, str) or not (isinstance(v, (int, str)) or v is None):
                raise InputError(f"{what}: params must map names to integers or strings, got {k!r}: {v!r}")
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "samples_s", _samples(what, self.samples_s))
        median = _opt_positive(what, "median_s", self.median_s)
        if median is None:
            if not self.samples_s:
                raise InputError(f"{what}: needs samples_s or median_s")
            median = float(np.median(np.asarray(self.samples_s, dtype=np.float64)))
        object.__setattr__(self, "median_s", median)

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.M, self.N, self.K)

    @property
    def gflops(self) -> float:
        return gemm_flops(self.M, self.N, self.K) / self.median_s / 1e9

@dataclass(frozen=True)
class ProfileNote:
    """What ``gemmlab ladder --profile`` recorded for one rung."""

    bottleneck: str | None
    signal: str | None
    error: str | None = None
    report: str | None = None  # the .ncu-rep it wrote


@dataclass(frozen=True)
class MatteredStep:
    """One row of ``gemmlab ladder --profile``'s "What actually mattered" ranking, as stored."""

    rank: int
    optimization: str  # "before -> after"
    speedup: float
    why: str
    slower: bool = False
    within_noise: bool = False


@dataclass(frozen=True)
class RunView:
    """One run as the report sees it."""

    gpu: str
    results: tuple[KernelResult, ...]
    created_utc: str = ""
    command: str = ""
    env: Mapping[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    sweep: tuple[SweepPoint, ...] = ()
    diagnoses: Mapping[str, Any] | None = None  # {"kernels": [Diagnosis.to_dict(), ...], "source": ...}
    source: str = ""  # where the data was read from (a path, "runs.sqlite run 7")
    data_note: str = ""  # shown as a banner on the report (e.g. "sample data, not a measurement")
    kind: str = "ladder"  # the command that made it: "ladder", "bench" or "sweep"
    profile: Mapping[str, ProfileNote] = field(default_factory=dict)  # rung name → ladder --profile note
    ceilings: "Ceilings | None" = None  # roofline ceilings for this GPU (measured or spec), if known
    dtype: str = "fp32"  # the ladder: "fp32" (SGEMM) or "bf16" (tensor cores)
    out_dtype: str = "fp32"  # C's dtype
    peak: Mapping[str, Any] = field(default_factory=dict)  # the run's compute peak (``ladder --out``'s "peak")
    mattered: tuple[MatteredStep, ...] = ()  # ladder --profile's "What actually mattered" ranking

    def __post_init__(self) -> None:
        if not isinstance(self.gpu, str) or not self.gpu.strip():
            raise InputError(f"run: gpu must be a non-empty string, got {self.gpu!r}")
        ladder_of(self.dtype, self.out_dtype)  # a known ladder, or one line saying what is expected
        object.__setattr__(self, "peak", dict(self.peak or {}))
        results = tuple(self.results)
        if not results:
            raise InputError(f"run {self.run_id or self.source or '?'}: has no kernel results")
        seen = set()
        for r in results:
            if not isinstance(r, KernelResult):
                raise InputError(f"run: results must be KernelResult objects, got {type(r).__name__}")
            key = (r.name, r.shape)
            if key in seen:
                raise InputError(f"run: kernel {r.name!r} appears twice at M,N,K={r.M},{r.N},{r.K}")
            seen.add(key)
        object.__setattr__(self, "results", results)
        object.__setattr__(self, "sweep", tuple(self.sweep))
        object.__setattr__(self, "env", dict(self.env or {}))
        object.__setattr__(self, "profile", dict(self.profile or {}))
        if self.diagnoses is not None:
            if not isinstance(self.diagnoses, Mapping) or not isinstance(self.diagnoses.get("kernels"), list):
                raise InputError("run: diagnoses must be a Diagnosis JSON object with a 'kernels' list")

    # --- views the report uses ------------------------------------------------------------
    @property
    def shapes(self) -> list[tuple[int, int, int]]:
        """The problem sizes in this run, in first-seen order."""
        out: list[tuple[int, int, int]] = []
        for r in self.results:
            if r.shape not in out:
                out.append(r.shape)
        return out

    def ladder(self, shape: tuple[int, int, int]) -> list[KernelResult]:
        """The non-reference kernels at ``shape``, in rung order (stable for equal orders)."""
        return sorted((r for r in self.results if r.shape == shape and not r.is_reference), key=lambda r: r.order)

    def reference(self, shape: tuple[int, int, int]) -> KernelResult | None:
        """The reference (cuBLAS) result at ``shape``, if the run has one."""
        refs = [r for r in self.results if r.shape == shape and r.is_reference]
        return refs[0] if refs else None

    def pct_of_reference(self, r: KernelResult) -> float | None:
        """% of cuBLAS: the stored value, else computed from the reference's GFLOP/s at the same shape."""
        if r.pct_of_cublas is not None:
            return r.pct_of_cublas
        ref = self.reference(r.shape)
        if ref is None:
            return None
        return 100.0 * r.gflops / ref.gflops

    def diagnosis_for(self, r: KernelResult) -> Mapping[str, Any] | None:
        """The analyzer's entry for ``r``: its kernel name (up to any '(' of a demangled signature,
        or '<' of template arguments) equals the result's name, its function, or the function of
        the variant it launched."""
        if not self.diagnoses:
            return None
        wanted = {r.name}
        function = str(r.config.get("function") or "")
        if function:
            wanted.add(function)
        launched = r.config.get("launched") or {}
        if launched.get("rung") and function.endswith(r.name):
            # a rung that resolved to a variant (autotuned → one candidate) runs that variant's
            # function: the same prefix before the variant's name
            prefix = function[: len(function) - len(r.name)]
            wanted |= {str(launched["rung"]), prefix + str(launched["rung"])}
        for k in self.diagnoses.get("kernels", []):
            for key in ("name", "demangled"):
                if kernel_base_name(str(k.get(key) or "")) in wanted:
                    return k
        return None

    @property
    def ladder_kind(self) -> Ladder:
        """Which ladder this run measured: its name, units, peak and reference."""
        return ladder_of(self.dtype, self.out_dtype)

    @property
    def label(self) -> str:
        """Short name for this run in comparisons: the GPU, plus the run id when known."""
        return f"{self.gpu} (run {self.run_id})" if self.run_id else self.gpu


def kernel_base_name(name: str) -> str:
    """``void gemmlab_x<16>(float const*, ...)`` → ``gemmlab_x``."""
    base = name.split("(", 1)[0].split("<", 1)[0].strip()
    return base.split()[-1] if base else base


def speedups(results: Sequence[KernelResult]) -> list[float | None]:
    """Speedup of each result over the one before it (previous median / this median); None first."""
    out: list[float | None] = [None]
    for prev, cur in zip(results, results[1:]):
        out.append(prev.median_s / cur.median_s)
    return out
