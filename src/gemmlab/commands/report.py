"""gemmlab report / compare: a run as an HTML page (and Markdown), two runs side by side."""

from __future__ import annotations

from pathlib import Path

from gemmlab.fileio import write_atomic
from typing import Annotated, Optional

import typer

from gemmlab.errors import InputError, UserError
from gemmlab.output import console, print_json, print_table, warn

RunArg = Annotated[
    Path,
    typer.Argument(metavar="RUN", help="A run JSON file (gemmlab ladder/bench/sweep --out) or a results database."),
]


def _target(path: Path, flag: str, force: bool) -> None:
    """Refuse to overwrite without --force; the folder must exist."""
    if path.is_dir():
        raise InputError(f"{flag} {path}: is a directory; expected a file path")
    if path.exists() and not force:
        raise InputError(f"{flag} {path}: file exists; pass --force to replace it")
    if not path.parent.is_dir():
        raise InputError(f"{flag} {path}: folder {path.parent} does not exist")


def _write(path: Path, data: bytes) -> None:
    """Write next to the target, then rename: a failed write never leaves half a file."""
    write_atomic(path, data)


def _profile_diagnoses(views, explicit: list[Path]) -> list[Path]:
    """The .ncu-rep files `ladder --profile` recorded for these runs, unless the user gave --diagnosis."""
    from gemmlab.report import sources

    if explicit:
        return []
    return [p for v in views for p in sources.profiled_reports(v)]


def _with_sweep(views: list, sweep_view) -> list:
    """The sweep's heatmaps go into the section of the first run of the sweep's ladder."""
    from dataclasses import replace

    i = next((i for i, v in enumerate(views) if v.ladder_kind == sweep_view.ladder_kind), None)
    if i is None:
        raise InputError(f"--sweep: a {sweep_view.ladder_kind.title} sweep, and the report has no run of that ladder")
    views = list(views)
    views[i] = replace(views[i], sweep=views[i].sweep + sweep_view.sweep)
    return views


