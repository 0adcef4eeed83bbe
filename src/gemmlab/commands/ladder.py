"""gemmlab ladder / bench / sweep / kernels: measure the ladders honestly and keep the results.

Inputs and the places results go (``--out``, ``--db``) are validated before anything touches the
GPU; with no GPU (or no CuPy) the measuring commands say so in one line and exit 3. Every measured
run is appended to the SQLite store (``--db``, ``$GEMMLAB_DB``, default
``~/.local/share/gemmlab/runs.sqlite``) unless ``--no-store``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional, Sequence

import typer

from gemmlab.bench.results import RunRecord
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.timer import TimingOptions
from gemmlab.commands import show
from gemmlab.commands.common import (
    DbOpt,
    DtypeOpt,
    ForceOpt,
    JsonOpt,
    NcuOpt,
    NoFlushOpt,
    NoStoreOpt,
    OutOpt,
    RepeatsOpt,
    RepOpt,
    RungsOpt,
    SeedOpt,
    ShapeOpt,
    SizeOpt,
    WarmupOpt,
    check_dtype,
    fail_on_wrong,
    kept_if_stopped,
    progress_run,
    renamed,
    require_gpu,
    resolve_shape,
    select_rungs,
    table_command,
    timing_options,
)
from gemmlab.errors import InputError
from gemmlab.output import print_json, print_table
from gemmlab.report.ladders import ladder_of
from gemmlab.workflows.keep import check_destinations, keep


def _measure(command: str, rungs: Sequence[Any], shape: tuple[int, int, int], options: TimingOptions, *,
             alpha: float = 1.0, beta: float = 0.0, seed: int = 0, with_cublas: bool = True) -> RunRecord:
    from gemmlab.bench.ladder import measure

    M, N, K = shape
    return progress_run(lambda p: measure(command, rungs, M, N, K, options, alpha=alpha, beta=beta, seed=seed,
                                          with_cublas=with_cublas, progress=p))


def _finish(record: RunRecord, *, json_out: bool, out: Optional[Path], force: bool, db: Optional[Path],
            no_store: bool, after_table=None) -> None:
    """Keep (store, write), print; then exit 1 if any kernel failed its correctness check."""
    kept = keep(record, db=db, no_store=no_store, out=out, force=force)
    if json_out:
        print_json(kept.document)
    else:
        show.show(kept.record)
        if after_table is not None:
            after_table()
    fail_on_wrong([r.name for r in kept.record.failures])


def _check_run_dtypes(selected: Sequence[Any], dtype: Optional[str] = None) -> None:
    """One input/output dtype pair per run (cuBLAS is timed with one), matching --dtype if given."""
    from gemmlab.bench.ladder import run_dtypes

    in_dtype, _ = run_dtypes(selected)
    if dtype is not None and selected and in_dtype != dtype:
        raise InputError(f"--dtype {dtype}: rung {selected[0].name} takes {in_dtype} inputs; pass --dtype {in_dtype}")


# --- commands -------------------------------------------------------------------------------
def ladder(
    size: SizeOpt = None,
    shape: ShapeOpt = None,
    rungs: RungsOpt = None,
    rungs_old: Annotated[Optional[str], typer.Option("--rungs", hidden=True)] = None,
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
    profile: Annotated[bool, typer.Option("--profile", help="Then profile every rung with ncu: adds Profiler signal | Main bottleneck and the 'What actually mattered' ranking.")] = False,
    profile_full: Annotated[bool, typer.Option("--profile-full", help="With --profile: ncu --set full instead of the analyzer's collection.")] = False,
    ncu: NcuOpt = None,
    dtype: DtypeOpt = "fp32",
) -> None:
    """Check and time the SGEMM ladder (or, with --dtype bf16 / fp8, a tensor-core ladder), then cuBLAS, and print Version | Time | GFLOP/s | Speedup | % of cuBLAS."""
    from gemmlab.kernels import registry

    dims = resolve_shape(size, shape)
    check_dtype(dtype)
    if dtype == "fp8" and (profile or profile_full):
        raise InputError("--profile is not wired for --dtype fp8 yet; run without it, or profile the rung with `gemmlab profile`")
    options = timing_options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_destinations(out, force, db, no_store)
    selected = select_rungs(renamed(rungs, rungs_old and [rungs_old], "--rung", "--rungs"), registry.ladder(dtype))
    _check_run_dtypes(selected, dtype)
    require_gpu()
    ncu_path = None
    if profile or profile_full:
        from gemmlab.profile.runner import find_ncu

        ncu_path = find_ncu(ncu)  # fail before the timing work, not after it
    record = _measure("ladder", selected, dims, options, seed=seed)
    report = None
    if ncu_path is not None:
        from gemmlab.commands.profiled import profile_ladder_record, show_ladder_profile
        from gemmlab.workflows.ladder_profile import with_profile

        with kept_if_stopped(record, db=db, no_store=no_store, out=out, force=force):
            report = profile_ladder_record(record, ncu_path, full=profile_full)
        record = with_profile(record, report)
    _finish(record, json_out=json_out, out=out, force=force, db=db, no_store=no_store,
            after_table=None if report is None else (lambda: show_ladder_profile(report, as_json=False)))


def bench(
    names: Annotated[list[str], typer.Argument(
        metavar="RUNG... | FILE.cu | FILE.py[:FN]",
        help="Rung name(s) (see `gemmlab kernels`), or your own kernel: a .cu file with a GEMM kernel (declared "
             "by // gemmlab: comments; docs/your-kernel.md), or a Python file's callable.")],
    size: SizeOpt = None,
    shape: ShapeOpt = None,
    alpha: Annotated[float, typer.Option("--alpha", help="alpha in C = alpha*A@B + beta*C.")] = 1.0,
    beta: Annotated[float, typer.Option("--beta", help="beta in C = alpha*A@B + beta*C (non-zero adds a check pass).")] = 0.0,
    no_cublas: Annotated[bool, typer.Option("--no-cublas", help="Do not time cuBLAS alongside.")] = False,
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
    declare: Annotated[Optional[list[str]], typer.Option(
        "--declare", metavar="KEY=VALUE",
        help="Your .cu kernel: a declaration key, as in its // gemmlab: header (block=16,16, tile=64,64, args=sgemm, "
             "kernel=NAME, grid=..., smem=..., dtype=bf16); overrides the header. Repeatable.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Your kernel: seconds before its process is stopped (a hang).")] = 600.0,
    no_place: Annotated[bool, typer.Option("--no-place", help="Your kernel: do not place it on the ladder (no ladder run).")] = False,
    profile: Annotated[bool, typer.Option("--profile", help="Your kernel: then profile it with ncu: the diagnosis and its hot source lines.")] = False,
    ncu: NcuOpt = None,
    watch: Annotated[bool, typer.Option("--watch", help="Your kernel: bench (and --profile) again each time the file is saved.")] = False,
) -> None:
    """Check and time one kernel (or a few), with cuBLAS in the same process for % of cuBLAS. Your own kernel
    (FILE.cu, FILE.py:FN) is checked at several shapes, timed against cuBLAS in interleaved rounds, placed on
    the ladder and stored as a version of it (gemmlab history NAME)."""
    from gemmlab.workflows.user_run import is_user_input

    if any(is_user_input(n) for n in names):
        from gemmlab.commands.yours import bench_file

        if len(names) != 1:
            raise InputError(f"{' '.join(names)}: bench one file at a time (rungs and files do not mix)")
        if watch and out is not None:
            raise InputError("--watch and --out: every save would replace the file; store the runs (the default) "
                             "and read them with gemmlab history")
        options = timing_options(warmup_ms, rep_ms, repeats, no_l2_flush)
        return bench_file(names[0], declare=declare, size=size, shape=shape, alpha=alpha, beta=beta,
                          no_cublas=no_cublas, timing=options.to_dict(), seed=seed, json_out=json_out, out=out,
                          force=force, db=db, no_store=no_store, no_place=no_place, timeout=timeout,
                          profile=profile, ncu=ncu, watch=watch)
    for flag, given in (("--declare", bool(declare)), ("--no-place", no_place), ("--profile", profile),
                        ("--watch", watch)):
        if given:
            raise InputError(f"{flag} is for your own kernel (FILE.cu or FILE.py:FN); for rungs use gemmlab ladder "
                             f"--profile or gemmlab profile RUNG")
    dims = resolve_shape(size, shape)
    BenchSpec("bench", *dims, alpha=alpha, beta=beta)
    options = timing_options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_destinations(out, force, db, no_store)
    selected = select_rungs(",".join(names), (), flag="RUNG")
    _check_run_dtypes(selected)
    require_gpu()
    record = _measure("bench", selected, dims, options, alpha=alpha, beta=beta, seed=seed, with_cublas=not no_cublas)
    _finish(record, json_out=json_out, out=out, force=force, db=db, no_store=no_store)


def sweep(
    size: SizeOpt = None,
    shape: ShapeOpt = None,
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
) -> None:
    """The first article's sweep: tile size x unroll, block shape, extra syncs — each checked and timed."""
    from gemmlab.kernels import registry

    dims = resolve_shape(size, shape)
    options = timing_options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_destinations(out, force, db, no_store)
    variants = list(registry.sweep_variants())
    require_gpu()
    record = _measure("sweep", variants, dims, options, seed=seed)
    _finish(record, json_out=json_out, out=out, force=force, db=db, no_store=no_store)


