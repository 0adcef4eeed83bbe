"""gemmlab ladder / bench / sweep / kernels / runs: measure the SGEMM ladder honestly and keep the results.

Inputs are validated before anything touches the GPU; with no GPU (or no CuPy) the measuring
commands say so in one line and exit 3. Every measured run is appended to the SQLite store
(``--db``, ``$GEMMLAB_DB``, default ``~/.local/share/gemmlab/runs.sqlite``) unless ``--no-store``.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, Sequence

import typer

from gemmlab.bench import table
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.timer import TimingOptions
from gemmlab.errors import InputError, UserError
from gemmlab.fileio import write_new
from gemmlab.output import dumps, err_console, print_json, print_table
from gemmlab.problem import parse_shape

DEFAULT_SIZE = 2048  # the first article's M=N=K

# --- shared options -------------------------------------------------------------------------
SizeOpt = Annotated[Optional[int], typer.Option("--size", help="Square problem M=N=K (default 2048).")]
ShapeOpt = Annotated[Optional[str], typer.Option("--shape", help="Problem shape M,N,K (any positive sizes).")]
RepeatsOpt = Annotated[Optional[int], typer.Option("--repeats", help="Measured runs per kernel (default: from --rep-ms).")]
WarmupOpt = Annotated[float, typer.Option("--warmup-ms", help="Warm-up budget per kernel, ms of kernel time.")]
RepOpt = Annotated[float, typer.Option("--rep-ms", help="Measurement budget per kernel, ms of kernel time.")]
NoFlushOpt = Annotated[bool, typer.Option("--no-l2-flush", help="Do not flush L2 between runs (measures a warm cache).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the random inputs (checks draw fresh values each time).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the results as JSON instead of a table.")]
OutOpt = Annotated[Optional[Path], typer.Option("--out", help="Also write the results to this JSON file.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Allow --out to replace an existing file.")]
DbOpt = Annotated[Optional[Path], typer.Option("--db", help="Results database (default $GEMMLAB_DB or ~/.local/share/gemmlab/runs.sqlite).")]
NoStoreOpt = Annotated[bool, typer.Option("--no-store", help="Do not append this run to the results database.")]
DtypeOpt = Annotated[str, typer.Option("--dtype", help="Which ladder: fp32 (the SGEMM ladder), bf16 (the tensor-core ladder: bf16 A, B, FP32 accumulate, bf16 C; cuBLAS at its best with the same types: the fastest of cublasGemmEx's default and cuBLASLt's heuristic algorithms at the run's shape) or fp8 (e4m3 A (M x K) and B given N x K - 'TN', B transposed, both K-major as 8-bit wgmma needs - FP32 accumulator, bf16 C, sm_90a; cuBLASLt FP8 at its best with the same types, FAST_ACCUM on and off).")]
_LADDER_TITLES = {"bf16": "BF16 tensor-core ladder", "fp8": "FP8 (e4m3) tensor-core ladder"}


def check_dtype(dtype: str) -> str:
    if dtype not in ("fp32", "bf16", "fp8"):
        raise InputError(f"--dtype {dtype!r}: expected fp32, bf16 or fp8")
    return dtype


def resolve_shape(size: Optional[int], shape: Optional[str]) -> tuple[int, int, int]:
    if size is not None and shape is not None:
        raise InputError(f"give either --size or --shape, not both (got --size {size} and --shape {shape})")
    if shape is not None:
        M, N, K = parse_shape(shape)
    elif size is not None:
        if size < 1:
            raise InputError(f"--size must be a positive integer, got {size}")
        M = N = K = size
    else:
        M = N = K = DEFAULT_SIZE
    BenchSpec("shape", M, N, K)  # the limits every kernel shares (32-bit indexing)
    return M, N, K


def _registry() -> Any:
    try:
        from gemmlab.kernels import registry
    except ImportError as e:
        raise UserError(f"the kernel registry (gemmlab.kernels.registry) cannot be imported: {e}") from None
    return registry


def select_rungs(names: Optional[str], default: Sequence[Any], flag: str = "--rungs") -> list[Any]:
    """Rungs named in ``--rungs a,b,c`` (any registered rung or sweep variant), else ``default``."""
    if names is None:
        return list(default)
    reg = _registry()
    known = {r.name: r for r in reg.all_rungs(None)}
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise InputError(f"{flag} expects comma-separated rung names, got {names!r}")
    unknown = [n for n in wanted if n not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(known), n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise InputError(
            f"{flag}: unknown rung {unknown[0]!r}; {hint}`gemmlab kernels --sweep` lists all {len(known)} names"
        )
    return [known[n] for n in wanted]


def check_out(out: Optional[Path], force: bool) -> None:
    if out is None:
        return
    if out.exists() and not force:
        raise InputError(f"--out {out}: file exists; pass --force to replace it")
    if out.exists() and out.is_dir():
        raise InputError(f"--out {out}: is a directory; expected a .json file path")
    if not out.parent.exists():
        raise InputError(f"--out {out}: folder {out.parent} does not exist")


def check_db(db: Optional[Path], no_store: bool) -> None:
    if no_store:
        return
    from gemmlab.store import default_path

    path = db if db is not None else default_path()
    if path.is_dir():
        raise InputError(f"--db {path}: is a directory; expected a SQLite file path")


def keep(result: dict, kind: str, meta: dict, *, db: Optional[Path], no_store: bool, out: Optional[Path],
         force: bool) -> None:
    """Store a run (append-only; its id and database go into ``result``) unless ``no_store``, then write
    it as JSON to ``out`` when given (never replacing a file without ``force``)."""
    if not no_store:
        from gemmlab.store import Store

        with Store(db) as store:
            result["run_id"] = store.add_run(kind, result["env"], result["rows"], meta)
            result["db"] = str(store.path)
    if out is not None:
        write_out(out, dumps(result), force)


def write_out(out: Path, text: str, force: bool) -> None:
    """Write ``text`` to ``out``; without ``force`` an existing file is never replaced."""
    try:
        write_new(out, text + "\n", force=force)
    except FileExistsError:
        raise InputError(f"--out {out}: file exists; pass --force to replace it") from None


def _require_gpu() -> None:
    from gemmlab.runtime.device import require_gpu

    require_gpu()


def _progress_run(job: Callable[[Callable[[str, int, int, str], None]], Any]) -> Any:
    """Run ``job(progress)`` under a rich progress bar on stderr."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task("starting", total=None)

        def progress(name: str, i: int, total: int, phase: str) -> None:
            bar.update(task, total=total, completed=i + (phase == "done"), description=f"{name}: {phase}")

        return job(progress)


