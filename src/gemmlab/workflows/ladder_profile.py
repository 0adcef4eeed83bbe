"""``gemmlab ladder --profile``: profile every measured rung, then the seed article's two tables.

The ladder command measures the rungs (a ``RunRecord``); with ``--profile`` it calls

    profiles = ladder_profile.profile_rungs([r.name for r in rungs], (M, N, K), ncu=find_ncu(None))
    report = ladder_profile.build_report(record, profiles)
    record = ladder_profile.with_profile(record, report)   # kept with the run

``profile_rungs`` runs ``gemmlab profile RUNG`` for each rung (default collection, or --set full),
into a fresh folder so no earlier report is overwritten; a rung that fails to profile keeps its
error and the others go on. ``build_report`` is pure: timings from the harness, the bottleneck
from the analyzer's primary diagnosis, the signal from the profiled metrics.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from gemmlab.errors import UserError
from gemmlab.profile import collect, targets
from gemmlab.analysis.mattered import RungRow, ladder_table, profiler_signal, what_mattered
from gemmlab.bench.results import Row, RunRecord
from gemmlab.report.mattered import render_markdown
from gemmlab.workflows import profile_run


@dataclass
class RungProfile:
    rung: str
    result: Optional[profile_run.ProfileResult] = None
    error: Optional[str] = None

    @property
    def bottleneck(self) -> Optional[str]:
        if self.result is None or not self.result.diagnoses:
            return None
        return primary_label(self.result.diagnoses[-1])

    @property
    def signal(self) -> Optional[str]:
        if self.result is None or not self.result.launches:
            return None
        return profiler_signal(self.result.launches[-1]) or None

    def to_dict(self) -> dict:
        return {"rung": self.rung, "error": self.error, "bottleneck": self.bottleneck, "signal": self.signal,
                "passes": None if self.result is None else self.result.passes,
                "wall_s": None if self.result is None else self.result.wall_s,
                "report": None if self.result is None else str(self.result.report)}


def primary_label(diagnosis: Any) -> Optional[str]:
    """The analyzer's primary category in words: ``uncoalesced_global_loads`` → ``uncoalesced global loads``."""
    cat = profile_run.primary_category(diagnosis)
    return None if cat is None else cat.replace("_", " ")


def fresh_dir(base: Path = targets.DEFAULT_DIR, now: Callable[[], float] = time.time, prefix: str = "ladder") -> Path:
    """``gemmlab-profiles/<prefix>-YYYYmmdd-HHMMSS[-n]``: a folder no earlier run wrote."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now()))
    d = base / f"{prefix}-{stamp}"
    n = 1
    while d.exists():
        n += 1
        d = base / f"{prefix}-{stamp}-{n}"
    return d


def profile_rungs(rungs: Sequence[str], shape: tuple[int, int, int], *, ncu: str, full: bool = False,
                  warmup: int = targets.DEFAULT_WARMUP, out_dir: Optional[Path] = None,
                  timeout_s: float = profile_run.DEFAULT_TIMEOUT_S,
                  on_rung: Optional[Callable[[int, str], None]] = None) -> list[RungProfile]:
    out_dir = out_dir or fresh_dir()
    collection = collect.full_collection() if full else collect.default_collection()
    out = []
    for i, rung in enumerate(rungs):
        if on_rung is not None:
            on_rung(i, rung)
        try:
            target = targets.rung_target(rung, shape, warmup)
            path = targets.report_path(None, target.label, full, out_dir)
            overwrite = targets.may_overwrite(path, force=False, isatty=False, confirm=lambda q: False)
            out.append(RungProfile(rung, profile_run.run_profile(target, collection, ncu=ncu, output=path,
                                                             overwrite=overwrite, timeout_s=timeout_s)))
        except UserError as e:  # one rung's failure (crash, no match, ...) is reported; the rest go on
            out.append(RungProfile(rung, error=e.message))
    return out


def rung_row(row: Row, profile: Optional[RungProfile]) -> RungRow:
    """A measured rung plus what profiling it said."""
    return RungRow(row, None if profile is None else profile.bottleneck,
                   None if profile is None else profile.signal)


def build_report(record: RunRecord, profiles: Sequence[RungProfile]) -> dict:
    """The two tables from the ladder's rows (the cuBLAS reference is not a rung) and the profiles.
    One ladder per report (its ``dtype``), so the ranking never chains one ladder's rungs to another's."""
    by_rung = {p.rung: p for p in profiles}
    chain = [rung_row(r, by_rung.get(r.name)) for r in record.rows if not r.reference]
    table = ladder_table(chain)
    changes = what_mattered(chain)
    return {"table": table, "mattered": changes, "profiles": profiles, "dtype": record.meta.get("dtype") or "fp32",
            "markdown": render_markdown(table, changes)}


def with_profile(record: RunRecord, report: Mapping[str, Any]) -> RunRecord:
    """The run with what ``--profile`` found kept in it (``meta["profile"]``)."""
    return replace(record, meta={**record.meta, "profile": report_dict(report)})


def report_dict(report: Mapping[str, Any]) -> dict:
    """JSON-ready form of ``build_report``'s result (for the ladder's --json / --out / store meta)."""
    return {"dtype": report.get("dtype", "fp32"),
            "table": [r.to_dict() for r in report["table"]],
            "mattered": [c.to_dict() for c in report["mattered"]],
            "profiles": [p.to_dict() for p in report["profiles"]],
            "markdown": report["markdown"]}
