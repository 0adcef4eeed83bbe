"""gemmlab shapes: the shape map — a dispatching rung against cuBLAS over a grid of shapes, in FP32
(``dispatch`` vs cuBLAS SGEMM), BF16 (``dispatch_bf16`` vs cuBLAS BF16 at its best) or FP8
(``dispatch_fp8`` vs cuBLASLt FP8 at its best): ``--dtype``.

Every shape is checked (fresh random inputs, poisoned output, float64 reference) and timed by the
ladder's harness, the reference in the same process, in interleaved rounds; the map says % of cuBLAS per shape, which
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
        "--preset", help="A named grid of shapes: default, square, skinny, k, models, quick (FP32); tensor, "
                         "tensor-squares, tensor-models, tensor-quick (BF16/FP8; see --list).")] = None,
    grid_old: Annotated[Optional[str], typer.Option("--grid", hidden=True)] = None,
    shape_list: Annotated[Optional[str], typer.Option("--shapes", help="Your own shapes: \"M,N,K;M,N,K;...\".")] = None,
    dtype: Annotated[str, typer.Option("--dtype", help="fp32 (cuBLAS SGEMM), bf16 (cuBLAS BF16 at its best) or "
                                                       "fp8 (e4m3, cuBLASLt FP8 at its best); C is bf16 for both.")] = "fp32",
    rung: Annotated[Optional[str], typer.Option("--rung", help="The rung to map (default: the dtype's dispatcher - dispatch, dispatch_bf16 or dispatch_fp8 - which picks its kernels by shape; e.g. autotuned or persistent_bf16 for one kernel everywhere).")] = None,
    target: Annotated[Optional[float], typer.Option("--target", help="Goal in % of the reference for every non-skinny shape (default: FP32 85, BF16/FP8 95).")] = None,
    floor: Annotated[Optional[float], typer.Option("--floor", help="No shape should fall below this % of the reference (default 50).")] = None,
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
    """Map % of cuBLAS over a grid of shapes (FP32, BF16 or FP8: squares and ±1, decode and prefill, real models)."""
    from gemmlab.shapes import grids, shapemap

    if dtype not in grids.DISPATCH:
        from gemmlab.errors import InputError

        raise InputError(f"must be one of {', '.join(grids.DISPATCH)}, got {dtype!r}", option="dtype")
    name, chosen = grids.resolve(renamed(grid, grid_old, "--preset", "--grid"), shape_list, dtype)
    goals = grids.Goals.for_dtype(dtype, target, floor)
    options = grids.ShapesOptions(chosen, grid_name=name, rung=rung or "",
                                  timing=timing_options(warmup_ms, rep_ms, repeats, no_l2_flush), seed=seed, goals=goals,
                                  dtype=dtype)
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

    items = [{**s.to_dict(), "class": shapemap.shape_class(*s.dims, options.dtype)} for s in options.shapes]
    about = grids.GRID_HELP.get(options.grid_name, "shapes given with --shapes")
    if json_out:
        print_json({"grid": options.grid_name, "dtype": options.dtype, "about": about, "grids": grids.GRID_HELP,
                    "shapes": items})
        return
    print_table(("Shape (M×N×K)", "Class", "Label", "Where from"),
                [(f"{i['M']}×{i['N']}×{i['K']}", i["class"], i["label"], i["source"]) for i in items],
                title=f"Grid {options.grid_name!r}: {len(items)} shapes",
                caption=f"{about}. Grids: {', '.join(grids.GRIDS)} (--preset NAME); your own: --shapes \"M,N,K;M,N,K\"")


def register(app: typer.Typer) -> None:
    app.command("shapes")(table_command(shapes))
