"""gemmlab lesson [NAME]: the fourth seed article's experiments, measured on this GPU.

Without NAME: the lessons (table or --json). With NAME: every variant at every point of the
sweep, checked and timed by the ladder's harness, the verdict per comparison and one sentence on
whether the article's conclusion transfers; ``--profile`` adds ncu's diagnosis of each variant and
the "What actually mattered" table. Runs are appended to the results database like ladder runs.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from gemmlab.commands.ladder import (
    DbOpt,
    ForceOpt,
    JsonOpt,
    NoFlushOpt,
    NoStoreOpt,
    OutOpt,
    RepeatsOpt,
    RepOpt,
    SeedOpt,
    WarmupOpt,
    _options,
    _progress_run,
    _require_gpu,
    check_db,
    check_out,
    keep,
)
from gemmlab.errors import UserError
from gemmlab.output import console, err_console, print_json, print_table, warn
from gemmlab.report.mattered import MATTERED_COLUMNS, mattered_rows


def lesson(
    name: Annotated[Optional[str], typer.Argument(metavar="[NAME]", help="A lesson (default: list them).")] = None,
    size: Annotated[Optional[int], typer.Option("--size", help="Problem size (the lesson's n; see the list).")] = None,
    sweep: Annotated[Optional[str], typer.Option("--sweep", help="Comma-separated values of the lesson's sweep parameter.")] = None,
    repeats: RepeatsOpt = None,
    warmup_ms: WarmupOpt = 25.0,
    rep_ms: RepOpt = 200.0,
    no_l2_flush: NoFlushOpt = False,
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    out: OutOpt = None,
    force: ForceOpt = False,
    db: DbOpt = None,
    no_store: NoStoreOpt = False,
    profile: Annotated[bool, typer.Option("--profile", help="Then profile every variant at the default point (or the first) with ncu.")] = False,
    ncu: Annotated[Optional[str], typer.Option("--ncu", help="Path of ncu for --profile.")] = None,
) -> None:
    """Run one of the fourth seed article's lessons (tiling, atomics, coalescing, bank_conflicts, occupancy, fusion)."""
    from gemmlab.lessons import registry

    if name is None:
        _list(json_out)
        return
    les = registry.get(name)
    pts = les.points(size, sweep)
    options = _options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_out(out, force)
    check_db(db, no_store)
    _require_gpu()
    if profile:
        from gemmlab.profile.runner import find_ncu

        ncu = find_ncu(ncu)
    from gemmlab.lessons.run import measure

    try:
        result = _progress_run(lambda p: measure(les, pts, options, seed=seed, progress=p))
    except Exception as e:
        if type(e).__name__ == "OutOfMemoryError":
            raise UserError(f"lesson {les.name}: the GPU ran out of memory ({e}); try a smaller --size") from None
        raise
    report = None
    if profile:
        report = _profile(les, result, ncu)
        from gemmlab.workflows.lesson_profile import report_dict

        result["profile"] = report_dict(report)
    meta = {k: v for k, v in result.items() if k not in ("rows", "env", "command")}
    keep(result, "lesson", meta, db=db, no_store=no_store, out=out, force=force)
    if json_out:
        print_json(result)
    else:
        show(result)
        if report is not None:
            show_profile(report)
    failed = [f"{r['kernel']} at {r['point']['param']}={r['point']['value']}" for r in result["rows"] if not r["correct"]]
    if failed:
        raise UserError(f"{len(failed)} variant(s) failed the correctness check: {', '.join(failed)}", code=1)


def _list(json_out: bool) -> None:
    from gemmlab.lessons import registry

    items = [x.describe() for x in registry.LESSONS]
    if json_out:
        print_json(items)
        return
    print_table(("Lesson", "Variants", "Sweep (default)", "Default size", "Article"),
                [(i["name"], ", ".join(v["name"] for v in i["variants"]),
                  f"{i['sweep']['label']}: {', '.join(map(str, i['sweep']['values']))} ({i['sweep']['default']})",
                  f"{i['size']['label']} = {i['size']['default']}", "measured" if i["article_measured"] else "code only")
                 for i in items], title="Lessons of the fourth seed article (`gemmlab lesson NAME` runs one)")


def show(result: dict) -> None:
    """A lesson result as tables: each point, the verdicts, the article's table, the sentence."""
    from gemmlab.report import lessons as L

    ceiling = result.get("ceiling") or {}
    cap = "vs baseline: baseline median / this median; rate: the variant's own bytes (or FLOP) / median"
    if ceiling.get("copy_bytes_per_s"):
        cap += f"; copy ceiling {ceiling['copy_bytes_per_s'] / 1e9:,.0f} GB/s ({ceiling.get('source')})"
    for title, rows in L.run_tables(result):
        print_table(L.RUN_COLUMNS, rows, title=f"{title} on {result.get('gpu')}", caption=cap)
    print_table(("Change", "Point", "Verdict"), L.verdict_rows(result), title="Did the optimisation help here?",
                caption="no measurable difference: the IQRs overlap or the change is under 3%")
    art = L.article_rows(result["lesson"])
    if art:
        print_table(("Method", "MX330 (ms)", "A4000 (ms)"), art, title="The article's figures (as published)")
    console.print(L.sentence(result), highlight=False, soft_wrap=True)


def _profile(les, result: dict, ncu: str) -> dict:
    from rich.progress import Progress

    from gemmlab.workflows import lesson_profile

    pts = [r["point"] for r in result["rows"]]
    want = les.default_point().to_dict()
    point = want if want in pts else pts[0]
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("ncu", total=len(les.variants))
        profiles = lesson_profile.profile_variants(
            les, point, ncu=ncu, on_variant=lambda i, v: bar.update(task, completed=i, description=f"ncu: {v}"))
    return lesson_profile.build_report(result["rows"], point, profiles)


def show_profile(report: dict) -> None:
    from gemmlab.report.lessons import point_label

    print_table(["Variant", "Time (ms)", "Speedup vs previous", "Profiler signal", "Main bottleneck"],
                [[r.version, f"{r.time_s * 1e3:.4f}", None if r.speedup_vs_previous is None else f"{r.speedup_vs_previous:.2f}x",
                  r.signal, r.bottleneck] for r in report["table"]], title=f"Profiled at {point_label(report['point'])}")
    for variant, lines in report["diagnoses"].items():
        for line in lines:
            console.print(f"{variant}: {line}", highlight=False, soft_wrap=True)
    print_table(MATTERED_COLUMNS, mattered_rows(report["mattered"]), title="What actually mattered")
    for p in report["profiles"]:
        if p.error:
            warn(f"{p.rung}: not profiled: {p.error}")


def register(app: typer.Typer) -> None:
    app.command("lesson")(lesson)
