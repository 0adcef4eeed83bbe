"""What the commands share: their options (one name, one meaning, everywhere), input checks that
run before any GPU work, and the progress bar. Commands import this module and nothing from each
other.
"""

from __future__ import annotations

import difflib
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Callable, Optional, Sequence

import typer

from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.timer import TimingOptions
from gemmlab.errors import InputError, UserError
from gemmlab.output import err_console
from gemmlab.problem import parse_shape

DEFAULT_SIZE = 2048  # the first article's M=N=K
LADDERS = ("fp32", "bf16", "fp8")  # --dtype: which ladder (report.ladders names each)

# --- options shared by several commands -------------------------------------------------------
SizeOpt = Annotated[Optional[int], typer.Option("--size", help="Square problem M=N=K (default 2048).")]
RungsOpt = Annotated[Optional[list[str]], typer.Option(
    "--rung", metavar="<name>", help="A rung to run, repeatable or comma-separated (default: the whole ladder).")]
ShapeOpt = Annotated[Optional[str], typer.Option("--shape", help="Problem shape M,N,K (any positive sizes).")]
RepeatsOpt = Annotated[Optional[int], typer.Option("--repeats", help="Measured runs per kernel (default: from --rep-ms).")]
WarmupOpt = Annotated[float, typer.Option("--warmup-ms", help="Warm-up budget per kernel, ms of kernel time.")]
RepOpt = Annotated[float, typer.Option("--rep-ms", help="Measurement budget per kernel, ms of kernel time.")]
NoFlushOpt = Annotated[bool, typer.Option("--no-l2-flush", help="Do not flush L2 between runs (measures a warm cache).")]
SeedOpt = Annotated[int, typer.Option("--seed", help="Seed of the random inputs (checks draw fresh values each time).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the results as JSON instead of a table.")]
CsvOpt = Annotated[bool, typer.Option(
    "--csv", help="Print the tables as CSV instead (the cells the table shows; several tables: '# title' blocks).")]
OutOpt = Annotated[Optional[Path], typer.Option("--out", help="Also write the results to this JSON file.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace an existing output file.")]
DbOpt = Annotated[Optional[Path], typer.Option(
    "--db", help="Results database (default $GEMMLAB_DB or ~/.local/share/gemmlab/runs.sqlite).")]
NoStoreOpt = Annotated[bool, typer.Option("--no-store", help="Do not append this run to the results database.")]
NcuOpt = Annotated[Optional[str], typer.Option("--ncu", help="Path of ncu (else $GEMMLAB_NCU, PATH, install folders).")]
CaptureOpt = Annotated[
    Optional[str], typer.Option("--from-capture", help="An Nsight Compute capture (.ncu-rep or CSV export).")
]
KernelOpt = Annotated[Optional[str], typer.Option(
    "--kernel", "-k", help="Only kernels whose name matches this regular expression.")]
DtypeOpt = Annotated[str, typer.Option(
    "--dtype", help="Which ladder: fp32 (the SGEMM ladder), bf16 (the tensor-core ladder: bf16 A, B, FP32 accumulate, "
    "bf16 C; cuBLAS at its best with the same types: the fastest of cublasGemmEx's default and cuBLASLt's heuristic "
    "algorithms at the run's shape) or fp8 (e4m3 A (M x K) and B given N x K - 'TN', B transposed, both K-major as "
    "8-bit wgmma needs - FP32 accumulator, bf16 C, sm_90a; cuBLASLt FP8 at its best with the same types, FAST_ACCUM "
    "on and off).")]


def renamed(value: Any, old_value: Any, new: str, old: str, unset: Any = None) -> Any:
    """The value of option ``new``, or of ``old`` (its former name, hidden from --help) with a
    warning; both given is refused. ``unset``: ``new``'s default, to tell whether it was given."""
    if old_value is None or old_value is False or old_value == []:
        return value
    if value != unset:
        raise InputError(f"{old} is the former name of {new}: give {new} only")
    from gemmlab.output import warn

    warn(f"{old} is now {new}; the old name will be removed in a later version")
    return old_value


def hidden(name: str, kind: type = str) -> Any:
    """A former option name, still accepted (see ``renamed``)."""
    return Annotated[Optional[kind], typer.Option(name, hidden=True)]  # type: ignore[valid-type]


def check_dtype(dtype: str) -> str:
    if dtype not in LADDERS:
        *first, last = LADDERS
        raise InputError(f"--dtype {dtype!r}: expected {', '.join(first)} or {last}")
    return dtype


def resolve_shape(size: Optional[int], shape: Optional[str]) -> tuple[int, int, int]:
    """--size N (square) or --shape M,N,K; 2048 cubed by default; within the kernels' limits."""
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


