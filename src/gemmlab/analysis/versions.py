"""Your kernel's versions: the runs of one kernel name (kind "user"), grouped by source text.

``gemmlab bench my_sgemm.cu`` stores each run with the file's text and its hash
(``meta.kernel.source_sha256``). A version is one text: a re-run of the same source is the same
version, and every run of it is kept (the version's row is its latest run). Each version is judged
against the one before by ``bench.stats.effect`` — the one judgement of a change in gemmlab — and
only when the two were measured alike (same shape, types, GPU, L2 flushed or not, both correct):
a 2048³ run is not "faster" than a 4096³ one, and a wrong result's speed does not count. Otherwise
the step says why it was not compared.

The edits (version i-1 → i) are then ranked as the ladder's "What actually mattered" is
(``analysis.mattered.what_mattered``, which also words the "why" from the diagnosis change): the
edits that changed the time, largest speed-up first and a slower one last; then the ones within
noise, which did not matter; then the ones that could not be compared.

Pure: run records in (oldest first), a ``History`` out; nothing is read or printed here.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import posixpath
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Mapping, Optional, Sequence

from gemmlab.analysis.mattered import Change, RungRow, what_mattered
from gemmlab.bench.results import Row, RunRecord
from gemmlab.bench.stats import SAME, Effect, Measurement

SHORT_HASH = 8  # hex digits of the source hash shown: 4 billion values, enough to tell a worklog's versions apart
DIFF_CONTEXT = 3  # unchanged lines around each change in a diff (diff -u's default)


def _num(v: Any) -> Optional[float]:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _text(v: Any) -> str:
    return "" if v is None else str(v)


def _mapping(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


def shape_text(shape: tuple[int, int, int]) -> str:
    return "x".join(str(d) for d in shape)


def basename(path: str) -> str:
    """The file name of a path written on Linux or Windows."""
    return posixpath.basename(path.replace("\\", "/"))


# ----------------------------------------------------------------------------- hot lines

@dataclass(frozen=True)
class HotLine:
    """One source line the profiler's samples landed on (``profile.hot_lines`` of a run)."""

    file: str
    line: Optional[int]
    source: str  # the line's text, whitespace collapsed
    share: Optional[float]  # fraction of the kernel's samples, 0..1
    stalls: tuple[tuple[str, Optional[float]], ...] = ()  # (reason, fraction of the line's samples)

    def text(self, main_file: str = "") -> str:
        """``line 23 `B[k*N+col]` 41%, long_scoreboard``; a line of another file names it."""
        where = f"line {self.line}" if self.line is not None else "line ?"
        name = basename(self.file)
        if self.file and name != basename(main_file):
            where = f"{name}:{self.line if self.line is not None else '?'}"
        out = where + (f" `{self.source}`" if self.source else "")
        if self.share is not None:
            out += f" {100 * self.share:.0f}%"
        if self.stalls:
            out += f", {self.stalls[0][0]}"
        return out

    def short(self) -> str:
        """``line 23 41%``: the signal beside a diagnosis in "why it mattered"."""
        where = f"line {self.line}" if self.line is not None else "line ?"
        return where + (f" {100 * self.share:.0f}%" if self.share is not None else "")

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "source": self.source, "share": self.share,
                "top_stalls": [{"reason": r, "share": s} for r, s in self.stalls], "text": self.text()}


def hot_lines(profile: Mapping[str, Any]) -> tuple[HotLine, ...]:
    """The hot lines of a run's ``profile`` entry, read defensively (the record is optional and its
    producer may add fields): a list under ``hot_lines.lines`` (or ``hot_lines`` itself) of
    ``{file, line, source, share, top_stalls: [{reason, share}]}``. Shares are fractions; a list
    with a share above 1 was written in percent and is scaled."""
    hl = profile.get("hot_lines")
    items = hl.get("lines") if isinstance(hl, Mapping) else hl
    if not isinstance(items, (list, tuple)):
        return ()
    items = [d for d in items if isinstance(d, Mapping)]
    shares = [_num(d.get("share")) for d in items]
    scale = 100.0 if any(s is not None and s > 1.0 for s in shares) else 1.0
    out = []
    for d, share in zip(items, shares):
        stalls = []
        for s in d.get("top_stalls") or ():
            if isinstance(s, Mapping) and s.get("reason"):
                v = _num(s.get("share"))
                stalls.append((str(s["reason"]), None if v is None else v / (100.0 if v > 1.0 else 1.0)))
        line = d.get("line")
        out.append(HotLine(_text(d.get("file")), line if isinstance(line, int) and not isinstance(line, bool) else None,
                           " ".join(_text(d.get("source")).split()), None if share is None else share / scale,
                           tuple(stalls)))
    return tuple(out)


