"""``gemmlab bench FILE`` for a user's own kernel: read it, run it isolated, place it, keep it.

``read_input`` turns the command's argument into a ``UserInput`` (a ``.cu`` file and its
declaration, or ``file.py[:fn]``), checking everything that can be checked without a GPU. The
measuring runs in a child process (``bench.isolate`` / ``bench.user_child``); this module turns its
result into a run record of kind ``user`` with the kernel's identity (name, file, source text and
its SHA-256 — the version key of ``gemmlab history``) and its place on the ladder.

The ladder to place it on is the newest stored ladder run at the same shape, dtype and GPU; when
there is none, the child measures the rungs once after the kernel, and that ladder run is stored
too (so the next version is placed against the same numbers, and quickly).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from gemmlab.bench.isolate import ChildFailed, run_child
from gemmlab.bench.results import RunRecord, load_record
from gemmlab.errors import InputError, UserError

CHILD = (sys.executable, "-m", "gemmlab.bench.user_child")
DEFAULT_TIMEOUT_S = 600.0  # a naive FP32 kernel at 8192³ takes seconds per launch; the ladder more
CUDA_SUFFIXES = (".cu", ".cuh")


class WrongResult(UserError):
    """The kernel's output failed the check: it is shown, never timed. Exit code 1."""

    def __init__(self, message: str, failed: dict) -> None:
        super().__init__(message, code=1)
        self.failed = failed


@dataclass(frozen=True)
class UserInput:
    arg: str  # as the user typed it
    path: Path
    text: str
    entry: str  # "cuda" | "python"
    function: Optional[str] = None  # python: the callable's name
    decl: Any = None  # cuda: kernels.declared.Declaration
    flags: Mapping[str, str] = None  # type: ignore[assignment]

    @property
    def name(self) -> str:
        if self.decl is not None:
            return self.decl.name
        return self.path.stem if not self.function or self.function == "custom_kernel" else f"{self.path.stem}.{self.function}"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def meta(self) -> dict:
        """The kernel's identity, kept with every run of it."""
        return {"name": self.name, "entry": self.entry, "file": str(self.path.resolve()),
                "function": self.decl.kernel if self.decl is not None else self.function,
                "source_sha256": self.sha256, "source": self.text,
                "declaration": self.decl.to_dict() if self.decl is not None else {}}


def is_user_input(arg: str) -> bool:
    """Whether a bench/profile argument names a user's file rather than a rung."""
    base = arg.split(":", 1)[0] if ".py:" in arg else arg
    return base.endswith(CUDA_SUFFIXES + (".py",))


def read_input(arg: str, flags: Optional[Mapping[str, str]] = None) -> UserInput:
    """The user's kernel named by ``arg`` (``my.cu``, ``file.py`` or ``file.py:fn``), read and declared."""
    file, _, function = arg.partition(":") if ".py:" in arg else (arg, "", "")
    path = Path(file)
    if not path.is_file():
        raise InputError(f"{file}: no such file; expected a CUDA source (.cu) with a GEMM kernel, or a Python "
                         f"file (file.py:function)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{file}: cannot be read as UTF-8 text ({e})") from None
    flags = {k: v for k, v in (flags or {}).items() if v not in (None, "")}
    if path.suffix == ".py":
        if flags:
            raise InputError(f"{file}: {', '.join('--' + k for k in flags)} declare a .cu kernel's launch; a Python "
                             f"entry launches its own kernels")
        return UserInput(arg, path, text, "python", function or None, None, {})
    if path.suffix not in CUDA_SUFFIXES:
        raise InputError(f"{file}: expected a .cu file (or file.py:function), got {path.suffix or 'no suffix'}")
    from gemmlab.kernels.declared import declare

    return UserInput(arg, path, text, "cuda", None, declare(path, text, flags), flags)


def ladder_for_placement(db: Optional[Path], gpu: Optional[str], dtype: str,
                         shape: tuple[int, int, int]) -> Optional[RunRecord]:
    """The newest stored ladder run at ``shape`` and ``dtype`` on ``gpu`` (None: none, or no store)."""
    from gemmlab.store import Store, default_path

    path = db if db is not None else default_path()
    if not Path(path).is_file():
        return None
    try:
        with Store(path, create=False) as store:
            for summary in store.list_runs(limit=200, kind="ladder"):
                record = store.load_record(summary.id)
                s = record.meta.get("shape") or {}
                if ((s.get("M"), s.get("N"), s.get("K")) == shape and record.meta.get("dtype", "fp32") == dtype
                        and (gpu is None or record.gpu == gpu) and record.reference_at(shape) is not None):
                    return record
    except UserError:
        return None
    return None


LADDER_DTYPES = ("fp32", "bf16", "fp8")  # the dtypes gemmlab has a ladder of (fp16 has none to place on)


def placement_rungs(dtype: str, shape: tuple) -> list[str]:
    """The rungs measured for placement when no ladder run is stored: those that take the shape
    (TMA rungs refuse K or N off a 16-byte pitch), without the autotuned ones (they tune for minutes
    on a first run)."""
    from gemmlab.kernels import registry

    return [r.name for r in registry.ladder(dtype) if r.name not in registry.AUTOTUNED and r.refusal(*shape) is None]


def place(record: RunRecord, ladder: Optional[RunRecord]) -> Optional[dict]:
    from gemmlab.analysis.placement import place as _place
    from gemmlab.analysis.placement import rungs_of

    if ladder is None:
        return None
    user = next((r for r in record.rows if not r.reference), None)
    pct = record.pct_of_reference(user) if user is not None else None
    if pct is None:
        return None
    where = ladder.source or (f"run {ladder.run_id}" if ladder.run_id else "measured in this run")
    return _place(pct, rungs_of(ladder), f"the {record.meta.get('dtype', 'fp32')} ladder at this shape ({where})").to_dict()


