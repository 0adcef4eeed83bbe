"""Kernel timeline through CUPTI (via ``torch.profiler``) where Nsight Systems cannot make a report.

The lent H100/H200 machines run ncu but not nsys. CUPTI's activity API records every kernel the
process runs, whichever library launched it (CuPy's too), and ``torch.profiler`` is a maintained
way to switch it on from Python. A small wrapper runs the user's Python program in-process inside
``torch.profiler.profile(activities=[CUDA])``, exports the Chrome trace, and writes the kernel
events (name, duration) as JSON for the parent to summarise like ``cuda_gpu_kern_sum``.

    python -m gemmlab.profile.cupti_timeline --out events.json -- [python] script.py ARGS
    python -m gemmlab.profile.cupti_timeline --out events.json -- [python] -m package.module ARGS

Only Python programs can be run this way (CUPTI is enabled inside the process).
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Optional, Sequence

from gemmlab.profile.timeline import KernelEvent
from gemmlab.errors import InputError, ToolMissing, UserError

WRAPPER_MODULE = "gemmlab.profile.cupti_timeline"


def is_python(exe: str) -> bool:
    name = Path(exe).name
    return name.startswith("python") or exe == sys.executable


def python_program(argv: Sequence[str]) -> list[str]:
    """The program part of a Python command line: ``[python] script.py ARGS`` or ``[python] -m mod ARGS``."""
    args = list(argv)
    if args and is_python(args[0]):
        args = args[1:]
    if not args:
        raise InputError("timeline through CUPTI: no Python program given; expected script.py or -m module")
    if args[0] == "-m":
        if len(args) < 2:
            raise InputError("timeline through CUPTI: -m needs a module name")
        return args
    if args[0].startswith("-") or not args[0].endswith(".py"):
        raise InputError(f"timeline through CUPTI runs Python programs only (script.py or -m module); got "
                         f"{args[0]!r}: install Nsight Systems (nsys) for other programs")
    return args


def kernels_from_trace(trace: dict) -> list[KernelEvent]:
    """Kernel events of a Chrome trace exported by ``torch.profiler`` (``cat: kernel``, ``dur`` in µs)."""
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        raise InputError("trace: no 'traceEvents' list; expected a Chrome trace from torch.profiler")
    out = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or str(e.get("cat", "")).lower() != "kernel":
            continue
        dur_us = e.get("dur")
        if not isinstance(dur_us, (int, float)):
            continue
        ts = e.get("ts")
        out.append(KernelEvent(str(e.get("name", "?")), float(dur_us) * 1e3,
                               float(ts) * 1e3 if isinstance(ts, (int, float)) else None))
    out.sort(key=lambda k: (k.start_ns is None, k.start_ns or 0.0))
    return out


def events_to_json(events: Sequence[KernelEvent], exit_code: int) -> dict:
    return {"exit_code": exit_code,
            "events": [{"name": e.name, "duration_ns": e.duration_ns, "start_ns": e.start_ns} for e in events]}


def events_from_json(data: Any, source: str) -> tuple[list[KernelEvent], int]:
    try:
        return ([KernelEvent(d["name"], float(d["duration_ns"]), d.get("start_ns")) for d in data["events"]],
                int(data["exit_code"]))
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"{source}: not the event file the CUPTI wrapper writes ({e})") from None


# ----------------------------------------------------------------------------- the wrapper (child side)

def _run_program(program: list[str]) -> int:
    code = 0
    try:
        if program[0] == "-m":
            sys.argv = [program[1], *program[2:]]
            runpy.run_module(program[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(program)
            sys.path.insert(0, str(Path(program[0]).resolve().parent))
            runpy.run_path(program[0], run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code


def wrapper_main(argv: Optional[list[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2 or args[0] != "--out":
        print(f"usage: python -m {WRAPPER_MODULE} --out EVENTS.json -- [python] script.py ARGS", file=sys.stderr)
        return 2
    out_path, rest = args[1], args[2:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    try:
        program = python_program(rest)
    except InputError as e:
        print(f"gemmlab.profile.cupti_timeline: error: {e.message}", file=sys.stderr)
        return 2
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("gemmlab.profile.cupti_timeline: error: PyTorch is not importable; it is needed to switch on "
              "CUPTI", file=sys.stderr)
        return 3
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        code = _run_program(program)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as d:
        trace_path = os.path.join(d, "trace.json")
        prof.export_chrome_trace(trace_path)
        with open(trace_path) as f:
            events = kernels_from_trace(json.load(f))
    Path(out_path).write_text(json.dumps(events_to_json(events, code)))
    return code


# ----------------------------------------------------------------------------- the parent side

def cupti_events(app_argv: Sequence[str], timeout_s: float, runner=subprocess.run,
                 python: str = sys.executable) -> tuple[list[KernelEvent], int]:
    """Run a Python program under the CUPTI wrapper; (kernel events, program exit code)."""
    program = python_program(app_argv)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "events.json"
        argv = [python, "-m", WRAPPER_MODULE, "--out", str(out), "--", *program]
        try:
            proc = runner(argv, capture_output=True, text=True, timeout=timeout_s, errors="replace")
        except subprocess.TimeoutExpired:
            raise UserError(f"the program did not finish within {timeout_s:g} s under the CUPTI wrapper; "
                            f"raise --timeout") from None
        if proc.returncode == 3 and "PyTorch is not importable" in (proc.stderr or ""):
            raise ToolMissing("timeline: neither nsys nor PyTorch (for CUPTI through torch.profiler) is available; "
                              "install one of them")
        if not out.exists():
            tail = " | ".join((proc.stderr or "").strip().splitlines()[-3:])
            raise UserError(f"the program crashed under the CUPTI wrapper: exit code {proc.returncode}"
                            + (f"; its last stderr lines: {tail}" if tail else ""))
        return events_from_json(json.loads(out.read_text()), str(out))


if __name__ == "__main__":
    sys.exit(wrapper_main())
