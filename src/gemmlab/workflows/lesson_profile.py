"""``gemmlab lesson NAME --profile``: every variant under ncu at one point, the analyzer's diagnosis
of each, and the "What actually mattered" ranking (``report.mattered``) over the variants in order.

Like ``ladder_profile``: one ``profile_run.run_profile`` per variant into a fresh folder (no report is
overwritten), a variant that fails to profile keeps its error and the others go on; the tables are
built by pure functions from the lesson's result rows and the profiles.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from gemmlab.errors import UserError
from gemmlab.profile import collect, targets
from gemmlab.analysis.mattered import ladder_table, what_mattered
from gemmlab.bench.results import RunRecord
from gemmlab.report.mattered import render_markdown
from gemmlab.workflows import profile_run
from gemmlab.workflows.ladder_profile import RungProfile, rung_row

TARGET_MODULE = "gemmlab.lessons.target"
WARMUP = 3


def variant_target(lesson: Any, variant: str, point: Mapping[str, Any], python: str = sys.executable) -> targets.Target:
    kernels = lesson.variant(variant).kernels
    app = (python, "-m", TARGET_MODULE, "--lesson", lesson.name, "--variant", variant,
           "--size", str(point["size"]), "--value", str(point["value"]), "--warmup", str(WARMUP))
    label = f"{lesson.name}_{variant}_{point['param']}{point['value']}"
    # a variant may launch several kernels (two_kernels) or a library's (cublas): profile what runs
    # inside the NVTX range, one launch per kernel it is known to run
    return targets.Target(app, label, nvtx_range=targets.NVTX_RANGE, launch_count=max(1, len(kernels)))


def fresh_dir(lesson: str, base: Path = targets.DEFAULT_DIR) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    d, n = base / f"lesson-{lesson}-{stamp}", 1
    while d.exists():
        n += 1
        d = base / f"lesson-{lesson}-{stamp}-{n}"
    return d


def profile_variants(lesson: Any, point: Mapping[str, Any], *, ncu: str, full: bool = False,
                     out_dir: Optional[Path] = None, on_variant: Optional[Callable[[int, str], None]] = None) -> list[RungProfile]:
    out_dir = out_dir or fresh_dir(lesson.name)
    collection = collect.full_collection() if full else collect.default_collection()
    out = []
    for i, v in enumerate(lesson.variants):
        if on_variant is not None:
            on_variant(i, v.name)
        try:
            target = variant_target(lesson, v.name, point)
            path = targets.report_path(None, target.label, full, out_dir)
            out.append(RungProfile(v.name, profile_run.run_profile(target, collection, ncu=ncu, output=path, overwrite=False)))
        except UserError as e:
            out.append(RungProfile(v.name, error=e.message))
    return out


def build_report(record: RunRecord, point: Mapping[str, Any], profiles: Sequence[RungProfile]) -> dict:
    """The variants at ``point`` in the lesson's order as a chain: table + what mattered (pure)."""
    by = {p.rung: p for p in profiles}
    chain = [rung_row(r, by.get(r.name)) for r in record.rows if r.extra.get("point") == dict(point)]
    table, changes = ladder_table(chain), what_mattered(chain)
    diagnoses = {p.rung: _diagnoses(p) for p in profiles}
    return {"point": dict(point), "table": table, "mattered": changes, "profiles": list(profiles),
            "diagnoses": diagnoses, "markdown": render_markdown(table, changes)}


def _diagnoses(p: RungProfile) -> list[str]:
    """Each profiled launch's primary diagnosis and summary, one line each."""
    if p.result is None:
        return [f"not profiled: {p.error}"]
    out = []
    for launch, d in zip(p.result.launches, p.result.diagnoses):
        prim = getattr(d, "primary", None)
        cat = profile_run.primary_category(d) or "no primary bottleneck"
        summary = getattr(prim, "summary", "") if prim is not None else ""
        out.append(f"{getattr(launch, 'name', '?')}: {cat.replace('_', ' ')}" + (f" — {summary}" if summary else ""))
    return out or ["no kernel profiled"]


def report_dict(report: Mapping[str, Any]) -> dict:
    return {"point": report["point"], "table": [r.to_dict() for r in report["table"]],
            "mattered": [c.to_dict() for c in report["mattered"]],
            "profiles": [p.to_dict() for p in report["profiles"]],
            "diagnoses": report["diagnoses"], "markdown": report["markdown"]}
