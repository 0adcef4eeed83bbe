"""gemmlab lesson [NAME]: the fourth seed article's experiments, measured on this GPU.

Without NAME: the lessons (table or --json). With NAME: every variant at every point of the
sweep, checked and timed by the ladder's harness, the verdict per comparison and one sentence on
whether the article's conclusion transfers; ``--profile`` adds ncu's diagnosis of each variant and
the "What actually mattered" table. Runs are appended to the results database like ladder runs.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from gemmlab.commands import show
from gemmlab.commands.common import (
    DbOpt,
    ForceOpt,
    JsonOpt,
    NcuOpt,
    NoFlushOpt,
    NoStoreOpt,
    OutOpt,
    RepeatsOpt,
    RepOpt,
    SeedOpt,
    WarmupOpt,
    fail_on_wrong,
    kept_if_stopped,
    progress_run,
    renamed,
    require_gpu,
    table_command,
    timing_options,
)
from gemmlab.output import print_json, print_table
from gemmlab.workflows.keep import check_destinations, keep


def lesson(
    name: Annotated[Optional[str], typer.Argument(metavar="NAME", help="A lesson (default: list them).")] = None,
    size: Annotated[Optional[int], typer.Option("--size", help="Problem size (the lesson's n; see the list).")] = None,
    points: Annotated[Optional[str], typer.Option(
        "--points", help="Comma-separated values of the lesson's sweep parameter (default: the lesson's sweep).")] = None,
    points_old: Annotated[Optional[str], typer.Option("--sweep", hidden=True)] = None,
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
    ncu: NcuOpt = None,
) -> None:
    """Run one of the fourth seed article's lessons (tiling, atomics, coalescing, bank_conflicts, occupancy, fusion)."""
    from gemmlab.lessons import registry

    if name is None:
        _list(json_out)
        return
    les = registry.get(name)
    pts = les.points(size, renamed(points, points_old, "--points", "--sweep"))
    options = timing_options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_destinations(out, force, db, no_store)
    require_gpu()
    ncu_path = None
    if profile:
        from gemmlab.profile.runner import find_ncu

        ncu_path = find_ncu(ncu)  # fail before the timing work, not after it
    from gemmlab.lessons.run import measure

    record = progress_run(lambda p: measure(les, pts, options, seed=seed, progress=p))
    report = None
    if ncu_path is not None:
        from dataclasses import replace

        from gemmlab.commands.profiled import profile_lesson_record
        from gemmlab.workflows.lesson_profile import report_dict

        with kept_if_stopped(record, db=db, no_store=no_store, out=out, force=force):
            report = profile_lesson_record(les, record, ncu_path)
        record = replace(record, meta={**record.meta, "profile": report_dict(report)})
    kept = keep(record, db=db, no_store=no_store, out=out, force=force)
    if json_out:
        print_json(kept.document)
    else:
        show.show(kept.record)
        if report is not None:
            from gemmlab.commands.profiled import show_lesson_profile

            show_lesson_profile(report)
    fail_on_wrong([f"{r.name} at {r.extra['point']['param']}={r.extra['point']['value']}" for r in kept.record.failures],
                  noun="variant(s)")


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


def register(app: typer.Typer) -> None:
    app.command("lesson")(table_command(lesson))