def _measure(
    command: str,
    rungs: Sequence[Any],
    shape: tuple[int, int, int],
    options: TimingOptions,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    seed: int = 0,
    with_cublas: bool = True,
) -> dict:
    from gemmlab.bench.ladder import measure

    M, N, K = shape
    try:
        result = _progress_run(
            lambda p: measure(
                command, rungs, M, N, K, options, alpha=alpha, beta=beta, seed=seed, with_cublas=with_cublas, progress=p
            )
        )
    except Exception as e:
        if type(e).__name__ == "OutOfMemoryError":  # cupy.cuda.memory.OutOfMemoryError
            raise UserError(f"shape {M},{N},{K}: the GPU ran out of memory ({e}); try a smaller --size") from None
        raise
    return result.to_dict()


def _finish(result: dict, *, json_out: bool, out: Optional[Path], force: bool, db: Optional[Path], no_store: bool,
            sweep: bool = False, after_table=None) -> None:
    """Store, write, print; then exit 1 if any kernel failed its correctness check."""
    meta = {k: result[k] for k in ("shape", "peak", "options", "profile", "dtype", "skipped") if k in result}
    keep(result, result["command"], meta, db=db, no_store=no_store, out=out, force=force)
    if json_out:
        print_json(result)
    else:
        _print_result(result, sweep=sweep)
        if after_table is not None:
            after_table()
    for s in result.get("skipped") or []:
        err_console.print(f"skipped: {s['reason']}", markup=False, highlight=False)
    failed = [r["kernel"] for r in result["rows"] if not r["correct"]]
    if failed:
        raise UserError(f"{len(failed)} kernel(s) failed the correctness check: {', '.join(failed)}", code=1)


def _print_result(result: dict, sweep: bool = False) -> None:
    rows = result["rows"]
    shape = result.get("shape") or {}
    title_shape = f"{shape.get('M')}x{shape.get('N')}x{shape.get('K')}"
    if sweep:
        columns, cells = table.sweep_table(rows)
        print_table(columns, cells, title=f"SGEMM sweep, {title_shape}", caption=table.caption(result))
    else:
        name = _LADDER_TITLES.get(result.get("dtype"), "SGEMM ladder")
        print_table(table.ladder_columns(result), table.ladder_rows(rows), title=f"{name}, {title_shape}", caption=table.caption(result))


def _options(warmup_ms: float, rep_ms: float, repeats: Optional[int], no_l2_flush: bool) -> TimingOptions:
    return TimingOptions(warmup_ms=warmup_ms, rep_ms=rep_ms, repeats=repeats, flush_l2=not no_l2_flush)


