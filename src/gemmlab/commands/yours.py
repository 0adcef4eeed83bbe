"""The command side of a user's own kernel: ``gemmlab bench FILE`` (and ``--profile``, ``--watch``).

Everything that can be wrong with the input (the file, its declaration, the shape it refuses, where
results go) is refused before the GPU is touched. The kernel runs in a child process
(``workflows.user_run``); the ladder run measured for placement is stored first, then the user's
run, so a failure late in the run never loses what was measured.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Optional, Sequence

from gemmlab.commands import show
from gemmlab.commands.common import progress_run, require_gpu
from gemmlab.errors import InputError, UserError
from gemmlab.output import err_console, print_json

DEFAULT_SIZE = 2048  # the first seed article's M = N = K
WATCH_POLL_S = 0.5  # how often --watch looks at the file's modification time


def declare_flags(items: Optional[Sequence[str]]) -> dict[str, str]:
    """``--declare key=value`` (repeatable) as a dict; the keys are the header's."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--declare {item!r}: expected KEY=VALUE, e.g. --declare block=16,16")
        out[key.strip()] = value.strip()
    return out


def user_shape(inp: Any, size: Optional[int], shape: Optional[str]) -> Optional[tuple[int, int, int]]:
    from gemmlab.commands.common import resolve_shape

    if size is None and shape is None and inp.entry == "python":
        return None  # the file's own: a GEMM callable runs at 2048³, a spec at its benchmarks' first shape
    if size is None and shape is None and inp.decl is not None and inp.decl.shape is not None:
        dims = inp.decl.shape
    elif size is None and shape is None:
        dims = (DEFAULT_SIZE,) * 3
    else:
        dims = resolve_shape(size, shape)
    if inp.decl is not None:
        refusal = inp.decl.refusal(*dims)
        if refusal:
            raise InputError(refusal)
        inp.decl.launch(*dims)  # a grid or block past CUDA's limits: now, not in the child
    return dims


def bench_file(arg: str, *, declare: Optional[Sequence[str]], size: Optional[int], shape: Optional[str], alpha: float,
               beta: float, no_cublas: bool, timing: dict, seed: int, json_out: bool, out: Optional[Path], force: bool,
               db: Optional[Path], no_store: bool, no_place: bool, timeout: float, profile: bool, ncu: Optional[str],
               watch: bool) -> None:
    from gemmlab.workflows.keep import check_destinations
    from gemmlab.workflows.user_run import read_input

    flags = declare_flags(declare)
    inp = read_input(arg, flags)
    dims = user_shape(inp, size, shape)
    if inp.decl is not None and not inp.decl.has_scalars and (alpha != 1.0 or beta != 0.0):
        raise InputError(f"{arg}: --alpha/--beta need a kernel that takes alpha and beta; {inp.decl.function} takes "
                         f"({', '.join(inp.decl.args)}) and computes C = A @ B")
    check_destinations(out, force, db, no_store)
    if timeout <= 0:
        raise InputError(f"--timeout {timeout}: expected a number of seconds > 0")
    require_gpu()
    ncu_path = None
    if profile:
        from gemmlab.profile.runner import find_ncu

        ncu_path = find_ncu(ncu)
    once = dict(dims=dims, alpha=alpha, beta=beta, no_cublas=no_cublas, timing=timing, seed=seed, json_out=json_out,
                out=out, force=force, db=db, no_store=no_store, no_place=no_place, timeout=timeout, ncu_path=ncu_path)
    if not watch:
        _once(inp, **once)
        return
    _watch(arg, flags, size, shape, once)


