"""gemmlab analyze: an honest per-kernel diagnosis of an Nsight Compute export."""

from __future__ import annotations

import contextlib
import importlib.resources
import shlex
import sys
from pathlib import Path
from typing import Iterator, Optional

import typer

from gemmlab.analysis import overview
from gemmlab.analysis.diagnose import AnalyzeOptions, diagnose_all
from gemmlab.analysis.evidence import report_dict
from gemmlab.analysis.overview import DEFAULT_TOP
from gemmlab.commands.common import table_command
from gemmlab.errors import UserError
from gemmlab.output import console, csv_active, print_json, print_table, warn
from gemmlab.profile.load import filter_kernels, is_stream, kernel_regex, load, stream_name

EXAMPLE = "h100_gemm_ladder_raw.csv"
EXAMPLE_NOTE = ("Bundled example: a real H100 Nsight Compute capture (--set full, --page raw) of five SGEMM "
                "kernels, M = N = K = 2048. Pass a FILE to analyse your own export.")


@contextlib.contextmanager
def example_path() -> Iterator[Path]:
    """The capture shipped in the package (works from a wheel or a source tree)."""
    ref = importlib.resources.files("gemmlab") / "data" / EXAMPLE
    with importlib.resources.as_file(ref) as p:
        yield Path(p)


def analyze(
    file: Optional[Path] = typer.Argument(None, metavar="FILE", help="Nsight Compute export: raw/details CSV, ncu --csv output, or .ncu-rep; - reads standard input. Omit to analyse the bundled example."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Only kernels whose name matches this regular expression."),
    as_json: bool = typer.Option(False, "--json", help="Print the documented JSON (schema_version 1)."),
    markdown: bool = typer.Option(False, "--markdown", help="Print Markdown instead of tables."),
    gemm: Optional[bool] = typer.Option(None, "--gemm/--no-gemm", help="Treat kernels as GEMMs (ladder advice) or not; default: from the kernel name."),
    example: bool = typer.Option(False, "--example", help="Analyse the H100 capture bundled with gemmlab."),
    app: Optional[str] = typer.Option(None, "--app", help="Program and arguments to put in the printed ncu command, e.g. \"./ladder --size 2048\"."),
    top: Optional[int] = typer.Option(None, "--top", metavar="N", help=f"Full diagnosis cards for the N kernel groups with the most GPU time (default {DEFAULT_TOP}; 0: all). The overview table lists every group; --json has every launch."),
    all_groups: bool = typer.Option(False, "--all", help="A card for every kernel group (same as --top 0)."),
    no_lines: bool = typer.Option(False, "--no-lines", help="Leave out an .ncu-rep's hot source lines (~0.1–1 s a launch; --json and --csv read every launch's)."),
    verbose: bool = typer.Option(False, "--verbose", help="Print every card's full ncu command (by default the long metric list is printed once, after the cards)."),
) -> None:
    """Name each kernel's bottleneck, with evidence, honest confidence, what is missing, and what to do next.

    An overview leads: launches of the same kernel, grid and block are grouped, ranked by total GPU time,
    with the group's diagnosis (its longest launch's) and what a fix could win."""
    if as_json and markdown:
        raise UserError("--json and --markdown: choose one output format")
    if top is not None and top < 0:
        raise UserError(f"--top {top}: expected a number of kernel groups ≥ 0 (0: all)")
    if top is not None and all_groups:
        raise UserError("--top and --all: give one (--all is --top 0)")
    top = 0 if all_groups else DEFAULT_TOP if top is None else top
    if file is not None and example:
        raise UserError(f"{file}: --example analyses the bundled capture; give a FILE or --example, not both")
    app_argv = None
    if app is not None:
        try:
            app_argv = tuple(shlex.split(app))
        except ValueError as e:
            raise UserError(f"--app {app!r}: not a valid command line ({e})") from None
        if not app_argv:
            raise UserError("--app '': expected the program to profile and its arguments")
    options = AnalyzeOptions(gemm=gemm, app_argv=app_argv)
    kernel_regex(kernel)  # a bad --kernel is refused before the file is read
    if file is None:
        with example_path() as p:
            every, name = load(p), stream_name(p)
        source, note = f"gemmlab/data/{EXAMPLE} (bundled example)", EXAMPLE_NOTE
    else:
        every = load(file)  # '-' is standard input; a pipe is read once
        source, note = stream_name(file), ""
        name = source
    # --kernel picks the launches to diagnose; the capture's every launch counts for --launch-skip
    launches = filter_kernels(every, kernel, name) if kernel else every
    # each collect command reaches its own launch: the kernel filter, and --launch-skip counted with it
    diagnoses = overview.exact_commands(launches, diagnose_all(launches, options), every)
    ov = overview.build(launches, diagnoses)
    # hot source lines: an .ncu-rep's per-instruction samples (a CSV export has none); JSON and CSV
    # carry every launch's, the cards those of the launches they show (Markdown has none yet)
    hot = {}
    if (file is not None and not no_lines and not markdown and not is_stream(file)
            and launches[0].format == "ncu-rep"):
        every = as_json or csv_active()
        hot = _hot_lines(file, [d.kernel_id for d in diagnoses] if every
                         else [g.representative.kernel_id for g in ov.top(top)])
    if as_json:
        doc = report_dict(source, diagnoses, note, ov.to_dict())
        from gemmlab.analysis.kernel_names import identity

        for k, d in zip(doc["kernels"], diagnoses):  # the short identity beside the full names
            k["identity"] = identity(d.demangled, d.name)
        if hot:
            from gemmlab.analysis.hot_lines import finding_line

            for k, d in zip(doc["kernels"], diagnoses):
                h = hot.get(d.kernel_id)
                if h is not None:
                    k["hot_lines"] = {**h.to_dict(), "finding_line": finding_line(d, h)}
        print_json(doc)
    elif csv_active():
        from gemmlab.report import diagnosis_table
        from gemmlab.report import overview as ov_render

        print_table(ov_render.COLUMNS, ov_render.rows(ov), title="Kernels ranked by total GPU time")
        print_table(diagnosis_table.COLUMNS, diagnosis_table.rows(diagnoses), title="Diagnosis per launch")
        if hot:
            from gemmlab.report import hot_lines as hot_render

            print_table(hot_render.CSV_COLUMNS, hot_render.csv_rows(hot[d.kernel_id] for d in diagnoses
                                                                    if d.kernel_id in hot),
                        title="Hot source lines per launch")
    elif markdown:
        from gemmlab.report import diagnosis_markdown

        sys.stdout.write(diagnosis_markdown.render(diagnoses, source, note, ov, top, verbose) + "\n")
    else:
        from gemmlab.report import diagnosis_text

        diagnosis_text.render(diagnoses, source, console, note, ov, top, hot, verbose)


def _hot_lines(file: Path, ids: list[int]) -> dict:
    """{launch id: HotLines} of the launches ``ids`` of the report; {} with a warning when they cannot
    be read (the diagnosis stands without them)."""
    from gemmlab.analysis.hot_lines import hot_lines
    from gemmlab.profile.source_lines import read_lines

    try:
        return {ll.id: hot_lines(ll) for ll in read_lines(file, ids)}
    except UserError as e:
        warn(f"hot source lines left out: {e.message}")
        return {}


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("analyze")(table_command(analyze))
