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
                         "tensor-squares, tensor-models, tensor-quick, tensor-batches (BF16/FP8; see --list).")] = None,
    grid_old: Annotated[Optional[str], typer.Option("--grid", hidden=True)] = None,
    shape_list: Annotated[Optional[str], typer.Option("--shapes", help="Your own shapes: \"M,N,K;M,N,K;...\".")] = None,
    dtype: Annotated[str, typer.Option("--dtype", help="fp32 (cuBLAS SGEMM), bf16 (cuBLAS BF16 at its best) or "
                                                       "fp8 (e4m3, cuBLASLt FP8 at its best); C is bf16 for both.")] = "fp32",
    rung: Annotated[Optional[str], typer.Option("--rung", help="The rung to map (default: the dtype's dispatcher - dispatch, dispatch_bf16 or dispatch_fp8 - which picks its kernels by shape; e.g. autotuned or persistent_bf16 for one kernel everywhere).")] = None,
    target: Annotated[Optional[float], typer.Option("--target", help="Goal in % of the reference for every non-skinny shape (default: FP32 85, BF16/FP8 95).")] = None,
    floor: Annotated[Optional[float], typer.Option("--floor", help="No shape should fall below this % of the reference (default 50).")] = None,
    list_grids: Annotated[bool, typer.Option("--list", help="Print the grid's shapes and classes (no GPU needed) and stop; for dispatch_bf16 / dispatch_fp8 also the plan each shape takes, and why.")] = False,
    sms: Annotated[Optional[int], typer.Option("--sms", help="With --list: plan for this many SMs (default: this machine's GPU, else --gpu's, else the H100 SXM's 132).")] = None,
    gpu: Annotated[Optional[str], typer.Option("--gpu", help="With --list: plan for this GPU of the spec table (h100, h200, h100-pcie...).")] = None,
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
    if (sms is not None or gpu is not None) and not list_grids:
        from gemmlab.errors import InputError

        raise InputError("--sms and --gpu plan the dispatch for --list; a measured run uses this machine's GPU")
    if list_grids:
        if (sms is not None or gpu is not None) and not _plans_shown(options):
            from gemmlab.errors import InputError

            raise InputError("--sms and --gpu plan dispatch_bf16 / dispatch_fp8 (--dtype bf16 or fp8, their "
                             "dispatcher); this list shows no plan")
        _list(options, json_out, _planned_sms(sms, gpu) if _plans_shown(options) else None)
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


def _plans_shown(options) -> bool:
    """The plan column is the tensor dispatchers' (pure rules); the FP32 one weighs compiled occupancy."""
    return options.dtype in ("bf16", "fp8") and options.rung in ("", f"dispatch_{options.dtype}")


def _planned_sms(sms: Optional[int], gpu: Optional[str]) -> tuple[int, str, Optional[float]]:
    """(SM count, where it came from, datasheet DRAM GB/s or None) for --list's plans."""
    from gemmlab.errors import InputError, ToolMissing
    from gemmlab.hardware import find_gpu

    if sms is not None and gpu is not None:
        raise InputError("give --sms or --gpu, not both")
    if sms is not None:
        if sms < 1:
            raise InputError(f"--sms {sms}: expected the number of SMs, 1 or more")
        return sms, f"{sms} SMs (--sms)", None
    if gpu is not None:
        spec = find_gpu(gpu)
        if spec is None:
            raise InputError(f"--gpu {gpu!r}: not in the spec table; pass --sms")
        return spec.sm_count, f"{spec.sm_count} SMs ({spec.name})", spec.dram_bytes_per_s / 1e9
    try:
        from gemmlab.runtime import device

        info = device.info()
        here = find_gpu(info.name)
        return (info.sm_count, f"{info.sm_count} SMs ({info.name}, this machine)",
                here.dram_bytes_per_s / 1e9 if here is not None else None)
    except ToolMissing:
        spec = find_gpu("h100")
        return (spec.sm_count, f"{spec.sm_count} SMs ({spec.name}: no GPU here; --sms or --gpu for "
                f"another)", spec.dram_bytes_per_s / 1e9)


def _list(options, json_out: bool,
          planned: Optional[tuple[int, str, Optional[float]]] = None) -> None:
    from gemmlab.shapes import grids, shapemap

    items = [{**s.to_dict(), "class": shapemap.shape_class(*s.dims, options.dtype)} for s in options.shapes]
    if planned is not None:
        from gemmlab.runtime import dispatch_tc

        for i in items:
            p = dispatch_tc.plan(options.dtype, i["M"], i["N"], i["K"], planned[0],
                                 dram_gbps=planned[2])
            i["plan"] = {"name": p.name, "why": p.why, "kernel": p.kernel, "ctas": p.ctas,
                         "workspace_bytes": p.workspace_bytes}
    about = grids.GRID_HELP.get(options.grid_name, "shapes given with --shapes")
    if json_out:
        doc = {"grid": options.grid_name, "dtype": options.dtype, "about": about, "grids": grids.GRID_HELP,
               "shapes": items}
        if planned is not None:
            doc["plan_sms"], doc["plan_for"] = planned[:2]
        print_json(doc)
        return
    columns = ("Shape (M×N×K)", "Class", "Label", "Where from")
    rows = [(f"{i['M']}×{i['N']}×{i['K']}", i["class"], i["label"], i["source"]) for i in items]
    caption = f"{about}. Grids: {', '.join(grids.GRIDS)} (--preset NAME); your own: --shapes \"M,N,K;M,N,K\""
    if planned is not None:
        columns += (f"dispatch_{options.dtype} plan", "Why")
        rows = [r + (i["plan"]["name"], i["plan"]["why"]) for r, i in zip(rows, items)]
        caption += (f". Plans for {planned[1]}, 16-byte aligned operands (docs/kernels.md, 'Tensor-core "
                    f"dispatch by shape', has each rule's measurements)")
    print_table(columns, rows, title=f"Grid {options.grid_name!r}: {len(items)} shapes", caption=caption)


def register(app: typer.Typer) -> None:
    app.command("shapes")(table_command(shapes))