def report(
    run: RunArg,
    run_id: Annotated[
        Optional[list[int]],
        typer.Option("--run", help="Run id in the database, repeatable: one section per run (default: the newest run, "
                     "and the newest ladder run of the other ladder (FP32 / BF16) on the same GPU)."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="HTML file to write.")] = Path("report.html"),
    markdown: Annotated[
        Optional[Path], typer.Option("--markdown", help="Also write Markdown here; plots go to <name>_files/.")
    ] = None,
    diagnosis: Annotated[
        Optional[list[Path]],
        typer.Option("--diagnosis", help="gemmlab analyze --json output, or an ncu export to analyse (repeatable)."),
    ] = None,
    sweep: Annotated[
        Optional[Path], typer.Option("--sweep", help="Add the heatmaps of a sweep run (JSON file or database).")
    ] = None,
    sweep_run: Annotated[Optional[int], typer.Option("--sweep-run", help="Run id of --sweep in its database.")] = None,
    ceilings: Annotated[
        Optional[Path],
        typer.Option("--ceilings", help="Roofline ceilings: gemmlab ceilings --measure --json output or a ceilings store "
                     "(default: the stored measurement for this GPU, else its spec sheet)."),
    ] = None,
    no_plots: Annotated[bool, typer.Option("--no-plots", help="Tables and cards only.")] = False,
    note: Annotated[Optional[str], typer.Option("--note", help="A line shown as a banner at the top (what the data is).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace existing output files.")] = False,
    lesson: Annotated[Optional[str], typer.Option("--lesson", help="Lesson runs: NAME (its newest run) or 'all' (the newest of each).")] = None,
    vs: Annotated[Optional[Path], typer.Option("--vs", help="Lesson runs of a second GPU (database or JSON), shown side by side.")] = None,
    vs_run: Annotated[Optional[int], typer.Option("--vs-run", help="Run id in the --vs database.")] = None,
    shape_map: Annotated[bool, typer.Option("--shape-map", help="The newest shape-map run (gemmlab shapes) in the database.")] = False,
) -> None:
    """Write one self-contained HTML page for a run (or several runs of one GPU, one section each: the
    SGEMM ladder and the BF16 tensor-core ladder apart): ladder tables, plots, one card per kernel (or, for
    lesson runs, the article's figures beside one or two GPUs' measurements)."""
    from gemmlab.report import content, html, sources
    from gemmlab.report import markdown as md

    run_ids = list(run_id or [])
    bad = next((i for i in run_ids if i < 1), None)
    if bad is not None:
        raise InputError(f"--run {bad}: run ids start at 1 (see `gemmlab runs`)")
    _target(out, "--out", force)
    one = run_ids[0] if len(run_ids) == 1 else None
    if len(run_ids) < 2 and _shapes_report(run, one, shape_map, out, note, no_plots, markdown):
        return
    if len(run_ids) < 2 and _lesson_report(run, one, lesson, vs, vs_run, out, note):
        return
    if len(run_ids) > 1 and (shape_map or lesson or vs):
        raise InputError("--run given more than once puts ladder runs side by side; shape maps and lesson runs are "
                         "reported one run at a time")
    plot_dir = None
    if markdown is not None:
        if markdown.resolve() == out.resolve():
            raise InputError(f"--markdown {markdown}: the same file as --out")
        _target(markdown, "--markdown", force)
        plot_dir = f"{markdown.stem}_files"
    views, picked = sources.load_runs(run, run_ids)
    gpus = sorted({v.gpu for v in views})
    if len(gpus) > 1:
        raise InputError(f"--run {' --run '.join(map(str, run_ids))}: the runs are from {' and '.join(gpus)}; a report "
                         "shows one GPU (put two GPUs side by side with `gemmlab compare`)")
    if sweep is not None:
        sweep_view = sources.load_run(sweep, sweep_run, flag="--sweep-run")
        if not sweep_view.sweep:
            raise InputError(f"--sweep {sweep}: run {sweep_view.run_id or ''} is a {sweep_view.kind} run, not a sweep")
        views = _with_sweep(views, sweep_view)
    elif sweep_run is not None:
        raise InputError("--sweep-run picks a run in the --sweep database; give --sweep too")
    explicit = list(diagnosis or [])
    diag = sources.load_diagnoses(explicit)
    recorded = _profile_diagnoses(views, explicit)
    if recorded:
        try:
            diag = sources.load_diagnoses(recorded)
        except UserError as e:  # a report `ladder --profile` left behind: say so, report the rest
            warn(f"could not analyse the run's profiles ({e.message}); pass --diagnosis to attach diagnoses")
    gpu = views[0].gpu
    ceil = sources.ceilings_from_file(ceilings, gpu) if ceilings is not None else sources.ceilings_for(gpu)
    views = [sources.attach(v, diagnoses=diag, ceilings=ceil, data_note=note or "") for v in views]
    rep = content.build(views, with_plots=not no_plots)

    files: dict[Path, bytes] = {out: html.render(rep).encode("utf-8")}
    if markdown is not None:
        text, plots = md.render(rep, None if no_plots else plot_dir)
        for rel, png in plots.items():
            p = markdown.parent / rel
            if p.exists() and not force:
                raise InputError(f"--markdown {markdown}: plot {p} exists; pass --force to replace it")
            files[p] = png
        files[markdown] = text.encode("utf-8")
        if plots:
            (markdown.parent / plot_dir).mkdir(exist_ok=True)
    for path, data in files.items():
        _write(path, data)
    console.print(f"wrote {out}" + (f" and {markdown}" if markdown else "") + f" ({picked or rep.source})",
                  highlight=False, soft_wrap=True)


def _shapes_report(run: Path, run_id: Optional[int], shape_map: bool, out: Path, note: Optional[str], no_plots: bool,
                   markdown: Optional[Path]) -> bool:
    """Write the shape-map page when the arguments pick a `gemmlab shapes` run; False otherwise."""
    from gemmlab.report import shape_html
    from gemmlab.report.shape_sources import shapes_run

    picked = shapes_run(run, run_id, newest_shapes=shape_map)
    if picked is None:
        return False
    result, source = picked
    if markdown is not None:
        raise InputError("--markdown: shape maps are reported in HTML only (the JSON of `gemmlab shapes --out` has every number)")
    _write(out, shape_html.render(result, with_plots=not no_plots, note=note or "", source=source).encode("utf-8"))
    console.print(f"wrote {out} (shape map from {source})", highlight=False, soft_wrap=True)
    return True


def _lesson_report(run: Path, run_id: Optional[int], lesson: Optional[str], vs: Optional[Path], vs_run: Optional[int],
                   out: Path, note: Optional[str]) -> bool:
    """Write the lesson page when the arguments pick lesson runs; False when they pick a ladder run."""
    from gemmlab.report import lesson_html
    from gemmlab.report.lesson_sources import lesson_runs

    runs_a = lesson_runs(run, run_id, lesson)
    if runs_a is None:
        if vs is not None:
            raise InputError("--vs puts lesson runs side by side; RUN is not a lesson run (use `gemmlab compare` for ladders)")
        return False
    runs_b = lesson_runs(vs, vs_run, lesson, flag="--vs-run") if vs is not None else []
    if vs is not None and not runs_b:
        raise InputError(f"--vs {vs}: not a lesson run")
    _write(out, lesson_html.render(runs_a, runs_b or (), note=note or "").encode("utf-8"))
    console.print(f"wrote {out} ({len(runs_a)} lesson run(s) from {run}" + (f", {len(runs_b)} from {vs}" if vs else "") + ")",
                  highlight=False, soft_wrap=True)
    return True


