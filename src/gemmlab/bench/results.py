"""The one results model: a ``Row`` per measured kernel, a ``RunRecord`` per run.

Every command that measures (``ladder``, ``bench``, ``sweep``, ``lesson``, ``shapes``) produces a
``RunRecord``; the store keeps it, ``--out`` writes it as JSON, and every consumer (tables, reports,
``compare``, ``diff``, the lessons' verdicts, the shape map) reads it back through ``load_record``.
The raw-sample ``Measurement`` travels unchanged the whole way: nothing downstream keeps a median of
its own, and every derived number (GFLOP/s, speed-ups, % of cuBLAS, % of peak) is computed from it
when asked.

A ``Row`` is one kernel at one problem: its ``Measurement`` (spec + raw samples + how they were
taken), its correctness check, whether it is the library reference (cuBLAS) the others are compared
with, what it is (``info``: rung, family, launch geometry), what actually ran (``launched``: a tuned
candidate, a scalar twin, the dispatch plan), the SM clocks its timed runs saw, and the data only one
kind of run has (``extra``: a lesson's sweep point and work, a shape map's grid shape).

A ``RunRecord`` has an explicit ``kind`` and a ``version``. Version 1 is what gemmlab 0.1 wrote (no
``version`` key; the kind in ``command``; rows with derived numbers mixed in; the old dtype names):
``load_record`` reads both, so runs stored by earlier versions still load.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import Measurement
from gemmlab.errors import InputError

RECORD_VERSION = 2

# The kinds of run this version knows, and what each is. A new kind (e.g. a user's own kernel)
# adds a line here and its handlers in gemmlab.workflows.kinds.
KINDS: dict[str, str] = {
    "ladder": "a ladder run (gemmlab ladder): every rung of one ladder, then cuBLAS",
    "bench": "a bench run (gemmlab bench): the kernels named, then cuBLAS",
    "sweep": "a sweep run (gemmlab sweep): the first article's tile/block/unroll variants, then cuBLAS",
    "lesson": "a lesson run (gemmlab lesson NAME): one of the fourth article's experiments",
    "shapes": "a shape map (gemmlab shapes): one rung and cuBLAS over a grid of shapes",
    "user": "a run of your own kernel (gemmlab bench FILE.cu / FILE.py:FN): one version of it, and cuBLAS",
}
LADDER_KINDS = ("ladder", "bench", "sweep")  # runs of ladder rungs at one shape, against cuBLAS

# Keys of a version-1 row that were derived from the samples or from other rows: recomputed on
# demand, never read back.
DERIVED_ROW_KEYS = frozenset({
    "n", "median_s", "q1_s", "q3_s", "iqr_s", "min_s", "max_s", "mean_s", "relative_iqr", "noisy",
    "noise_bound", "gflops", "speedup_vs_previous", "pct_of_cublas", "pct_of_peak", "speedup_vs_baseline",
    "is_baseline", "bandwidth_bytes_per_s", "pct_of_copy", "shape_class",
})
_ROW_KEYS = frozenset({"kernel", "is_reference", "info", "spec", "samples_s", "timing", "correct", "check",
                       "clocks", "launched"})
_RUN_KEYS = frozenset({"version", "kind", "command", "env", "rows", "run_id", "created_utc", "db", "source"})
RUN_EXPECTED = "a gemmlab run (`--out FILE` JSON of ladder, bench, sweep, lesson, shapes or user, or a results database)"


@dataclass(frozen=True)
class Check:
    """The correctness verdict of one row: passed or not, why, the normwise relative error, and the
    checker's whole record (``bench.check.CheckResult`` or ``lessons.base.LessonCheck`` as a dict)."""

    ok: bool
    reason: str = "ok"
    rel_err: Optional[float] = None
    details: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, result: Any) -> "Check":
        """From a checker's result object (anything with ``ok``, ``reason`` and ``to_dict``)."""
        d = dict(result.to_dict())
        return cls(bool(result.ok), str(getattr(result, "reason", "") or ""), _opt_float(d.get("rel_err")), d)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], ok: Optional[bool] = None) -> "Check":
        d = dict(d or {})
        return cls(bool(d.get("ok") if ok is None else ok), str(d.get("reason") or ""), _opt_float(d.get("rel_err")), d)

    def to_dict(self) -> dict:
        return {**dict(self.details), "ok": self.ok, "reason": self.reason,
                **({"rel_err": self.rel_err} if self.rel_err is not None or "rel_err" in self.details else {})}