# --- commands -------------------------------------------------------------------------------
def ladder(
    size: SizeOpt = None,
    shape: ShapeOpt = None,
    rungs: Annotated[Optional[str], typer.Option("--rungs", help="Comma-separated rungs (default: the whole ladder).")] = None,
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
    ncu: Annotated[Optional[str], typer.Option("--ncu", help="Path of ncu for --profile (else $GEMMLAB_NCU, PATH, install folders).")] = None,
    dtype: DtypeOpt = "fp32",
) -> None:
    """Check and time the SGEMM ladder (or, with --dtype bf16 / fp8, a tensor-core ladder), then cuBLAS, and print Version | Time | GFLOP/s | Speedup | % of cuBLAS."""
    dims = resolve_shape(size, shape)
    check_dtype(dtype)
    if dtype == "fp8" and (profile or profile_full):
        raise InputError("--profile is not wired for --dtype fp8 yet; run without it, or profile the rung with `gemmlab profile`")
    options = _options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_out(out, force)
    check_db(db, no_store)
    selected = select_rungs(rungs, _registry().ladder(dtype))
    _check_run_dtypes(selected, dtype)
    _require_gpu()
    if profile or profile_full:
        from gemmlab.profile.runner import find_ncu

        find_ncu(ncu)  # fail before the timing work, not after it
    result = _measure("ladder", selected, dims, options, seed=seed)
    report = None
    if profile or profile_full:
        from gemmlab.commands.profile import profile_ladder_result
        from gemmlab.workflows.ladder_profile import report_dict

        report = profile_ladder_result(result, ncu=ncu, full=profile_full)
        result["profile"] = report_dict(report)
    _finish(result, json_out=json_out, out=out, force=force, db=db, no_store=no_store,
            after_table=None if report is None else (lambda: _show_profile(report)))


def _check_run_dtypes(selected: Sequence[Any], dtype: Optional[str] = None) -> None:
    """One input/output dtype pair per run (cuBLAS is timed with one), matching --dtype if given."""
    from gemmlab.bench.ladder import run_dtypes

    in_dtype, _ = run_dtypes(selected)
    if dtype is not None and selected and in_dtype != dtype:
        raise InputError(f"--dtype {dtype}: rung {selected[0].name} takes {in_dtype} inputs; pass --dtype {in_dtype}")


def _show_profile(report: dict) -> None:
    from gemmlab.commands.profile import show_ladder_profile

    show_ladder_profile(report, as_json=False)


def bench(
    names: Annotated[list[str], typer.Argument(metavar="RUNG...", help="Rung name(s); see `gemmlab kernels`.")],
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
) -> None:
    """Check and time one kernel (or a few), with cuBLAS in the same process for % of cuBLAS."""
    dims = resolve_shape(size, shape)
    BenchSpec("bench", *dims, alpha=alpha, beta=beta)
    options = _options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_out(out, force)
    check_db(db, no_store)
    selected = select_rungs(",".join(names), (), flag="RUNG")
    _check_run_dtypes(selected)
    _require_gpu()
    result = _measure("bench", selected, dims, options, alpha=alpha, beta=beta, seed=seed, with_cublas=not no_cublas)
    _finish(result, json_out=json_out, out=out, force=force, db=db, no_store=no_store)


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
    dims = resolve_shape(size, shape)
    options = _options(warmup_ms, rep_ms, repeats, no_l2_flush)
    check_out(out, force)
    check_db(db, no_store)
    variants = list(_registry().sweep_variants())
    _require_gpu()
    result = _measure("sweep", variants, dims, options, seed=seed)
    _finish(result, json_out=json_out, out=out, force=force, db=db, no_store=no_store, sweep=True)


def kernels(
    json_out: JsonOpt = False,
    include_sweep: Annotated[bool, typer.Option("--sweep", help="List the sweep variants too.")] = False,
    dtype: DtypeOpt = "fp32",
) -> None:
    """List the ladder's rungs with their one-line summaries."""
    reg = _registry()
    check_dtype(dtype)
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
        title=(f"{_LADDER_TITLES[dtype]} rungs" if dtype in _LADDER_TITLES else "SGEMM ladder rungs")
        + ((" and variants" if dtype != "fp32" else " and sweep variants") if include_sweep else ""),
    )


def runs(
    run_id: Annotated[Optional[int], typer.Argument(help="Show this run (default: list the runs).")] = None,
    db: DbOpt = None,
    limit: Annotated[int, typer.Option("--limit", help="List at most this many runs, newest first.")] = 50,
    json_out: JsonOpt = False,
) -> None:
    """List the stored runs, or show one (its table, or its full record with --json)."""
    from gemmlab.store import Store

    if limit < 1:
        raise InputError(f"--limit must be >= 1, got {limit}")
    with Store(db, create=False) as store:
        if run_id is None:
            summaries = store.list_runs(limit)
            if json_out:
                print_json([s.to_dict() for s in summaries])
                return
            print_table(
                ("Run", "Created (UTC)", "Command", "GPU", "Dtype", "Results", "Kernels"),
                [(s.id, s.created_utc, s.command, s.gpu, s.dtypes, s.n_results, s.kernels) for s in summaries],
                title=f"Stored runs in {store.path}",
            )
            return
        result = store.load_run(run_id)
    if json_out:
        print_json(result)
    elif result.get("command") == "shapes":
        from gemmlab.commands.shapes import show

        show(result)
    elif result.get("command") == "lesson":
        from gemmlab.commands.lesson import show

        show(result)
    else:
        _print_result(result, sweep=result.get("command") == "sweep")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    app.command("ladder")(ladder)
    app.command("bench")(bench)
    app.command("sweep")(sweep)
    app.command("kernels")(kernels)
    app.command("runs")(runs)
