"""Run a user's code in a child process with a time limit: its crash or hang never takes gemmlab down.

A kernel that reads out of bounds leaves the CUDA context unusable ("an illegal memory access was
encountered": every later call in that process fails), a kernel that never exits spins the GPU
until the process dies, and a segfault in a user's Python extension ends the process. So the user's
code runs in ``python -m <module> JOB RESULT``: the parent writes the job as JSON, the child writes
its result as JSON (atomically) and exits; the parent

- forwards the child's progress lines (``PROGRESS_PREFIX`` + JSON on stderr) to a callback and keeps
  the other stderr lines (the last ones explain a failure);
- kills the child's whole process group when the time limit passes (``ChildTimeout``);
- turns a death by signal or an exit without a result into ``ChildFailed`` with one line: the signal
  or exit code and the child's last error line (a CUDA error names itself there).

Ctrl-C reaches the child too (same foreground process group); the parent then kills it and lets the
KeyboardInterrupt through, so the command exits 130.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from gemmlab.errors import UserError

PROGRESS_PREFIX = "@@gemmlab-progress "
ERROR_PREFIX = "gemmlab: error: "
TAIL_LINES = 20


class ChildFailed(UserError):
    """The child died (signal, crash) or exited without a result. Exit code 1: the user's code failed."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=1)


class ChildTimeout(ChildFailed):
    """The child ran past its time limit and was killed."""


@dataclass
class ChildRun:
    returncode: int
    result: Optional[dict]
    stderr_tail: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def _signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def last_error(lines: Sequence[str]) -> str:
    """The child's most telling stderr line: its own one-line error, else a CUDA/Python error line,
    else the last line."""
    for line in reversed(lines):
        if line.startswith(ERROR_PREFIX):
            return line[len(ERROR_PREFIX):]
    for line in reversed(lines):
        if any(w in line for w in ("CUDA", "cuda", "Error", "error", "illegal", "Segmentation")):
            return line.strip()
    return lines[-1].strip() if lines else ""


def run_child(argv_prefix: Sequence[str], job: dict, *, what: str, timeout_s: float,
              on_progress: Optional[Callable[[dict], None]] = None, env: Optional[dict] = None) -> ChildRun:
    """Run ``argv_prefix + [JOB, RESULT]`` with ``job`` written to JOB; the parsed RESULT.

    ``what`` names the user's input in errors ("my_sgemm.cu"). A child that exits with a code and
    a one-line error (``gemmlab: error: ...``) but no result re-raises it as a UserError with that
    code (2: the user's input, 3: a missing tool or GPU), so the parent exits as the child would
    have. Raises ChildTimeout / ChildFailed as the module docstring says."""
    with tempfile.TemporaryDirectory(prefix="gemmlab-child-") as d:
        job_path, result_path = Path(d) / "job.json", Path(d) / "result.json"
        job_path.write_text(json.dumps(job), encoding="utf-8")
        t0 = time.perf_counter()
        proc = subprocess.Popen([*argv_prefix, str(job_path), str(result_path)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True, env=env)
        tail: list[str] = []
        reader = threading.Thread(target=_read_stderr, args=(proc, tail, on_progress), daemon=True)
        reader.start()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill(proc)
            reader.join(timeout=5)
            raise ChildTimeout(f"{what}: no result after {timeout_s:g} s (a hang, or a very slow kernel); the "
                               f"child process was killed. Allow longer with --timeout SECONDS") from None
        except KeyboardInterrupt:
            _kill(proc)
            raise
        reader.join(timeout=5)
        wall = time.perf_counter() - t0
        result = None
        if result_path.is_file():
            try:
                result = json.loads(result_path.read_text(encoding="utf-8"))
            except ValueError:
                result = None
        rc = proc.returncode
        if result is not None:
            return ChildRun(rc, result, tail, wall)
        said = last_error(tail)
        if rc < 0:
            raise ChildFailed(f"{what}: the process running it died with {_signal_name(rc)}"
                              + (f": {said}" if said else "") + " (gemmlab and the store are unaffected)")
        if rc in (2, 3) and said:
            raise UserError(said, code=rc)
        raise ChildFailed(f"{what}: the process running it exited with code {rc} and no result"
                          + (f": {said}" if said else ""))


def _read_stderr(proc: subprocess.Popen, tail: list[str], on_progress: Optional[Callable[[dict], None]]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        line = line.rstrip("\n")
        if line.startswith(PROGRESS_PREFIX):
            if on_progress is not None:
                try:
                    on_progress(json.loads(line[len(PROGRESS_PREFIX):]))
                except (ValueError, TypeError):
                    pass
            continue
        tail.append(line)
        if len(tail) > TAIL_LINES:
            del tail[0]


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the child's process group (it may have started processes of its own), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


# --- the child's side -------------------------------------------------------------------------
def progress_line(name: str, i: int, total: int, phase: str) -> None:
    """Report progress to the parent (one stderr line it parses)."""
    print(PROGRESS_PREFIX + json.dumps({"name": name, "i": i, "total": total, "phase": phase}),
          file=sys.stderr, flush=True)


def write_result(path: Path, result: Any) -> None:
    """The child's result, written whole or not at all (the parent reads a missing file as a failure)."""
    from gemmlab.fileio import write_atomic

    write_atomic(path, json.dumps(result))