def _opt_float(v: Any) -> Optional[float]:
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)  # NaN kept: a NaN relative error is a failed check, not missing data


@dataclass(frozen=True)
class Row:
    """One measured kernel: spec and raw samples, correctness, what ran, clocks."""

    measurement: Measurement
    check: Optional[Check] = None  # None: not checked
    reference: bool = False  # the library reference (cuBLAS) the run compares the others with
    info: Mapping[str, Any] = field(default_factory=dict)  # order, family, summary, function, geometry
    launched: Mapping[str, Any] = field(default_factory=dict)  # what actually ran, when it differs
    clocks: Mapping[str, Any] = field(default_factory=dict)  # SM MHz before/after the timed runs, source
    extra: Mapping[str, Any] = field(default_factory=dict)  # data of one kind of run (lesson point, grid shape)

    def __post_init__(self) -> None:
        if not isinstance(self.measurement, Measurement):
            raise TypeError(f"Row.measurement must be a Measurement, got {type(self.measurement).__name__}")
        for name in ("info", "launched", "clocks", "extra"):
            v = getattr(self, name)
            if not isinstance(v, Mapping):
                raise InputError(f"row {self.name!r}: {name} must be a mapping, got {type(v).__name__}")
            object.__setattr__(self, name, dict(v))

    # --- what it is -------------------------------------------------------------------------
    @property
    def spec(self) -> BenchSpec:
        return self.measurement.spec

    @property
    def name(self) -> str:
        return self.spec.kernel

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.spec.shape

    @property
    def family(self) -> str:
        return str(self.info.get("family") or "ladder")

    # --- timing, always from the raw samples -------------------------------------------------
    @property
    def samples_s(self) -> tuple[float, ...]:
        return self.measurement.samples_s

    @property
    def median_s(self) -> float:
        return self.measurement.median

    @property
    def iqr_s(self) -> float:
        return self.measurement.iqr

    @property
    def noisy(self) -> bool:
        return self.measurement.noisy

    @property
    def host_behind(self) -> bool:
        """Whether the GPU may have reached some run before the host had queued all of it (the
        hold and the runs ahead of it did not cover the host's pace):
        those runs may include GPU time spent waiting for the host (bench.timer,
        ``batches_host_behind``)."""
        return bool(self.measurement.timing.get("batches_host_behind"))

    @property
    def flops(self) -> Optional[int]:
        """The FLOPs of one run: a lesson row's own count (``extra["flops"]``; None for a lesson whose
        kernels do no arithmetic worth counting), else the GEMM's 2·M·N·K."""
        if "flops" in self.extra:
            f = self.extra["flops"]
            return int(f) if f else None
        return self.spec.flops

    @property
    def gflops(self) -> Optional[float]:
        f = self.flops
        return None if f is None else f / self.median_s / 1e9

    # --- correctness ------------------------------------------------------------------------
    @property
    def correct(self) -> Optional[bool]:
        return None if self.check is None else self.check.ok

    @property
    def rel_err(self) -> Optional[float]:
        return None if self.check is None else self.check.rel_err

    # --- records ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The row as JSON: the measurement (raw samples, and its statistics as derived copies),
        the check, what ran, the clocks, then the kind's own data."""
        d = {"kernel": self.name, "is_reference": self.reference, "info": dict(self.info),
             **self.measurement.to_dict()}
        if self.check is not None:
            d["correct"] = self.check.ok
            d["check"] = self.check.to_dict()
        d["clocks"] = dict(self.clocks)
        d["launched"] = dict(self.launched)
        if self.flops != self.spec.flops:  # a lesson row's GFLOP/s is its own count's, not 2·M·N·K's
            d["gflops"] = self.gflops
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "row") -> "Row":
        """A row of either record version; derived numbers in it are ignored (recomputed on demand)."""
        if not isinstance(d, Mapping):
            raise InputError(f"{where}: expected an object per result row, got {type(d).__name__}")
        spec = d.get("spec")
        if not isinstance(spec, Mapping) or not all(k in spec for k in ("M", "N", "K")):
            raise InputError(f"{where}: lacks its spec (kernel, M, N, K); expected {RUN_EXPECTED}")
        spec = {**spec, "kernel": spec.get("kernel") or d.get("kernel")}
        if isinstance(d.get("point"), Mapping) and isinstance(spec.get("params"), Mapping):
            # gemmlab 0.1's lesson rows filed their sweep point under params even when it was a
            # fraction (atomics' 0.1); params are integer kernel parameters, and the point itself
            # is kept with the row ("point"), so a fractional one is left out of the spec.
            spec["params"] = {k: v for k, v in spec["params"].items()
                              if isinstance(v, int) and not isinstance(v, bool)}
        samples = d.get("samples_s")
        if not isinstance(samples, (list, tuple)) or not samples:
            raise InputError(f"{where}: kernel {spec.get('kernel')!r} has no raw samples (samples_s); expected {RUN_EXPECTED}")
        if d.get("timing") is not None and not isinstance(d.get("timing"), Mapping):
            raise InputError(f"{where}: timing must be an object, got {type(d['timing']).__name__}")
        try:
            bad = [s for s in samples if isinstance(s, bool) or not isinstance(s, (int, float))
                   or not math.isfinite(s) or s <= 0]
            if bad:
                raise InputError(f"samples_s must be finite positive seconds, got {bad[0]!r}")
            m = Measurement(BenchSpec.from_dict(spec), tuple(samples), d.get("timing") or {})
        except InputError as e:
            raise InputError(f"{where}: kernel {spec.get('kernel')!r}: {e.message}") from None
        check = None
        if isinstance(d.get("check"), Mapping) or isinstance(d.get("correct"), bool):
            check = Check.from_dict(d.get("check") or {}, d["correct"] if isinstance(d.get("correct"), bool) else None)
        extra = {k: v for k, v in d.items() if k not in _ROW_KEYS and k not in DERIVED_ROW_KEYS}
        for name in ("info", "launched", "clocks"):
            if d.get(name) is not None and not isinstance(d.get(name), Mapping):
                raise InputError(f"{where}: {name} must be an object, got {type(d[name]).__name__}")
        return cls(m, check, bool(d.get("is_reference")), d.get("info") or {}, d.get("launched") or {},
                   d.get("clocks") or {}, extra)


