"""gemmlab report / compare: a run as an HTML page (and Markdown), two runs side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from gemmlab.bench.stats import SAME_MEANS
from gemmlab.commands.common import JsonOpt, table_command
from gemmlab.output import console, print_json, print_table, warn

RunArg = Annotated[
    Path,
    typer.Argument(metavar="RUN", help="A run JSON file (gemmlab ladder/bench/sweep --out) or a results database."),
]


def report(
    run: RunArg,
    run_id: Annotated[
        Optional[list[int]],
        typer.Option("--run", help="Run id in the database, repeatable: one section per run (default: the newest run, "
                     "and the newest ladder run of the other ladder (FP32 / BF16) on the same GPU)."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", help="HTML file to write.")] = Path("report.html"),
    markdown: Annotated[
        Optional[Path], typer.Option("--markdown-out", help="Also write Markdown here; plots go to <name>_files/.")
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
    from gemmlab.workflows.report import ReportRequest, write

    req = ReportRequest(run=run, run_ids=tuple(run_id or ()), out=out, markdown=markdown,
                        diagnosis=tuple(diagnosis or ()), sweep=sweep, sweep_run=sweep_run, ceilings=ceilings,
                        with_plots=not no_plots, note=note or "", force=force, lesson=lesson, vs=vs, vs_run=vs_run,
                        shape_map=shape_map)
    written = write(req)
    for w in written.warnings:
        warn(w)
    console.print("wrote " + " and ".join(str(f) for f in written.files) + f" ({written.what})",
                  highlight=False, soft_wrap=True, markup=False)


def _show_lesson_compare(results: list[dict], json_out: bool) -> None:
    from gemmlab.report import lessons as L

    if json_out:
        print_json(results)
        return
    for cmp in results:
        console.print(f"{cmp['title']}\nA = {cmp['a']}\nB = {cmp['b']}", highlight=False, soft_wrap=True, markup=False)
        for s in cmp["points"]:
            print_table(L.COMPARE_COLUMNS, s["rows"], title=s["title"])
        print_table(L.STEP_COLUMNS, L.step_rows(cmp), title="Did it help, where?",
                    caption=f"same: {SAME_MEANS}")
        if cmp["article"]["rows"]:
            print_table(("Method", "MX330 (ms)", "A4000 (ms)"), cmp["article"]["rows"], title="The article's figures (as published)")
        for sentence in cmp["sentences"].values():
            console.print(sentence, highlight=False, soft_wrap=True, markup=False)


def compare(
    run_a: Annotated[Path, typer.Argument(metavar="RUN_A", help="Run JSON file or results database (GPU A).")],
    run_b: Annotated[Path, typer.Argument(metavar="RUN_B", help="Run JSON file or results database (GPU B).")],
    run_id_a: Annotated[Optional[int], typer.Option("--run-a", help="Run id in RUN_A's database (default: newest).")] = None,
    run_id_b: Annotated[Optional[int], typer.Option("--run-b", help="Run id in RUN_B's database (default: newest).")] = None,
    json_out: JsonOpt = False,
    lesson: Annotated[Optional[str], typer.Option("--lesson", help="Lesson runs: NAME (its newest run in each) or 'all'.")] = None,
) -> None:
    """Two runs side by side, such as one ladder on two GPUs: time per kernel, speedup per rung on each, which changes helped where."""
    from gemmlab.report.compare import COLUMNS, table_rows
    from gemmlab.workflows import report as wf

    kind, compared = wf.compare(run_a, run_b, run_id_a, run_id_b, lesson)
    if kind == "lesson":
        _show_lesson_compare(compared, json_out)
        return
    result, a, b = compared
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
                caption=f"speedup = previous rung's median / this rung's median; 'same': {SAME_MEANS}",
            )
    for side, names in (("A", result.only_a), ("B", result.only_b)):
        if names:
            console.print(f"only in {side}: {', '.join(names)}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("report")(report)
    app.command("compare")(table_command(compare))