def _once(inp: Any, *, dims: tuple, alpha: float, beta: float, no_cublas: bool, timing: dict, seed: int,
          json_out: bool, out: Optional[Path], force: bool, db: Optional[Path], no_store: bool, no_place: bool,
          timeout: float, ncu_path: Optional[str]) -> None:
    from gemmlab.runtime import device
    from gemmlab.workflows.keep import keep
    from gemmlab.workflows.user_run import bench_user

    gpu = device.info().name
    run = progress_run(lambda p: bench_user(inp, dims, timing, alpha=alpha, beta=beta, seed=seed, cublas=not no_cublas,
                                            db=db, gpu=gpu, place_it=not no_place, timeout_s=timeout, progress=p))
    if run.ladder is not None and not no_store:
        try:
            keep(run.ladder, db=db, no_store=False, out=None, force=False)
        except UserError as e:
            err_console.print(f"gemmlab: the ladder measured for placement was not stored: {e.message}",
                              highlight=False, markup=False)
    record = run.record
    if ncu_path is not None:
        from gemmlab.commands.common import kept_if_stopped
        from gemmlab.workflows.user_profile import profile_user, with_profile

        with kept_if_stopped(record, db=db, no_store=no_store, out=out, force=force):
            result = profile_user(inp, dims, ncu_path, timeout_s=timeout)
        record = with_profile(record, result)
    kept = keep(record, db=db, no_store=no_store, out=out, force=force)
    if json_out:
        print_json(kept.document)
    else:
        show.show(kept.record)
        if ncu_path is not None:
            from gemmlab.commands.profiled import show_hot_lines

            show_hot_lines(kept.record.meta.get("profile") or {})


def _watch(arg: str, flags: dict, size: Optional[int], shape: Optional[str], once: dict) -> None:
    """Bench again each time the file is saved; an error is printed and the watch goes on. Ctrl-C ends it."""
    from gemmlab.workflows.user_run import read_input

    path = Path(arg.split(":", 1)[0] if ".py:" in arg else arg)
    seen = None
    err_console.print(f"watching {path}: bench{' and profile' if once['ncu_path'] else ''} on every save "
                      f"(Ctrl-C stops)", highlight=False, markup=False)
    while True:
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            stamp = None
        if stamp is not None and stamp != seen:
            seen = stamp
            try:
                inp = read_input(arg, flags)
                _once(inp, **{**once, "dims": user_shape(inp, size, shape)})
            except UserError as e:
                err_console.print(f"gemmlab: error: {e.message}", highlight=False, markup=False)
            err_console.print(f"waiting for the next save of {path} ...", highlight=False, markup=False)
        time.sleep(WATCH_POLL_S)


def profile_file(arg: str, *, declare: Optional[Sequence[str]], size: Optional[int], shape: Optional[str], warmup: int,
                 out: Optional[Path], force: bool, ncu: Optional[str], timeout: float, json_out: bool) -> None:
    """``gemmlab profile FILE``: the targeted collection on the user's kernel, the diagnosis, the hot lines."""
    from gemmlab.commands.profiled import show_hot_lines
    from gemmlab.profile.runner import find_ncu
    from gemmlab.workflows.user_profile import profile_user
    from gemmlab.workflows.user_run import read_input

    inp = read_input(arg, declare_flags(declare))
    dims = user_shape(inp, size, shape)
    if out is not None and out.exists() and not force:
        raise InputError(f"--out {out}: file exists; pass --force to replace it")
    if warmup < 0:
        raise InputError(f"--warmup-launches {warmup}: expected 0 or more")
    require_gpu()
    ncu_path = find_ncu(ncu)
    with err_console.status(f"ncu: profiling {inp.name} (targeted collection, source lines)"):
        result = profile_user(inp, dims, ncu_path, timeout_s=timeout, out=out, force=force, warmup=warmup)
    if json_out:
        print_json(result)
        return
    from gemmlab.output import console

    console.print(f"command: {result['command']}", highlight=False, soft_wrap=True, markup=False)
    diag = result.get("diagnosis") or {}
    if diag:
        console.print(f"{inp.name}: {diag.get('category')} ({diag.get('confidence')} confidence) - {diag.get('summary')}",
                      highlight=False, soft_wrap=True, markup=False)
    show_hot_lines(result)
