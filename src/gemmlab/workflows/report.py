"""``gemmlab report`` and ``gemmlab compare``: which runs, what they are, and the pages and tables
made of them, picked by the runs' kind.

- a ladder-kind run (ladder, bench, sweep), or several runs of one GPU: the ladder report
  (``report.content`` → HTML and Markdown), with the analyzer's diagnoses and roofline ceilings;
- lesson runs (of one GPU, or two side by side): the lessons page;
- a shapes run: the shape map page.

``compare`` sets two runs of one kind side by side: two ladder runs (``report.compare``) or two
GPUs' lesson runs (``report.lessons.compare_runs``). Nothing here prints; the commands do.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gemmlab.bench.results import LADDER_KINDS, RunRecord
from gemmlab.errors import InputError, UserError
from gemmlab.fileio import write_atomic
from gemmlab.report.model import RunView
from gemmlab.workflows import report_inputs, runs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReportRequest:
    run: Path
    run_ids: tuple[int, ...] = ()
    out: Path = Path("report.html")
    markdown: Optional[Path] = None
    diagnosis: tuple[Path, ...] = ()
    sweep: Optional[Path] = None
    sweep_run: Optional[int] = None
    ceilings: Optional[Path] = None
    with_plots: bool = True
    note: str = ""
    force: bool = False
    lesson: Optional[str] = None
    vs: Optional[Path] = None
    vs_run: Optional[int] = None
    shape_map: bool = False


@dataclass
class Written:
    files: list[Path] = field(default_factory=list)
    what: str = ""  # where the data came from, in a few words
    warnings: list[str] = field(default_factory=list)


def _target(path: Path, flag: str, force: bool) -> None:
    """Refuse to overwrite without --force; the folder must exist."""
    if path.is_dir():
        raise InputError(f"{flag} {path}: is a directory; expected a file path")
    if path.exists() and not force:
        raise InputError(f"{flag} {path}: file exists; pass --force to replace it")
    if not path.parent.is_dir():
        raise InputError(f"{flag} {path}: folder {path.parent} does not exist")


def check_request(req: ReportRequest) -> None:
    bad = next((i for i in req.run_ids if i < 1), None)
    if bad is not None:
        raise InputError(f"--run {bad}: run ids start at 1 (see `gemmlab runs`)")
    _target(req.out, "--out", req.force)
    if len(req.run_ids) > 1 and (req.shape_map or req.lesson or req.vs):
        raise InputError("--run given more than once puts ladder runs side by side; shape maps and lesson runs are "
                         "reported one run at a time")
    if req.shape_map and req.run_ids:
        raise InputError("--shape-map picks the newest shape-map run; --run picks one by id: give one of them")
    if req.markdown is not None:
        if req.markdown.resolve() == req.out.resolve():
            raise InputError(f"--markdown-out {req.markdown}: the same file as --out")
        _target(req.markdown, "--markdown-out", req.force)
    if req.sweep_run is not None and req.sweep is None:
        raise InputError("--sweep-run picks a run in the --sweep database; give --sweep too")


def _pick(req: ReportRequest) -> tuple[str, list[RunRecord], str]:
    """What to report ("ladder", "lesson", "shapes"), picked by the runs' kind; the records; and how
    they were picked ("" when asked for by id)."""
    if req.shape_map:
        return "shapes", [runs.newest(req.run, "shapes")], ""
    if req.lesson is not None:
        return "lesson", runs.lesson_records(req.run, req.run_ids[0] if req.run_ids else None, req.lesson), ""
    records, how = runs.load_for_report(req.run, req.run_ids)
    kind = records[0].kind
    if kind in LADDER_KINDS:
        return "ladder", records, how
    return kind, records, how


def write(req: ReportRequest) -> Written:
    """Write the report the request asks for; the files written and what they came from."""
    check_request(req)
    kind, records, how = _pick(req)
    if req.vs is not None and kind != "lesson":
        raise InputError("--vs puts lesson runs side by side; RUN is not a lesson run (use `gemmlab compare` for ladders)")
    if kind != "ladder" and req.markdown is not None:
        what = "shape maps" if kind == "shapes" else "lesson runs"
        raise InputError(f"--markdown-out: {what} are reported in HTML only (the JSON of `--out` has every number)")
    if kind == "shapes":
        from gemmlab.report import shape_html

        rec = records[0]
        write_atomic(req.out, shape_html.render(rec, with_plots=req.with_plots, note=req.note, source=rec.source))
        return Written([req.out], f"shape map from {rec.source}")
    if kind == "lesson":
        return _lesson_report(req, records)
    return _ladder_report(req, records, how)


def _lesson_report(req: ReportRequest, runs_a: list[RunRecord]) -> Written:
    from gemmlab.report import lesson_html

    if not runs_a:
        raise InputError(f"{req.run}: no lesson run (run `gemmlab lesson NAME` first)")
    runs_b: list[RunRecord] = []
    if req.vs is not None:
        runs_b = runs.lesson_records(req.vs, req.vs_run, req.lesson or "all", flag="--vs-run")
        if not runs_b:
            raise InputError(f"--vs {req.vs}: not a lesson run")
    write_atomic(req.out, lesson_html.render(runs_a, runs_b, note=req.note))
    return Written([req.out], f"{len(runs_a)} lesson run(s) from {req.run}" + (f", {len(runs_b)} from {req.vs}" if req.vs else ""))


def _with_sweep(views: list[RunView], sweep_view: RunView) -> list[RunView]:
    """The sweep's heatmaps go into the section of the first run of the sweep's ladder."""
    from dataclasses import replace

    i = next((i for i, v in enumerate(views) if v.ladder_kind == sweep_view.ladder_kind), None)
    if i is None:
        raise InputError(f"--sweep: a {sweep_view.ladder_kind.title} sweep, and the report has no run of that ladder")
    views = list(views)
    views[i] = replace(views[i], sweep=views[i].sweep + sweep_view.sweep)
    return views


def _ladder_report(req: ReportRequest, records: list[RunRecord], how: str) -> Written:
    from gemmlab.report import content, html
    from gemmlab.report import markdown as md

    written = Written()
    views = [RunView(r) for r in records]
    gpus = sorted({v.gpu for v in views})
    if len(gpus) > 1:
        raise InputError(f"--run {' --run '.join(map(str, req.run_ids))}: the runs are from {' and '.join(gpus)}; a "
                         "report shows one GPU (put two GPUs side by side with `gemmlab compare`)")
    if req.sweep is not None:
        sweep_view = RunView(runs.load(req.sweep, req.sweep_run, flag="--sweep-run"))
        if not sweep_view.sweep:
            raise InputError(f"--sweep {req.sweep}: run {sweep_view.run_id or ''} is a {sweep_view.kind} run, not a sweep")
        views = _with_sweep(views, sweep_view)
    explicit = list(req.diagnosis)
    diag = report_inputs.load_diagnoses(explicit)
    recorded = [] if explicit else [p for v in views for p in report_inputs.profiled_reports(v)]
    if recorded:
        try:
            diag = report_inputs.load_diagnoses(recorded)
        except UserError as e:  # a report `ladder --profile` left behind: say so, report the rest
            written.warnings.append(f"could not analyse the run's profiles ({e.message}); pass --diagnosis to attach "
                                    "diagnoses")
    gpu = views[0].gpu
    ceil = (report_inputs.ceilings_from_file(req.ceilings, gpu) if req.ceilings is not None
            else report_inputs.ceilings_for(gpu))
    views = [report_inputs.attach(v, diagnoses=diag, ceilings=ceil, data_note=req.note) for v in views]
    rep = content.build(views, with_plots=req.with_plots)
    files: dict[Path, bytes | str] = {req.out: html.render(rep)}
    if req.markdown is not None:
        plot_dir = f"{req.markdown.stem}_files"
        text, plots = md.render(rep, None if not req.with_plots else plot_dir)
        for rel, png in plots.items():
            p = req.markdown.parent / rel
            if p.exists() and not req.force:
                raise InputError(f"--markdown-out {req.markdown}: plot {p} exists; pass --force to replace it")
            files[p] = png
        files[req.markdown] = text
        if plots:
            (req.markdown.parent / plot_dir).mkdir(exist_ok=True)
    for path, data in files.items():
        write_atomic(path, data)
    written.files = [req.out] + ([req.markdown] if req.markdown is not None else [])
    written.what = how or rep.source
    return written


# --- compare -----------------------------------------------------------------------------------

def compare(path_a: Path, path_b: Path, id_a: Optional[int], id_b: Optional[int],
            lesson: Optional[str] = None) -> tuple[str, Any]:
    """Two runs side by side, each read once: ("lesson", [lesson comparisons]) when they are lesson
    runs (or ``lesson`` names which), else ("ladder", (Comparison, RunView A, RunView B))."""
    if lesson is not None:
        return "lesson", _lesson_comparisons(runs.lesson_records(path_a, id_a, lesson, flag="--run-a"),
                                             runs.lesson_records(path_b, id_b, lesson, flag="--run-b"))
    a, b = runs.records(path_a, id_a, "--run-a"), runs.records(path_b, id_b, "--run-b")
    if any(r.kind == "lesson" for r in a + b):
        return "lesson", _lesson_comparisons([r for r in a if r.kind == "lesson"],
                                             [r for r in b if r.kind == "lesson"])
    if len(a) > 1 or len(b) > 1:
        many = path_a if len(a) > 1 else path_b
        raise InputError(f"{many}: holds several runs; compare two ladder runs, or lesson runs with --lesson")
    return "ladder", _ladder_comparison(RunView(a[0]), RunView(b[0]))


def _ladder_comparison(a: RunView, b: RunView) -> tuple[Any, RunView, RunView]:
    from gemmlab.report.compare import compare as compare_views

    if a.source == b.source:
        raise InputError(f"RUN_A and RUN_B are the same run ({a.source}); pick two runs (--run-a/--run-b)")
    return compare_views(a, b), a, b


def _lesson_comparisons(a: list[RunRecord], b: list[RunRecord]) -> list[dict]:
    from gemmlab.report import lessons as L

    if not a or not b:
        raise InputError("RUN_A and RUN_B must both be lesson runs (or both ladder runs)")
    la, lb = L.latest_by_lesson(a), L.latest_by_lesson(b)
    names = [n for n in la if n in lb]
    if not names:
        raise InputError(f"RUN_A ({', '.join(la)}) and RUN_B ({', '.join(lb)}) share no lesson")
    return [L.compare_runs(la[n], lb[n]) for n in names]