# ----------------------------------------------------------------------------- runs and versions

@dataclass(frozen=True)
class Run:
    """One stored run of a version: the record and the user's row in it."""

    record: RunRecord
    row: Row

    @property
    def run_id(self) -> Optional[int]:
        return self.record.run_id

    @property
    def created_utc(self) -> str:
        return self.record.created_utc

    @property
    def gpu(self) -> str:
        return self.record.gpu

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.row.shape

    @property
    def dtype(self) -> str:
        """The A/B type, with C's when it differs ("fp8->bf16")."""
        s = self.row.spec
        return s.dtype if s.out_dtype == s.dtype else f"{s.dtype}->{s.out_dtype}"

    @property
    def flush_l2(self) -> Optional[bool]:
        v = _mapping(_mapping(self.record.meta.get("options")).get("timing")).get("flush_l2")
        return v if isinstance(v, bool) else None

    @property
    def reference(self) -> Optional[Row]:
        return self.record.reference_at(self.row.shape)

    @property
    def pct_of_cublas(self) -> Optional[float]:
        return self.record.pct_of_reference(self.row)

    @property
    def correct(self) -> Optional[bool]:
        return self.row.correct

    def conditions(self) -> dict[str, Any]:
        """What must match for two runs' times to be compared: a different shape, type, GPU or a warm
        L2 changes the time by more than any edit could be judged against."""
        return {"shape": self.shape, "types": self.dtype, "GPU": self.gpu, "L2 flush": self.flush_l2}

    def to_dict(self) -> dict:
        ref = self.reference
        return {"run_id": self.run_id, "created_utc": self.created_utc, "gpu": self.gpu,
                "shape": dict(zip("MNK", self.shape)), "dtype": self.dtype, "flush_l2": self.flush_l2,
                "median_s": self.row.median_s, "iqr_s": self.row.iqr_s, "n_samples": self.row.measurement.n,
                "noisy": self.row.noisy, "gflops": self.row.gflops, "pct_of_cublas": self.pct_of_cublas,
                "cublas_median_s": None if ref is None else ref.median_s, "correct": self.correct,
                "check_reason": None if self.row.check is None else self.row.check.reason}


def user_row(record: RunRecord) -> Optional[Row]:
    """The user's kernel's row of a run: its first row that is not the reference."""
    return next((r for r in record.rows if not r.reference), None)


def source_key(record: RunRecord) -> str:
    """The version key: the recorded hash of the source text, else the hash of the text, else the run."""
    k = _mapping(record.meta.get("kernel"))
    sha = k.get("source_sha256")
    if isinstance(sha, str) and sha:
        return sha
    if isinstance(k.get("source"), str):
        return hashlib.sha256(k["source"].encode("utf-8")).hexdigest()
    return f"run-{record.run_id}"


