"""What a ladder report is drawn from: one run's record, its sweep, and the analyzer's diagnoses.

``RunView`` wraps a ladder-kind ``bench.results.RunRecord`` (ladder, bench or sweep) with what the
report adds to it: the analyzer's diagnoses, roofline ceilings, sweep points from a sweep run, and a
banner line. Every number is read from the record's rows (raw samples in seconds, never rounded):
the report keeps no median of its own.

- ``SweepPoint``: one configuration of a parameter sweep (tile size, block shape, unroll, ...) and
  its row.
- ``ProfileNote``: what ``gemmlab ladder --profile`` recorded for a rung (bottleneck, signal).
- ``RunView``: the run and its attachments. Its ladder (``gemmlab.report.ladders``) comes from the
  rows' types: a report shows each ladder in its own section and ``compare`` never sets one ladder's
  rungs against the other's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional

from gemmlab.analysis.mattered import Change, RungRow, what_mattered
from gemmlab.bench.results import LADDER_KINDS, Row, RunRecord
from gemmlab.errors import InputError
from gemmlab.report.ladders import Ladder, ladder_of

if TYPE_CHECKING:
    from gemmlab.analysis.roofline import Ceilings


@dataclass(frozen=True)
class SweepPoint:
    """One configuration of a parameter sweep: its parameters (e.g. tile=16, unroll=1) and its row."""

    kernel: str  # the swept family
    params: Mapping[str, Any]
    row: Row

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.row.shape

    @property
    def median_s(self) -> float:
        return self.row.median_s

    @property
    def gflops(self) -> Optional[float]:
        return self.row.gflops


@dataclass(frozen=True)
class ProfileNote:
    """What ``gemmlab ladder --profile`` recorded for one rung."""

    bottleneck: str | None
    signal: str | None
    error: str | None = None
    report: str | None = None  # the .ncu-rep it wrote


def sweep_points(record: RunRecord) -> tuple[SweepPoint, ...]:
    """A sweep run's correct variants as sweep points (a wrong kernel's speed does not count)."""
    if record.kind != "sweep":
        return ()
    return tuple(SweepPoint(str(r.info.get("family") or r.name), dict(r.info.get("params") or {"variant": r.name}), r)
                 for r in record.rows if not r.reference and r.correct is not False)


def _profile_notes(profile: Any) -> dict[str, ProfileNote]:
    out: dict[str, ProfileNote] = {}
    if not isinstance(profile, Mapping):
        return out
    for p in profile.get("profiles") or []:
        if isinstance(p, Mapping) and p.get("rung"):
            out[str(p["rung"])] = ProfileNote(p.get("bottleneck"), p.get("signal"), p.get("error"), p.get("report"))
    return out


def run_types(record: RunRecord) -> tuple[str, str]:
    """(A/B dtype, C dtype) of a run, from its rows' specs; one line when they mix (a run measures
    one ladder: cuBLAS is timed with one pair of types)."""
    found = sorted({(r.spec.dtype, r.spec.out_dtype) for r in record.rows})
    if len(found) > 1:
        listing = ", ".join(f"{a}->{c}" for a, c in found)
        raise InputError(f"{record.source or 'run'}: its rows mix types {listing}; a run measures one ladder")
    return found[0]


@dataclass(frozen=True)
class RunView:
    """One ladder-kind run as the report sees it."""

    record: RunRecord
    sweep: tuple[SweepPoint, ...] = ()
    diagnoses: Mapping[str, Any] | None = None  # {"kernels": [Diagnosis.to_dict(), ...], "source": ...}
    ceilings: "Ceilings | None" = None  # roofline ceilings for this GPU (measured or spec), if known
    data_note: str = ""  # shown as a banner on the report (e.g. "sample data, not a measurement")

    def __post_init__(self) -> None:
        if not self.record.rows:
            raise InputError(f"run {self.record.run_id or self.record.source or '?'}: has no kernel results")
        if self.record.kind == "user":  # your kernel's page is its worklog, every version on one page
            name = (self.record.meta.get("kernel") or {}).get("name", "NAME")
            raise InputError(f"{self.record.source or 'run'} is a run of your kernel {name}; its HTML page is the "
                             f"worklog: gemmlab history {name} --html FILE")
        if self.record.kind not in LADDER_KINDS:
            raise InputError(f"{self.record.source or 'run'} is a {self.record.kind} run; a ladder report shows "
                             f"{', '.join(LADDER_KINDS)} runs")
        dtype, out = run_types(self.record)
        ladder_of(dtype, out)  # a known ladder, or one line saying what is expected
        seen = set()
        for r in self.record.rows:
            key = (r.name, r.shape)
            if key in seen:
                raise InputError(f"{self.record.source or 'run'}: kernel {r.name!r} appears twice at "
                                 f"M,N,K={r.spec.M},{r.spec.N},{r.spec.K}")
            seen.add(key)
        if self.diagnoses is not None:
            if not isinstance(self.diagnoses, Mapping) or not isinstance(self.diagnoses.get("kernels"), list):
                raise InputError("run: diagnoses must be a Diagnosis JSON object with a 'kernels' list")
        object.__setattr__(self, "sweep", tuple(self.sweep) or sweep_points(self.record))

    # --- the record, as the report names it -------------------------------------------------
    @property
    def results(self) -> tuple[Row, ...]:
        return self.record.rows

    @property
    def gpu(self) -> str:
        return self.record.gpu

    @property
    def env(self) -> Mapping[str, Any]:
        env = dict(self.record.env)
        peak = self.peak
        if peak.get("flops") and self.dtype == "fp32":
            env.setdefault("fp32_peak_tflops", peak["flops"] / 1e12)
        return env

    @property
    def kind(self) -> str:
        return self.record.kind

    @property
    def source(self) -> str:
        return self.record.source

    @property
    def run_id(self) -> str | None:
        return None if self.record.run_id is None else str(self.record.run_id)

    @property
    def created_utc(self) -> str:
        return self.record.created_utc

    @property
    def peak(self) -> Mapping[str, Any]:
        p = self.record.meta.get("peak")
        return dict(p) if isinstance(p, Mapping) else {}

    @property
    def command(self) -> str:
        """How the run was made, in one line: the command, shape and timing options."""
        shape = self.record.meta.get("shape") or {}
        opts = self.record.meta.get("options") or {}
        cmd = f"gemmlab {self.kind}"
        if shape:
            cmd += f" --shape {shape.get('M')},{shape.get('N')},{shape.get('K')}"
        timing = opts.get("timing") or {}
        if timing:
            cmd += f" (warm-up {timing.get('warmup_ms')} ms, {timing.get('rep_ms')} ms of runs"
            cmd += ", L2 flushed)" if timing.get("flush_l2", True) else ", L2 not flushed)"
        return cmd

    @property
    def dtype(self) -> str:
        return run_types(self.record)[0]

    @property
    def out_dtype(self) -> str:
        return run_types(self.record)[1]

    @property
    def profile(self) -> dict[str, ProfileNote]:
        """Rung name -> what ``ladder --profile`` recorded for it."""
        return _profile_notes(self.record.meta.get("profile"))

    @property
    def mattered(self) -> tuple[Change, ...]:
        """``ladder --profile``'s "What actually mattered" ranking, recomputed from the rows'
        measurements and the recorded bottlenecks (none for a run that was not profiled)."""
        notes = self.profile
        if not notes:
            return ()
        out: list[Change] = []
        for shape in self.shapes:
            chain = [RungRow(r, (notes.get(r.name) or ProfileNote(None, None)).bottleneck,
                             (notes.get(r.name) or ProfileNote(None, None)).signal)
                     for r in self.ladder(shape)]
            out += what_mattered(chain)
        return tuple(out)

    # --- views the report uses ------------------------------------------------------------
    @property
    def shapes(self) -> list[tuple[int, int, int]]:
        """The problem sizes in this run, in first-seen order."""
        out: list[tuple[int, int, int]] = []
        for r in self.results:
            if r.shape not in out:
                out.append(r.shape)
        return out

    def ladder(self, shape: tuple[int, int, int]) -> list[Row]:
        """The non-reference kernels at ``shape``, in run (rung) order."""
        return [r for r in self.results if r.shape == shape and not r.reference]

    def reference(self, shape: tuple[int, int, int]) -> Row | None:
        """The reference (cuBLAS) row at ``shape``, if the run has one."""
        return self.record.reference_at(shape)

    def pct_of_reference(self, r: Row) -> float | None:
        """% of cuBLAS at the same shape, from the two rows' medians."""
        return self.record.pct_of_reference(r)

    def pct_of_peak(self, r: Row) -> float | None:
        return self.record.pct_of_peak(r)

    def speedup_vs_previous(self, r: Row) -> float | None:
        return self.record.speedup_vs_previous(r)

    def diagnosis_for(self, r: Row) -> Mapping[str, Any] | None:
        """The analyzer's entry for ``r``: its kernel name (up to any '(' of a demangled signature,
        or '<' of template arguments) equals the result's name, its function, or the function of
        the variant it launched."""
        if not self.diagnoses:
            return None
        wanted = {r.name}
        function = str(r.info.get("function") or "")
        if function:
            wanted.add(function)
        launched = r.launched
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