@dataclass(frozen=True)
class UserRun:
    record: RunRecord  # kind "user", with meta["kernel"] and meta["placement"]
    ladder: Optional[RunRecord]  # a ladder run measured for placement (to store), else None


def bench_user(inp: UserInput, shape: Any, timing: dict, *, alpha: float = 1.0, beta: float = 0.0, seed: int = 0,
               cublas: bool = True, db: Optional[Path] = None, gpu: Optional[str] = None, place_it: bool = True,
               timeout_s: float = DEFAULT_TIMEOUT_S, progress: Optional[Callable[[str, int, int, str], None]] = None,
               child: tuple = CHILD) -> UserRun:
    """Run the user's kernel isolated and build its record (see the module docstring)."""
    stored = None
    rungs: list[str] = []
    dtype = inp.decl.dtype if inp.decl is not None else None
    if inp.entry == "cuda" and place_it and cublas and dtype in LADDER_DTYPES:
        stored = ladder_for_placement(db, gpu, dtype, tuple(shape))
        rungs = [] if stored is not None else placement_rungs(dtype, tuple(shape))
    job = {"entry": inp.entry, "file": str(inp.path.resolve()), "text": inp.text, "flags": dict(inp.flags or {}),
           "function": inp.function, "name": inp.name, "mode": "bench", "shape": None if shape is None else (list(shape) if not isinstance(shape, dict) else shape),
           "alpha": alpha, "beta": beta, "timing": timing, "seed": seed, "cublas": cublas, "ladder": rungs}

    def forward(event: dict) -> None:
        if progress is not None:
            progress(str(event.get("name")), int(event.get("i", 0)), int(event.get("total", 1)), str(event.get("phase")))

    result = run_child(child, job, what=inp.arg, timeout_s=timeout_s, on_progress=forward).result or {}
    status = result.get("status")
    if status == "error":
        raise UserError(str(result.get("message")), code=int(result.get("code", 2)))
    if status == "crash":
        raise ChildFailed(f"{inp.arg}: {result.get('message')} (nothing was timed; gemmlab and the store are unaffected)")
    if status == "wrong":
        raise WrongResult(wrong_message(inp.arg, result["failed"]), result["failed"])
    if status != "ok":
        raise ChildFailed(f"{inp.arg}: the child process returned no result (status {status!r})")
    record = load_record(result["record"], inp.arg)
    ladder = load_record(result["ladder"], "the ladder measured for placement") if result.get("ladder") else None
    if inp.entry == "python" and place_it and cublas and "M" in (record.meta.get("shape") or {}):
        # a Python GEMM's dtype is known only once it ran: its ladder is looked up (or measured) now
        s = record.meta["shape"]
        dims, dtype = (s["M"], s["N"], s["K"]), str(record.meta.get("dtype", "fp32"))
        stored = ladder_for_placement(db, gpu, dtype, dims)
        if stored is None and dtype in LADDER_DTYPES:
            try:
                ladder = measure_ladder(dtype, dims, timing, seed, child, timeout_s, forward)
            except UserError as e:  # the kernel's own run stands without a place on the ladder
                record = replace(record, meta={**record.meta, "placement_error": e.message})
    meta = {**record.meta, "kernel": inp.meta()}
    placement = place(record, ladder or stored)
    if placement is not None:
        meta["placement"] = placement
    return UserRun(replace(record, meta=meta), ladder)


def measure_ladder(dtype: str, shape: tuple, timing: dict, seed: int, child: tuple, timeout_s: float,
                   on_progress: Callable[[dict], None]) -> Optional[RunRecord]:
    """The ladder's rungs at ``shape`` measured in a child of their own (for placing a Python entry)."""
    job = {"entry": "ladder", "mode": "bench", "shape": list(shape), "timing": timing, "seed": seed,
           "ladder": placement_rungs(dtype, tuple(shape))}
    result = run_child(child, job, what=f"the {dtype} ladder at {'x'.join(map(str, shape))}", timeout_s=timeout_s,
                       on_progress=on_progress).result or {}
    if result.get("status") != "ok":
        raise ChildFailed(f"measuring the {dtype} ladder for placement failed: {result.get('message')}")
    return load_record(result["record"], "the ladder measured for placement")


def wrong_message(what: str, failed: dict) -> str:
    """One line: where the check failed and why, and that nothing was timed."""
    shape = failed.get("shape")
    if isinstance(shape, (list, tuple)) and len(shape) == 3:
        at, size = "M,N,K=" + ",".join(str(v) for v in shape), shape[0] * shape[1]
    else:  # a spec's keyword set (or KernelBench's get_inputs())
        at, size = ", ".join(f"{k}={v}" for k, v in (shape or {}).items()) or "get_inputs()", "?"
    c = failed.get("check") or {}
    parts = [str(c.get("reason") or "wrong result")]
    if c.get("n_unwritten"):
        parts.append(f"{c['n_unwritten']} of {size} elements never written "
                     f"(first at row, col {tuple(c.get('first_unwritten') or ())})")
    if c.get("n_guard_written"):
        parts.append(f"{c['n_guard_written']} elements written past the end of C")
    if c.get("n_over_bound"):
        parts.append(f"{c['n_over_bound']} elements outside the error bound (first at {tuple(c.get('first_over_bound') or ())})")
    return f"{what}: wrong result at {at}: " + "; ".join(parts) + " - not timed"