@dataclass(frozen=True)
class RunRecord:
    """Everything one command measured: its kind, rows, environment and kind-specific data."""

    kind: str
    rows: tuple[Row, ...]
    env: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)  # shape, peak, options, dtype, ... per kind
    created_utc: str = ""
    run_id: Optional[int] = None
    source: str = ""  # where it was read from: a path, "runs.sqlite run 7"; "" for a fresh run
    version: int = RECORD_VERSION

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"{self.source or 'run'}: kind {self.kind!r}; expected one of {', '.join(KINDS)}")
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "env", dict(self.env or {}))
        object.__setattr__(self, "meta", dict(self.meta or {}))
        if not self.created_utc:  # a fresh run: when its environment was captured
            object.__setattr__(self, "created_utc", str(self.env.get("captured_utc") or ""))

    @property
    def gpu(self) -> str:
        return str(self.meta.get("gpu") or self.env.get("gpu") or "unknown GPU")

    def reference_at(self, shape: tuple[int, int, int]) -> Optional[Row]:
        """The reference (cuBLAS) row at ``shape``, if the run has one."""
        return next((r for r in self.rows if r.reference and r.shape == shape), None)

    @property
    def failures(self) -> list[Row]:
        return [r for r in self.rows if r.correct is False]

    # --- derived numbers, from the rows' measurements when asked ------------------------------
    def previous(self, row: Row) -> Optional[Row]:
        """The rung before ``row`` at its shape, in run order: what "speed-up vs previous" divides
        by. None for the first rung, the reference, and every row of a sweep (its variants are
        alternatives, not steps) or of a non-ladder kind."""
        if self.kind not in ("ladder", "bench") or row.reference:
            return None
        before = None
        for r in self.rows:
            if r is row:
                return before
            if not r.reference and r.shape == row.shape:
                before = r
        return None

    def speedup_vs_previous(self, row: Row) -> Optional[float]:
        from gemmlab.bench.stats import speedup

        before = self.previous(row)
        return None if before is None else speedup(before.measurement, row.measurement)

    def pct_of_reference(self, row: Row) -> Optional[float]:
        """% of cuBLAS at the row's shape (100 for the reference itself)."""
        return 100.0 if row.reference else pct_of(self.reference_at(row.shape), row)

    def pct_of_peak(self, row: Row) -> Optional[float]:
        return pct_of_peak(row, self.meta.get("peak") or {})

    def ladder_extras(self) -> list[dict]:
        """Per row, the numbers a ladder table shows beside it (written into ``--out`` JSON)."""
        return [{"speedup_vs_previous": self.speedup_vs_previous(r), "pct_of_cublas": self.pct_of_reference(r),
                 "pct_of_peak": self.pct_of_peak(r)} for r in self.rows]

    def to_dict(self, row_extras: Optional[Sequence[Mapping[str, Any]]] = None) -> dict:
        """The run as JSON (what ``--out`` writes and ``--json`` prints). ``row_extras``: per row,
        derived numbers to show beside it (the kind's: speed-ups, % of cuBLAS, ...)."""
        rows = [r.to_dict() for r in self.rows]
        for d, extra in zip(rows, row_extras or ()):
            d.update(extra)
        out = {"version": self.version, "kind": self.kind, "command": self.kind, **dict(self.meta),
               "env": dict(self.env), "rows": rows}
        if self.run_id is not None:
            out["run_id"] = self.run_id
        if self.created_utc:
            out["created_utc"] = self.created_utc
        return out


