"""gemmlab commands: profile, timeline, diff.

    gemmlab profile RUNG [--size 2048 | --shape M,N,K] [--full] [--dry-run]   a ladder rung under ncu
    gemmlab profile --script run.py --range step [-- ARGS]        kernels in an NVTX range of a script
    gemmlab profile --kernel 'regex' -- ./app ARGS                 any program
    gemmlab timeline -- python run.py        |  gemmlab timeline --import stats.csv
    gemmlab diff before.ncu-rep after.ncu-rep  |  gemmlab diff 12 13   (stored run ids)

A single positional word that names a ladder rung profiles that rung; anything else is the
command to run (write it after ``--``). ``--dry-run`` prints the exact ncu command.
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import List, Optional, Sequence

import typer
from rich.text import Text

from gemmlab.bench.stats import SAME_MEANS
from gemmlab.commands.common import (
    DbOpt,
    JsonOpt,
    ShapeOpt,
    SizeOpt,
    renamed,
    resolve_shape,
    table_command,
)
from gemmlab.errors import InputError, ToolMissing
from gemmlab.output import (
    console,
    csv_active,
    err_console,
    print_json,
    print_table,
    warn,
)
from gemmlab.analysis.overview import DEFAULT_TOP
from gemmlab.profile import collect, targets
from gemmlab.profile.runner import find_ncu
from gemmlab.workflows import profile_run


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("profile")(table_command(profile_cmd))
    app.command("timeline")(table_command(timeline_cmd))
    app.command("diff")(table_command(diff_cmd))


# ----------------------------------------------------------------------------- profile

def _is_rung(name: str) -> bool:
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):  # ./app, /usr/bin/x, a.out: a program, not a rung
        return False
    from gemmlab.kernels import registry

    return name in registry.names()


def build_target(args: Sequence[str], shape: tuple[int, int, int], warmup: int, script: Optional[str], range_: Optional[str],
                 kernel: Optional[str], launch_skip: Optional[int], launch_count: int) -> targets.Target:
    """The target from the command line: a rung, a script, or a command."""
    if script is not None:
        return targets.script_target(script, args, range_, kernel, launch_skip or 0, launch_count)
    if len(args) == 1 and re.fullmatch(r"[A-Za-z0-9_]+", args[0]) and not _is_rung(args[0]) \
            and shutil.which(args[0]) is None:
        from gemmlab.kernels import registry

        raise InputError(f"{args[0]!r} is neither a ladder rung ({', '.join(r.name for r in registry.ladder())}, ...) "
                         f"nor a program on PATH; to profile a command write it after --")
    if len(args) == 1 and _is_rung(args[0]):
        if kernel or range_ or launch_skip is not None:
            raise InputError(f"profile {args[0]}: --kernel/--range/--launch-skip are for scripts and commands; a "
                             f"rung profiles its own kernel after --warmup-launches launches")
        return targets.rung_target(args[0], shape, warmup)
    return targets.command_target(args, range_, kernel, launch_skip or 0, launch_count)


def profile_cmd(
    args: Optional[List[str]] = typer.Argument(None, help="A ladder rung, or (after --) the command to profile."),
    size: SizeOpt = None,
    shape: ShapeOpt = None,
    warmup: int = typer.Option(targets.DEFAULT_WARMUP, "--warmup-launches", help="Rung launches before the profiled one."),
    warmup_old: Optional[int] = typer.Option(None, "--warmup", hidden=True),
    script: Optional[str] = typer.Option(None, "--script", help="A Python script to run (arguments after --)."),
    range_: Optional[str] = typer.Option(None, "--range", help="Profile kernels inside this NVTX push/pop range."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Profile kernels whose name matches this regex."),
    launch_skip: Optional[int] = typer.Option(None, "--launch-skip", help="Matching launches to skip first."),
    launch_count: int = typer.Option(1, "--launch-count", help="Matching launches to profile."),
    full: bool = typer.Option(False, "--full", help="Collect --set full (about 38 replay passes on H100)."),
    groups: Optional[str] = typer.Option(None, "--groups", help="Only these metric groups (comma list)."),
    output: Optional[str] = typer.Option(None, "--out", "-o", help="Report path (.ncu-rep)."),
    output_old: Optional[str] = typer.Option(None, "--output", hidden=True),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing report."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the exact ncu command and stop."),
    ncu: Optional[str] = typer.Option(None, "--ncu", help="Path of ncu (else $GEMMLAB_NCU, PATH, install folders)."),
    timeout: float = typer.Option(profile_run.DEFAULT_TIMEOUT_S, "--timeout", help="Seconds before ncu is stopped."),
    declare: Optional[List[str]] = typer.Option(None, "--declare", metavar="KEY=VALUE",
                                                help="Your .cu kernel: a declaration key (as in its // gemmlab: header)."),
    json_out: JsonOpt = False,
) -> None:
    """Profile a rung, your own kernel (FILE.cu, FILE.py[:FN]: the diagnosis and its hot source lines), a script or
    a command with Nsight Compute and print the diagnosis."""
    if full and groups:
        raise InputError("--full and --groups: choose one (--full collects every section)")
    _check_timeout(timeout)
    warmup = renamed(warmup, warmup_old, "--warmup-launches", "--warmup", unset=targets.DEFAULT_WARMUP)
    output = renamed(output, output_old, "--out", "--output")
    from gemmlab.workflows.user_run import is_user_input

    if args and len(args) == 1 and script is None and is_user_input(args[0]):
        from gemmlab.commands.yours import profile_file

        if full or groups or kernel or range_ or launch_skip is not None or dry_run:
            raise InputError("--full, --groups, --kernel, --range, --launch-skip and --dry-run are for rungs, scripts "
                             "and commands; your kernel gets the targeted collection with its source lines")
        return profile_file(args[0], declare=declare, size=size, shape=shape, warmup=warmup,
                            out=Path(output) if output else None, force=force, ncu=ncu, timeout=timeout,
                            json_out=json_out)
    if declare:
        raise InputError("--declare is for your own kernel (FILE.cu)")
    target = build_target(args or [], resolve_shape(size, shape), warmup, script, range_, kernel, launch_skip, launch_count)
    collection = collect.full_collection() if full else collect.default_collection(collect.parse_groups(groups))
    out = targets.report_path(output, target.label, full)
    if dry_run:
        try:
            ncu_path = find_ncu(ncu)
        except ToolMissing:
            warn("ncu not found; showing the command with plain 'ncu' (a real run says where it looked)")
            ncu_path = "ncu"
        if out.exists() and not force:
            warn(f"{out} exists: the real run will ask before overwriting it (or pass --force)")
        argv = targets.build_argv(ncu_path, target, collection, out, force and out.exists())
        if json_out:
            print_json({"command": argv})
        else:
            sys.stdout.write(shlex.join(argv) + "\n")
        return
    # Bad input before a missing tool: an -o that cannot be written is refused before ncu is looked
    # for; only the question on a terminal (is overwriting the report fine?) waits until ncu is found.
    interactive = sys.stdin.isatty() and sys.stdout.isatty()

    def confirm(q: str) -> bool:
        return typer.confirm(q, default=False, err=True)

    asks = interactive and out.exists() and not force and not out.is_dir()
    overwrite = None if asks else targets.may_overwrite(out, force, interactive, confirm)
    ncu_path = find_ncu(ncu)
    if overwrite is None:
        overwrite = targets.may_overwrite(out, force, interactive, confirm)
    with err_console.status(f"ncu: profiling {target.label} ({collection.name} collection)"):
        result = profile_run.run_profile(target, collection, ncu=ncu_path, output=out, overwrite=overwrite,
                                     timeout_s=timeout)
    if result.launches and len(result.launches) == len(result.diagnoses):
        from gemmlab.analysis.overview import exact_commands

        # each collect command reaches its own launch of this capture (its filter, --launch-skip counted with it)
        result.diagnoses = exact_commands(result.launches, result.diagnoses)
    if json_out:
        print_json(result)
        return
    show_profile(result)


def show_profile(result: profile_run.ProfileResult) -> None:
    for w in result.warnings:
        warn(w)
    console.print(Text.assemble(("command:", "bold"), " ", shlex.join(result.argv)), highlight=False, soft_wrap=True)
    # ncu's progress lines cut long kernel names ("sm80_xmma_gemm_f32f32_f32f32_..."): where the report was
    # read back, each launch's whole name comes from it
    names = ([k.name for k in result.launches] if len(result.launches) == len(result.kernels)
             else [k.name for k in result.kernels])
    print_table(["Kernel", "ncu launch #", "Replay passes"],
                [[n, k.index, k.passes] for n, k in zip(names, result.kernels)],
                title=f"Profiled launches ({result.collection.name} collection)")
    console.print(f"wall time: {result.wall_s:.1f} s (ncu and the program together)   report: {result.report}",
                  highlight=False)
    if csv_active():
        from gemmlab.report import diagnosis_table

        print_table(diagnosis_table.COLUMNS, diagnosis_table.rows(result.diagnoses), title="Diagnosis per launch")
        return
    from gemmlab.report.diagnosis_text import render

    ov = None
    if len(result.launches) > 1 and len(result.launches) == len(result.diagnoses):
        from gemmlab.analysis import overview

        ov = overview.build(result.launches, result.diagnoses)  # a range's launches: grouped, ranked, the range said
    render(result.diagnoses, str(result.report), console, overview=ov, top=DEFAULT_TOP if ov is not None else 0)


def _check_timeout(timeout: float) -> None:
    if not (timeout > 0 and timeout != float("inf")):
        raise InputError(f"--timeout {timeout}: expected a positive number of seconds")


# ----------------------------------------------------------------------------- timeline

def timeline_cmd(
    args: Optional[List[str]] = typer.Argument(None, help="The command to time (after --)."),
    script: Optional[str] = typer.Option(None, "--script", help="A Python script to run (arguments after --)."),
    import_: Optional[str] = typer.Option(None, "--import", help="Read `nsys stats --format csv` output instead."),
    via: str = typer.Option("auto", "--via", help="auto (nsys where it works, else CUPTI), nsys or cupti."),
    timeout: float = typer.Option(600.0, "--timeout", help="Seconds before the program is stopped."),
    json_out: JsonOpt = False,
) -> None:
    """Per-kernel GPU time summary (like nsys's cuda_gpu_kern_sum), measured or imported."""
    from gemmlab.profile import nsys, timeline_run

    if import_ is not None:
        if args or script:
            raise InputError("--import reads a file: give no command or --script with it")
        tl, stats = timeline_run.import_timeline(import_)
        if json_out:
            print_json({"source": import_, "reports": [r.to_dict() for r in stats.reports],
                        "skipped_tables": stats.skipped_tables})
            return
        for rep in stats.reports:
            _print_summary(rep.rows, f"{rep.kind}" + (f" (file: {rep.source_name})" if rep.source_name else ""),
                           rep.note or None, name_col="Operation" if rep.kind in (nsys.MEM_TIME_SUM,
                                                                                nsys.MEM_SIZE_SUM) else "Name")
        for h in stats.skipped_tables:
            warn(f"skipped a table gemmlab does not read: {h}")
        return
    _check_timeout(timeout)
    if script is not None and not Path(script).is_file():
        raise InputError(f"--script {script}: no such file; expected a Python script")
    argv = [sys.executable, script, *(args or [])] if script else list(args or [])
    if not argv:
        raise InputError("nothing to time: give -- CMD ARGS, --script FILE.py, or --import FILE.csv")
    if via not in timeline_run.VIAS:  # before nsys or CUPTI is looked for
        raise InputError(f"--via {via!r}: expected one of {', '.join(timeline_run.VIAS)}")
    with err_console.status("timing kernels"):
        tl = timeline_run.run_timeline(argv, via=via, timeout_s=timeout)
    for n in tl.notes:
        warn(n)
    if json_out:
        print_json(tl)
        return
    _print_summary(tl.rows, "GPU kernel summary", f"via {'Nsight Systems' if tl.via == 'nsys' else 'CUPTI (torch.profiler)'}")


def _fmt(v: Optional[float], unit: str) -> Optional[str]:
    if v is None:
        return None
    return f"{v:,.1f}" if unit == "ns" else f"{v / 1e6:,.3f}"


def _print_summary(rows, title: str, caption: Optional[str], name_col: str = "Name") -> None:
    if rows and rows[0].unit == "byte":
        cols = ["Total (MB)", "Count", "Avg (MB)", "Med (MB)", "Min (MB)", "Max (MB)", "StdDev (MB)", name_col]
        body = [[_fmt(r.total, "byte"), r.instances, _fmt(r.avg, "byte"), _fmt(r.med, "byte"), _fmt(r.min, "byte"),
                 _fmt(r.max, "byte"), _fmt(r.stddev, "byte"), r.name] for r in rows]
    else:
        cols = ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
                "StdDev (ns)", name_col]
        body = [[None if r.time_pct is None else f"{r.time_pct:.1f}", _fmt(r.total, "ns"), r.instances,
                 _fmt(r.avg, "ns"), _fmt(r.med, "ns"), _fmt(r.min, "ns"), _fmt(r.max, "ns"), _fmt(r.stddev, "ns"),
                 r.name] for r in rows]
    print_table(cols, body, title=title, caption=caption)