@dataclass(frozen=True)
class Version:
    """One source text of the kernel and every run of it, oldest first."""

    number: int
    sha256: str
    runs: tuple[Run, ...]

    @property
    def label(self) -> str:
        return f"v{self.number}"

    @property
    def short(self) -> str:
        return self.sha256[:SHORT_HASH]

    @property
    def latest(self) -> Run:
        return self.runs[-1]

    @property
    def _meta(self) -> Mapping[str, Any]:
        return self.latest.record.meta

    @property
    def kernel(self) -> Mapping[str, Any]:
        return _mapping(self._meta.get("kernel"))

    @property
    def source(self) -> Optional[str]:
        s = self.kernel.get("source")
        return s if isinstance(s, str) else None

    @property
    def file(self) -> str:
        return _text(self.kernel.get("file"))

    @property
    def function(self) -> str:
        return _text(self.kernel.get("function"))

    @property
    def profile(self) -> Mapping[str, Any]:
        """The latest profiled run's ``profile`` entry ({} when no run of this version was profiled)."""
        for run in reversed(self.runs):
            p = run.record.meta.get("profile")
            if isinstance(p, Mapping) and p:
                return p
        return {}

    @property
    def diagnosis(self) -> Mapping[str, Any]:
        return _mapping(self.profile.get("diagnosis"))

    @property
    def category(self) -> Optional[str]:
        c = self.diagnosis.get("category")
        return str(c) if c else None

    @property
    def diagnosis_text(self) -> Optional[str]:
        """``uncoalesced_global_loads (high)``: what the profiler showed, in one phrase."""
        if self.category is None:
            return None
        conf = self.diagnosis.get("confidence")
        return self.category + (f" ({conf})" if conf else "")

    @property
    def finding_line(self) -> Optional[str]:
        f = self.profile.get("finding_line")
        return str(f) if f else None

    @property
    def hot_lines(self) -> tuple[HotLine, ...]:
        return hot_lines(self.profile)

    @property
    def top_hot_line(self) -> Optional[str]:
        lines = self.hot_lines
        return lines[0].text(self.file) if lines else None

    @property
    def placement(self) -> Optional[str]:
        p = self._meta.get("placement")
        # "where" is the short form (between two rungs); "text" adds what the next rung changes
        text = (p.get("where") or p.get("text")) if isinstance(p, Mapping) else p
        return str(text) if text else None

    def to_dict(self) -> dict:
        run = self.latest
        return {"version": self.label, "number": self.number, "sha256": self.sha256, "short": self.short,
                "file": self.file, "function": self.function, "entry": self.kernel.get("entry"),
                "first_utc": self.runs[0].created_utc, "n_runs": len(self.runs), **run.to_dict(),
                "diagnosis": dict(self.diagnosis) or None, "finding_line": self.finding_line,
                "hot_lines": [h.to_dict() for h in self.hot_lines], "top_hot_line": self.top_hot_line,
                "placement": self.placement, "runs": [r.to_dict() for r in self.runs], "source": self.source}


def group_versions(records: Sequence[RunRecord]) -> tuple[Version, ...]:
    """Runs grouped by source text, versions in the order their text was first seen; records
    without a row of the user's kernel are skipped."""
    groups: dict[str, list[Run]] = {}
    for rec in records:
        row = user_row(rec)
        if row is not None:
            groups.setdefault(source_key(rec), []).append(Run(rec, row))
    return tuple(Version(i + 1, sha, tuple(runs)) for i, (sha, runs) in enumerate(groups.items()))


# ----------------------------------------------------------------------------- steps (edits)

@dataclass(frozen=True)
class Step:
    """One edit: version ``before`` → ``after``; its measured effect, or why it was not compared."""

    before: Version
    after: Version
    diff: tuple[str, ...]  # unified diff lines (no line ends); () when a source was not recorded
    before_run: Optional[Run] = None  # the run of ``before`` compared with ``after``'s latest
    change: Optional[Change] = None  # the measured effect and "why", as the ladder's ranking words it
    why_not: str = ""  # why the two were not compared ("" when they were)

    @property
    def edit(self) -> str:
        return f"{self.before.label} -> {self.after.label}"

    @property
    def compared(self) -> bool:
        return self.change is not None

    @property
    def effect(self) -> Optional[Effect]:
        return None if self.change is None else self.change.effect

    @property
    def added(self) -> int:
        return sum(1 for s in self.diff if s.startswith("+") and not s.startswith("+++"))

    @property
    def removed(self) -> int:
        return sum(1 for s in self.diff if s.startswith("-") and not s.startswith("---"))

    @property
    def lines_changed(self) -> str:
        if not self.diff:
            return "source not recorded" if (self.before.source is None or self.after.source is None) else "none"
        return f"+{self.added} -{self.removed}"

    def to_dict(self) -> dict:
        e = self.effect
        return {"edit": self.edit, "before": self.before.label, "after": self.after.label, "compared": self.compared,
                "why_not": self.why_not or None,
                "before_run_id": None if self.before_run is None else self.before_run.run_id,
                "after_run_id": self.after.latest.run_id, "effect": None if e is None else e.to_dict(),
                "speedup": None if e is None else e.speedup, "verdict": None if e is None else e.verdict,
                "why": None if self.change is None else self.change.why, "lines_added": self.added,
                "lines_removed": self.removed, "diff": "\n".join(self.diff)}


def source_diff(before: Version, after: Version, context: int = DIFF_CONTEXT) -> tuple[str, ...]:
    """The unified diff of the two versions' source texts (() when either was not recorded)."""
    a, b = before.source, after.source
    if a is None or b is None:
        return ()

    def name(v: Version) -> str:
        return f"{v.label} {v.short}/{basename(v.file) or 'source'}"

    return tuple(difflib.unified_diff(a.splitlines(), b.splitlines(), name(before), name(after), n=context,
                                      lineterm=""))