def load_record(d: Any, source: str = "") -> RunRecord:
    """A run record from its JSON form, version 1 (gemmlab 0.1) or 2; InputError naming ``source``
    and what is wrong otherwise."""
    where = source or "run"
    if not isinstance(d, Mapping) or not isinstance(d.get("rows"), list):
        raise InputError(f"{where}: not {RUN_EXPECTED}: no 'rows' list")
    version = d.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(f"{where}: record version {version!r}; expected a positive integer")
    if version > RECORD_VERSION:
        raise InputError(f"{where}: record version {version} is newer than this gemmlab reads ({RECORD_VERSION}); "
                         "upgrade gemmlab")
    kind = d.get("kind") if version >= 2 else d.get("command")
    kind = kind or "ladder"  # the earliest ladder files wrote no command
    if kind not in KINDS:
        raise InputError(f"{where}: a {kind!r} run; expected one of {', '.join(KINDS)}")
    env = d.get("env")
    if env is not None and not isinstance(env, Mapping):
        raise InputError(f"{where}: 'env' must be an object, got {type(env).__name__}")
    if not d["rows"]:
        raise InputError(f"{where}: the run has no result rows")
    for name in ("shape", "peak", "options", "ceiling", "map"):
        if d.get(name) is not None and not isinstance(d[name], Mapping):
            raise InputError(f"{where}: '{name}' must be an object, got {type(d[name]).__name__}")
    rows = tuple(Row.from_dict(r, f"{where}: result row {i}") for i, r in enumerate(d["rows"]))
    meta = {k: v for k, v in d.items() if k not in _RUN_KEYS}
    run_id = d.get("run_id")
    return RunRecord(kind, rows, env or {}, meta, str(d.get("created_utc") or ""),
                     run_id if isinstance(run_id, int) and not isinstance(run_id, bool) else None, source)


# --- derived numbers a run's rows share -------------------------------------------------------

def peak_flops_for(row: Row, run_peak: Mapping[str, Any]) -> Optional[float]:
    """The compute peak ``row``'s % of peak is measured against: the tensor peak at the SM clock its
    own timed runs saw (tensor-core rows record it in their clocks), else the run's peak."""
    for key in (f"{row.spec.dtype}_peak_flops",):
        v = row.clocks.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    v = run_peak.get("flops") if isinstance(run_peak, Mapping) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 else None


def pct_of_peak(row: Row, run_peak: Mapping[str, Any]) -> Optional[float]:
    peak = peak_flops_for(row, run_peak)
    g = row.gflops
    return None if peak is None or g is None else 100.0 * g * 1e9 / peak


def pct_of(reference: Optional[Row], row: Row) -> Optional[float]:
    """% of the reference (above 100: the row is faster); None without a reference or when the
    reference failed its check.

    Where the row was timed against it in interleaved rounds (``extra["vs_reference"]``,
    ``bench.interleave.compare``): the median of the per-round ratios, each the reference's median
    over the row's in one round, the two timed back to back (A B, then B A). Under the power cap the
    samples of a side are a mixture of clock states, and the median of all rounds pooled can land in
    a different state for each side: at 16384^3 BF16 on an H100, rounds of 100.9% and 98.0% pooled
    to 94.5%. Otherwise: reference median / row median x 100."""
    if reference is None or reference.correct is False:
        return None
    rounds = (row.extra or {}).get("vs_reference")
    if isinstance(rounds, Mapping) and rounds.get("ratio_median"):
        return 100.0 * float(rounds["ratio_median"])
    return 100.0 * reference.median_s / row.median_s