# ----------------------------------------------------------------------------- diff

def _is_run_id(text: str) -> bool:
    return text.isdigit() and not Path(text).exists()


def _load_run(text: str, db: Optional[str]):
    from gemmlab.store import Store

    with Store(db, create=False) as store:
        return store.load_record(int(text))


def diff_cmd(
    a: str = typer.Argument(..., help="Report (.ncu-rep or ncu CSV) or stored run id: the before."),
    b: str = typer.Argument(..., help="Report or stored run id: the after."),
    kernel: Optional[str] = typer.Option(None, "--kernel", "-k", help="Only kernels matching this regex."),
    top: int = typer.Option(6, "--top", help="Metrics shown per kernel."),
    db: DbOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """What changed between two profiles (time, metrics, diagnosis) or two stored runs (time)."""
    from gemmlab.analysis.diff import diff_launches, diff_runs

    if top < 1:
        raise InputError(f"--top {top}: expected 1 or more")
    if a == b == "-":
        raise InputError("diff - -: standard input can be read only once; give '-' for at most one of the two")
    if _is_run_id(a) != _is_run_id(b):
        raise InputError(f"diff {a} {b}: compare two reports or two stored run ids, not one of each")
    if _is_run_id(a):
        rows = diff_runs(_load_run(a, db), _load_run(b, db))
        if json_out:
            print_json({"a": a, "b": b, "kernels": rows})
            return
        print_table(["Kernel", f"run {a} median (ms)", f"run {b} median (ms)", "Speedup (A/B)", "Effect"],
                    [[r.kernel, None if r.a_s is None else f"{r.a_s * 1e3:.4f}",
                      None if r.b_s is None else f"{r.b_s * 1e3:.4f}",
                      None if r.speedup is None else f"{r.speedup:.2f}x",
                      None if r.change is None else r.change.verdict] for r in rows],
                    title="Stored runs",
                    caption=f"speedup: A's median / B's median; effect: faster, slower, or same ({SAME_MEANS})")
        return
    from gemmlab.profile.load import load

    la, lb = load(a, kernel), load(b, kernel)
    da = [profile_run.primary_category(d) for d in profile_run.diagnose(la)]
    db_ = [profile_run.primary_category(d) for d in profile_run.diagnose(lb)]
    diffs = diff_launches(la, lb, da, db_, top=top)
    if json_out:
        print_json({"a": a, "b": b, "kernels": diffs})
        return
    print_table(["Kernel", "Time A (us)", "Time B (us)", "Speedup (A/B)", "Diagnosis A -> B"],
                [[d.name, None if d.time_a_ns is None else f"{d.time_a_ns / 1e3:.1f}",
                  None if d.time_b_ns is None else f"{d.time_b_ns / 1e3:.1f}",
                  None if d.speedup is None else f"{d.speedup:.2f}x",
                  f"{d.diagnosis_a} -> {d.diagnosis_b}" if d.diagnosis_changed else f"{d.diagnosis_a} (same)"]
                 for d in diffs], title=f"{a} -> {b}")
    for d in diffs:
        if d.moves:
            led = [f"{m.label} for {c}" for c, m in d.leading()]
            print_table(["Metric", "Unit", "A", "B", "Change"],
                        [[m.label, m.unit, f"{m.a:.3g}", f"{m.b:.3g}", _change(m.a, m.b)] for m in d.moves],
                        title=f"{d.name}: metrics that moved most",
                        caption=(f"first the primary category's own measure ({'; '.join(led)}), then "
                                 if led else "") + "ranked by |B - A| / max(|A|, |B|)")


def _change(a: float, b: float) -> str:
    if a == 0:
        return "from 0"
    return f"{(b - a) / abs(a) * 100:+.0f}%"