def _differs(a: Run, b: Run, a_label: str, b_label: str) -> str:
    """Why two runs cannot be compared: the conditions that differ, each side's value."""
    def show(key: str, v: Any) -> str:
        if key == "shape":
            return shape_text(v)
        if key == "L2 flush":
            return {True: "L2 flushed", False: "L2 not flushed", None: "L2 flush not recorded"}[v]
        return str(v)

    ca, cb = a.conditions(), b.conditions()
    parts = [f"{show(k, cb[k])} vs {show(k, ca[k])}" if k == "L2 flush" else f"{k} {show(k, cb[k])} vs {show(k, ca[k])}"
             for k in ca if ca[k] != cb[k]]
    return f"measured differently ({b_label} vs {a_label}: {'; '.join(parts)})"


def _rung(v: Version, run: Run) -> RungRow:
    """The run as the ladder's ranking sees a rung: named by its version, its diagnosis and hot line."""
    m = run.row.measurement
    named = Measurement(m.spec.with_kernel(v.label, dict(m.spec.params)), m.samples_s, m.timing)
    lines = v.hot_lines
    return RungRow(Row(named, run.row.check), v.category, lines[0].short() if lines else None)


def step(before: Version, after: Version) -> Step:
    """Judge one edit: ``after``'s latest run against ``before``'s latest run measured alike."""
    diff = source_diff(before, after)
    run = after.latest
    alike = [r for r in before.runs if r.conditions() == run.conditions()]
    if not alike:
        return Step(before, after, diff, why_not=_differs(before.latest, run, before.label, after.label))
    base = alike[-1]
    wrong = [v.label for v, r in ((before, base), (after, run)) if r.correct is False]
    if wrong:
        return Step(before, after, diff, base, why_not=f"{' and '.join(wrong)} failed the correctness check: "
                    "a wrong result's speed does not count")
    change = what_mattered([_rung(before, base), _rung(after, run)])[0]
    return Step(before, after, diff, base, change)


# ----------------------------------------------------------------------------- the history

@dataclass(frozen=True)
class History:
    """One kernel's versions, the edits between them, and which edits mattered."""

    name: str
    versions: tuple[Version, ...]
    steps: tuple[Step, ...]  # steps[i] is versions[i] -> versions[i + 1]

    @property
    def n_runs(self) -> int:
        return sum(len(v.runs) for v in self.versions)

    def step_into(self, v: Version) -> Optional[Step]:
        """The edit that made ``v`` (None for the first version)."""
        return self.steps[v.number - 2] if v.number > 1 else None

    @property
    def mattered(self) -> tuple[Change, ...]:
        """The compared edits that changed the time (faster or slower), ranked as the ladder's
        "What actually mattered": largest speed-up first, a slower edit last."""
        changes = [s.change for s in self.steps if s.change is not None and s.change.effect.verdict != SAME]
        changes.sort(key=lambda c: -c.speedup)
        return tuple(replace(c, rank=i + 1) for i, c in enumerate(changes))

    @property
    def within_noise(self) -> tuple[Change, ...]:
        """The compared edits whose effect is "same": they did not matter (unranked, rank 0)."""
        return tuple(replace(s.change, rank=0) for s in self.steps
                     if s.change is not None and s.change.effect.verdict == SAME)

    @property
    def not_compared(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.change is None)

    @property
    def gpus(self) -> list[str]:
        return list(dict.fromkeys(r.gpu for v in self.versions for r in v.runs))

    def to_dict(self) -> dict:
        return {"kernel": self.name, "n_versions": len(self.versions), "n_runs": self.n_runs,
                "versions": [v.to_dict() for v in self.versions], "steps": [s.to_dict() for s in self.steps],
                "mattered": [c.to_dict() for c in self.mattered],
                "within_noise": [c.to_dict() for c in self.within_noise],
                "not_compared": [{"edit": s.edit, "why_not": s.why_not} for s in self.not_compared]}


def history(name: str, records: Sequence[RunRecord]) -> History:
    """The history of kernel ``name`` from its runs, oldest first."""
    versions = group_versions(records)
    return History(name, versions, tuple(step(a, b) for a, b in pairwise(versions)))
