"""gemmlab shapes: the shape map — the best FP32 rung and cuBLAS FP32 over a grid of shapes.

Every shape is checked (fresh random inputs, poisoned output, float64 reference) and timed by the
ladder's harness, cuBLAS (TF32 off) in the same process; the map says % of cuBLAS per shape, which
instantiation actually ran, the shape's class, and for skinny shapes the achieved bandwidth against
the DRAM copy ceiling. Options are validated before anything touches the GPU. Runs are appended to
the results database as their own kind ("shapes") unless ``--no-store``.
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from gemmlab.commands import show
from gemmlab.commands.common import (
    DbOpt,
    ForceOpt,
    JsonOpt,
    NoFlushOpt,
    NoStoreOpt,
    OutOpt,
    RepeatsOpt,
    SeedOpt,
    fail_on_wrong,
    progress_run,
    renamed,
    require_gpu,
    table_command,
    timing_options,
)
from gemmlab.output import print_json, print_table
from gemmlab.workflows.keep import check_destinations, keep


def shapes(
    grid: Annotated[Optional[str], typer.Option(
        "--preset", help="A named grid of shapes: default, square, skinny, k, models, quick (see --list).")] = None,
    grid_old: Annotated[Optional[str], typer.Option("--grid", hidden=True)] = None,
    shape_list: Annotated[Optional[str], typer.Option("--shapes", help="Your own shapes: \"M,N,K;M,N,K;...\".")] = None,
    rung: Annotated[str, typer.Option("--rung", help="The rung to map (default: dispatch, which picks skinny, split-K, padded or plain tile kernels by shape; e.g. autotuned or double_buffered for one kernel everywhere).")] = "dispatch",
    target: Annotated[float, typer.Option("--target", help="Goal in % of cuBLAS for every non-skinny shape.")] = 85.0,
    floor: Annotated[float, typer.Option("--floor", help="No shape should fall below this % of cuBLAS.")] = 50.0,
    list_grids: Annotated[bool, typer.Option("--list", help="Print the grid's shapes and classes (no GPU needed) and stop.")] = False,
    repeats: RepeatsOpt = None,
    warmup_ms: Annotated[float, typer.Option("--warmup-ms", help="Warm-up budget per kernel and shape, ms of kernel time.")] = 10.0,
    rep_ms: Annotated[float, typer.Option("--rep-ms", help="Measurement budget per kernel and shape, ms of kernel time.")] = 50.0,
    no_l2_flush: NoFlushOpt = False,
    seed: SeedOpt = 0,
    json_out: JsonOpt = False,
    out: OutOpt = None,
    force: ForceOpt = False,
    db: DbOpt = None,
    no_store: NoStoreOpt = False,
) -> None:
    """Map % of cuBLAS FP32 over a grid of shapes (squares and ±1, skinny, small/large K, real models)."""
    from gemmlab.shapes import grids, shapemap

    name, chosen = grids.resolve(renamed(grid, grid_old, "--preset", "--grid"), shape_list)
    goals = grids.Goals(target_pct=target, floor_pct=floor)
    options = grids.ShapesOptions(chosen, grid_name=name, rung=rung,
                                  timing=timing_options(warmup_ms, rep_ms, repeats, no_l2_flush), seed=seed, goals=goals)
    if list_grids:
        _list(options, json_out)
        return
    check_destinations(out, force, db, no_store)
    require_gpu()
    from gemmlab.shapes.measure import measure

    record = progress_run(lambda p: measure(options, progress=p))
    kept = keep(record, db=db, no_store=no_store, out=out, force=force)
    if json_out:
        print_json(kept.document)
    else:
        show.show(kept.record)
    fail_on_wrong([p.shape.name for p in shapemap.from_record(kept.record).wrong()], noun="shape(s)")


def _list(options, json_out: bool) -> None:
    from gemmlab.shapes import grids, shapemap

    items = [{**s.to_dict(), "class": shapemap.shape_class(*s.dims)} for s in options.shapes]
    about = grids.GRID_HELP.get(options.grid_name, "shapes given with --shapes")
    if json_out:
        print_json({"grid": options.grid_name, "about": about, "grids": grids.GRID_HELP, "shapes": items})
        return
    print_table(("Shape (M×N×K)", "Class", "Label", "Where from"),
                [(f"{i['M']}×{i['N']}×{i['K']}", i["class"], i["label"], i["source"]) for i in items],
                title=f"Grid {options.grid_name!r}: {len(items)} shapes",
                caption=f"{about}. Grids: {', '.join(grids.GRIDS)} (--preset NAME); your own: --shapes \"M,N,K;M,N,K\"")


def register(app: typer.Typer) -> None:
    app.command("shapes")(table_command(shapes))