def timing_options(warmup_ms: float, rep_ms: float, repeats: Optional[int], no_l2_flush: bool) -> TimingOptions:
    return TimingOptions(warmup_ms=warmup_ms, rep_ms=rep_ms, repeats=repeats, flush_l2=not no_l2_flush)


def select_rungs(names: Optional[Sequence[str] | str], default: Sequence[Any], flag: str = "--rung") -> list[Any]:
    """Rungs named by ``--rung a,b --rung c`` (any registered rung or sweep variant), else ``default``."""
    from gemmlab.kernels import registry

    if names is None or (not isinstance(names, str) and not names):
        return list(default)
    known = {r.name: r for r in registry.all_rungs(None)}
    names = ",".join([names] if isinstance(names, str) else names)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        raise InputError(f"{flag} expects comma-separated rung names, got {names!r}")
    unknown = [n for n in wanted if n not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(known), n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise InputError(
            f"{flag}: unknown rung {unknown[0]!r}; {hint}`gemmlab kernels --with-sweep` lists all {len(known)} names"
        )
    return [known[n] for n in wanted]


def require_gpu() -> None:
    from gemmlab.runtime.device import require_gpu as _require

    _require()


def progress_run(job: Callable[[Callable[[str, int, int, str], None]], Any]) -> Any:
    """Run ``job(progress)`` under a rich progress bar on stderr; a GPU out-of-memory error becomes
    one line."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task("starting", total=None)

        def progress(name: str, i: int, total: int, phase: str) -> None:
            bar.update(task, total=total, completed=i + (phase == "done"), description=f"{name}: {phase}")

        try:
            return job(progress)
        except Exception as e:
            if type(e).__name__ == "OutOfMemoryError":  # cupy.cuda.memory.OutOfMemoryError
                raise UserError(f"the GPU ran out of memory ({e}); try a smaller problem") from None
            raise


def fail_on_wrong(what: Sequence[str], noun: str = "kernel(s)") -> None:
    """Exit 1 naming what failed its correctness check (after everything was shown and kept)."""
    if what:
        raise UserError(f"{len(what)} {noun} failed the correctness check: {', '.join(what)}", code=1)


def load_launches(path: str, kernel: Optional[str]) -> list:
    """Kernel launches of a capture, those whose name matches the regex ``kernel`` when given."""
    from gemmlab.profile.load import load

    launches = load(path, kernel)
    if not launches:
        raise InputError(f"--from-capture {path}: no kernel launches in the file")
    return launches


_FORMAT_FLAGS = {"json_out": "--json", "as_json": "--json", "markdown": "--markdown"}


def table_command(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with a ``--csv`` option after its ``--json``: under it every table the command prints
    is written as CSV (``output.csv_tables``). Given with another output format, it is refused."""
    import functools
    import inspect
    import typing

    from gemmlab.output import csv_tables

    sig = inspect.signature(fn, eval_str=True)
    params = list(sig.parameters.values())
    at = next((i + 1 for i, p in enumerate(params) if p.name in _FORMAT_FLAGS), len(params))
    params.insert(at, inspect.Parameter("csv_out", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=CsvOpt))
    params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
              else p for p in params]

    @functools.wraps(fn)
    def command(*args: Any, csv_out: bool = False, **kwargs: Any) -> Any:
        other = [flag for name, flag in _FORMAT_FLAGS.items() if kwargs.get(name)]
        if csv_out and other:
            raise InputError(f"--csv and {other[0]}: choose one output format")
        with csv_tables(csv_out):
            return fn(*args, **kwargs)

    command.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    command.__annotations__ = {**typing.get_type_hints(fn, include_extras=True), "csv_out": CsvOpt}
    return command


@contextmanager
def kept_if_stopped(record: Any, *, db: Optional[Path], no_store: bool, out: Optional[Path], force: bool):
    """Around work done after a run was measured (profiling it, minutes under ncu): if that work fails
    or is interrupted, the measured run is kept first (stored, --out written), then the error goes on."""
    from gemmlab.workflows.keep import keep

    try:
        yield
    except BaseException:
        try:
            kept = keep(record, db=db, no_store=no_store, out=out, force=force)
            where = [f"stored as run {kept.record.run_id} in {kept.db}"] if kept.db else []
            where += [f"written to {out}"] if out is not None else []
            if where:
                err_console.print(f"gemmlab: the measured run was kept ({' and '.join(where)}); profiling did not finish",
                                  highlight=False, markup=False)
        except UserError as e:
            err_console.print(f"gemmlab: {e.message}", highlight=False, markup=False)
        raise