def kernels(
    json_out: JsonOpt = False,
    include_sweep: Annotated[bool, typer.Option("--with-sweep", help="List the sweep variants too.")] = False,
    include_sweep_old: Annotated[bool, typer.Option("--sweep", hidden=True)] = False,
    dtype: DtypeOpt = "fp32",
    export: Annotated[Optional[str], typer.Option(
        "--export", metavar="RUNG",
        help="Print RUNG as a user file (its source, includes inlined, and its // gemmlab: launch): copy it, edit "
             "it, gemmlab bench it.")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="With --export: write the file here instead.")] = None,
    force: ForceOpt = False,
) -> None:
    """List the ladder's rungs with their one-line summaries (or --export one as a file of your own)."""
    from gemmlab.kernels import registry as reg

    if export is not None:
        from gemmlab.fileio import write_new
        from gemmlab.kernels.export import user_file

        text = user_file(reg.get(export))
        if out is None:
            print(text, end="")
            return
        try:
            write_new(out, text, force=force)
        except FileExistsError:
            raise InputError(f"--out {out}: file exists; pass --force to replace it") from None
        return
    if out is not None:
        raise InputError("--out is for --export RUNG")

    check_dtype(dtype)
    include_sweep = renamed(include_sweep, include_sweep_old, "--with-sweep", "--sweep", unset=False)
    ladder_rungs = reg.ladder(dtype)
    rungs = list(reg.all_rungs(dtype)) if include_sweep else list(ladder_rungs)
    items = [
        {
            "name": r.name,
            "order": r.order,
            "family": r.family,
            "summary": r.summary,
            "params": dict(r.params),
            "source": r.source,
            "kernel": r.kernel,
            "in_ladder": r in ladder_rungs,
            "dtype": r.dtype,
            "out_dtype": r.out_dtype,
            "arch": r.arch,
        }
        for r in rungs
    ]
    if json_out:
        print_json(items)
        return
    print_table(
        ("#", "Rung", "Family", "Parameters", "Summary"),
        [
            (i["order"], i["name"], i["family"], " ".join(f"{k}={v}" for k, v in i["params"].items()), i["summary"])
            for i in items
        ],
        title=f"{ladder_of(dtype).name} rungs"
        + ((" and variants" if dtype != "fp32" else " and sweep variants") if include_sweep else ""),
    )


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("ladder")(table_command(ladder))
    app.command("bench")(table_command(bench))
    app.command("sweep")(table_command(sweep))
    app.command("kernels")(table_command(kernels))