def _lesson_compare(run_a: Path, run_b: Path, id_a: Optional[int], id_b: Optional[int], lesson: Optional[str],
                    json_out: bool) -> bool:
    """`gemmlab compare` for lesson runs; False when the arguments pick ladder runs."""
    from gemmlab.report import lessons as L
    from gemmlab.report.lesson_sources import lesson_runs

    a = lesson_runs(run_a, id_a, lesson, flag="--run-a")
    b = lesson_runs(run_b, id_b, lesson, flag="--run-b")
    if a is None and b is None:
        return False
    if a is None or b is None:
        raise InputError("RUN_A and RUN_B must both be lesson runs (or both ladder runs)")
    la, lb = L.latest_by_lesson(a), L.latest_by_lesson(b)
    names = [n for n in la if n in lb]
    if not names:
        raise InputError(f"RUN_A ({', '.join(la)}) and RUN_B ({', '.join(lb)}) share no lesson")
    results = [L.compare_runs(la[n], lb[n]) for n in names]
    if json_out:
        print_json(results)
        return True
    for cmp in results:
        console.print(f"{cmp['title']}\nA = {cmp['a']}\nB = {cmp['b']}", highlight=False, soft_wrap=True)
        for s in cmp["points"]:
            print_table(L.COMPARE_COLUMNS, s["rows"], title=s["title"])
        print_table(L.STEP_COLUMNS, L.step_rows(cmp), title="Did it help, where?",
                    caption="no measurable difference: the IQRs overlap or the change is under 3%")
        if cmp["article"]["rows"]:
            print_table(("Method", "MX330 (ms)", "A4000 (ms)"), cmp["article"]["rows"], title="The article's figures (as published)")
        for sentence in cmp["sentences"].values():
            console.print(sentence, highlight=False, soft_wrap=True)
    return True


def compare(
    run_a: Annotated[Path, typer.Argument(metavar="RUN_A", help="Run JSON file or results database (GPU A).")],
    run_b: Annotated[Path, typer.Argument(metavar="RUN_B", help="Run JSON file or results database (GPU B).")],
    run_id_a: Annotated[Optional[int], typer.Option("--run-a", help="Run id in RUN_A's database (default: newest).")] = None,
    run_id_b: Annotated[Optional[int], typer.Option("--run-b", help="Run id in RUN_B's database (default: newest).")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    lesson: Annotated[Optional[str], typer.Option("--lesson", help="Lesson runs: NAME (its newest run in each) or 'all'.")] = None,
) -> None:
    """Two runs side by side (e.g. two GPUs): time per kernel, speedup per rung on each, which changes helped where."""
    from gemmlab.report import sources
    from gemmlab.report.compare import COLUMNS, compare as compare_runs, table_rows

    if _lesson_compare(run_a, run_b, run_id_a, run_id_b, lesson, json_out):
        return

    a = sources.load_run(run_a, run_id_a, flag="--run-a")
    b = sources.load_run(run_b, run_id_b, flag="--run-b")
    if a.source == b.source:
        raise InputError(f"RUN_A and RUN_B are the same run ({a.source}); pick two runs (--run-a/--run-b)")
    result = compare_runs(a, b)
    if json_out:
        print_json(result.to_dict())
        return
    console.print(f"A = {result.label_a} ({a.source})\nB = {result.label_b} ({b.source})", highlight=False, soft_wrap=True)
    ladder = result.ladder
    for sc in result.shapes:
        M, N, K = sc.shape
        cublas = f"; cuBLAS: {ladder.reference}" + (
            f" (A's fastest: {sc.reference_a or 'not recorded'}; B's: {sc.reference_b or 'not recorded'})"
            if sc.reference_a or sc.reference_b else "")
        print_table(COLUMNS, table_rows(sc), title=f"Time per kernel, M,N,K = {M},{N},{K} ({ladder.title})",
                    caption="time: median; 'vs previous': previous rung's median / this one's" + cublas)
        if sc.steps:
            print_table(
                ("Change", "A", "B", "Where it helped"),
                [
                    (f"{s.previous} -> {s.kernel}", f"{s.speedup_a:.2f}x ({s.effect_a})", f"{s.speedup_b:.2f}x ({s.effect_b})",
                     s.verdict + ("" if s.noise_checked else " (no samples: noise not checked)"))
                    for s in sc.steps
                ],
                title="Which changes helped where",
                caption="speedup = previous rung's median / this rung's median; 'within noise': the two "
                "interquartile ranges overlap",
            )
    for side, names in (("A", result.only_a), ("B", result.only_b)):
        if names:
            console.print(f"only in {side}: {', '.join(names)}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("report")(report)
    app.command("compare")(compare)
