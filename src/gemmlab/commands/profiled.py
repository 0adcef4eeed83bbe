"""``ladder --profile`` and ``lesson --profile``: profile every rung (variant) under ncu with a
progress bar, then print the seed article's two tables. The measuring commands call these; the
work is in ``workflows.ladder_profile`` and ``workflows.lesson_profile``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from gemmlab.bench.results import RunRecord
from gemmlab.output import console, err_console, print_json, print_table, warn
from gemmlab.report.mattered import MATTERED_COLUMNS, mattered_rows

LADDER_PROFILE_COLUMNS = ["Version", "Time (ms)", "GFLOP/s", "Speedup vs previous", "Profiler signal", "Main bottleneck"]


def profile_ladder_record(record: RunRecord, ncu: str, full: bool = False) -> dict:
    """Profile every rung of a ladder run (not cuBLAS), then build the two tables."""
    from rich.progress import Progress

    from gemmlab.workflows import ladder_profile

    rungs = [r.name for r in record.rows if not r.reference]
    shape = record.meta["shape"]
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("ncu", total=len(rungs))
        profiles = ladder_profile.profile_rungs(rungs, (shape["M"], shape["N"], shape["K"]), ncu=ncu, full=full,
                                                on_rung=lambda i, r: bar.update(task, completed=i, description=f"ncu: {r}"))
        bar.update(task, completed=len(rungs))
    return ladder_profile.build_report(record, profiles)


def _x(v: Any) -> Any:
    return None if v is None else f"{v:.2f}x"


def show_ladder_profile(report: Mapping[str, Any], as_json: bool) -> None:
    """Print what ``ladder_profile.build_report`` made: the ladder table, then what mattered."""
    if as_json:
        from gemmlab.workflows.ladder_profile import report_dict

        print_json(report_dict(report))
        return
    from gemmlab.report.ladders import ladder_of

    print_table(LADDER_PROFILE_COLUMNS,
                [[r.version, f"{r.time_s * 1e3:.4f}", None if r.gflops is None else f"{r.gflops:.1f}",
                  _x(r.speedup_vs_previous), r.signal, r.bottleneck] for r in report["table"]],
                title=ladder_of(report.get("dtype") or "fp32").name + ", profiled")
    print_table(MATTERED_COLUMNS, mattered_rows(report["mattered"]), title="What actually mattered")
    for p in report["profiles"]:
        if p.error:
            warn(f"{p.rung}: not profiled: {p.error}")


def profile_lesson_record(les: Any, record: RunRecord, ncu: str) -> dict:
    """Profile every variant of a lesson at its default point (else the first measured one)."""
    from rich.progress import Progress

    from gemmlab.workflows import lesson_profile

    pts = [r.extra.get("point") for r in record.rows]
    want = les.default_point().to_dict()
    point = want if want in pts else pts[0]
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("ncu", total=len(les.variants))
        profiles = lesson_profile.profile_variants(
            les, point, ncu=ncu, on_variant=lambda i, v: bar.update(task, completed=i, description=f"ncu: {v}"))
    return lesson_profile.build_report(record, point, profiles)


def show_lesson_profile(report: Mapping[str, Any]) -> None:
    from gemmlab.lessons.verdict import point_label

    print_table(["Variant", "Time (ms)", "Speedup vs previous", "Profiler signal", "Main bottleneck"],
                [[r.version, f"{r.time_s * 1e3:.4f}", _x(r.speedup_vs_previous), r.signal, r.bottleneck]
                 for r in report["table"]], title=f"Profiled at {point_label(report['point'])}")
    for variant, lines in report["diagnoses"].items():
        for line in lines:
            console.print(f"{variant}: {line}", highlight=False, soft_wrap=True, markup=False)
    print_table(MATTERED_COLUMNS, mattered_rows(report["mattered"]), title="What actually mattered")
    for p in report["profiles"]:
        if p.error:
            warn(f"{p.rung}: not profiled: {p.error}")


HOT_COLUMNS = ["Rank", "Line", "Share", "Samples", "Top stalls", "Source"]


def show_hot_lines(profile: Mapping[str, Any]) -> None:
    """A user kernel's profile (``workflows.user_profile.summarize``): the diagnosis, then the hot
    source lines with their stall reasons, the lines with excess sectors or wavefronts, and where
    the report and its annotated-source page are."""
    if not profile:
        return
    from gemmlab.output import csv_active

    out = err_console if csv_active() else console  # with --csv, stdout holds the CSV alone
    if profile.get("hot_lines_error"):
        warn(profile["hot_lines_error"])
    hot = profile.get("hot_lines") or {}
    if hot.get("no_line_info"):
        out.print(f"Hot source lines: {hot['no_line_info']}", highlight=False, soft_wrap=True, markup=False)
    elif hot.get("lines"):
        rows = []
        for ln in hot["lines"]:
            stalls = ", ".join(f"{s.get('label') or s.get('reason')} {100 * s.get('share', 0):.0f}%"
                               for s in ln.get("top_stalls") or [])
            rows.append([ln.get("rank"), f"{Path(str(ln.get('file'))).name}:{ln.get('line')}",
                         f"{100 * float(ln.get('share') or 0):.1f}%", ln.get("samples"), stalls, ln.get("source") or ""])
        print_table(HOT_COLUMNS, rows, title=f"Hot source lines of {hot.get('name')} (share of {hot.get('ranked_by')})")
        for key in ("global_excess", "shared_excess"):
            h = hot.get(key)
            if h:
                out.print(f"{h['what']}: {100 * h['share']:.0f}% from line {h['line']} of "
                              f"{Path(str(h['file'])).name} ({h['amount']:,} of {h['total']:,})",
                              highlight=False, soft_wrap=True, markup=False)
    if profile.get("finding_line"):
        out.print(f"finding: {profile['finding_line']}", highlight=False, soft_wrap=True, markup=False)
    where = [f"report: {profile.get('report')}"]
    if profile.get("lines_html"):
        where.append(f"annotated source: {profile['lines_html']}")
    out.print("   ".join(where), highlight=False, soft_wrap=True, markup=False)
