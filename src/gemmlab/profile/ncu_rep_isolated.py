"""Read a ``.ncu-rep`` in child processes.

NVIDIA's ``ncu_report`` that ships with Nsight Compute 2025.3.1 crashes (SIGSEGV inside
``IMetric.unit()``) when the reading process has other native libraries loaded — seen on the lent
H100/H200 machines, 2026-11-21, both with CuPy's CUDA context open and inside the ``gemmlab`` CLI
(typer, rich, numpy, matplotlib loaded), while the same report loads fine in a fresh interpreter.
A crash would take the user's command down with no message, so gemmlab always reads reports in a
fresh ``python -m gemmlab.profile.ncu_rep_child PATH``, which prints the decoded launches as
JSON (``ncu_rep.decode``); a user's error in the child comes back as the same one-line error.
``GEMMLAB_NCU_REP_ISOLATE=0`` reads in-process (the child itself runs that way).

A large report is read by several children at once, each loading the report and decoding every K-th
launch (``--shard I/K``): K is one child per 32 MiB of the lean copy ``ncu_rep`` hands over
(``rep_strip``; 8 MiB of a report read as written), at most the idle CPUs (usable CPUs less the load
average) and at most 4 (``GEMMLAB_NCU_REP_PROCS`` overrides). Each child costs ~0.25 s of start-up
and ncu_report set-up, so a report of a few dozen launches is read by one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gemmlab.errors import InputError, ToolMissing, UserError

# A child costs ~0.25 s before its first launch; ncu_report decodes ~35 ms per MiB of a report as
# written (a --set full launch is 1–3 MiB) and ~10 ms per MiB of a lean copy (rep_strip).
SHARD_BYTES = 8 << 20
LEAN_SHARD_BYTES = 32 << 20
MAX_PROCS = 4
CHILD_MODULE = "gemmlab.profile.ncu_rep_child"  # the program each child runs


def isolate() -> bool:
    """Read in a child process unless GEMMLAB_NCU_REP_ISOLATE=0 (as the child itself sets)."""
    return os.environ.get("GEMMLAB_NCU_REP_ISOLATE", "1") != "0"


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def idle_cpus() -> int:
    """Usable CPUs not busy with other work, by the 1-minute load average (at least 1). Children on a
    busy machine only compete: on the shared 2-core development machine at load ~2.3, two children
    read a 100-launch report in 1.25–1.31 s, one in 0.89–0.93 s."""
    cpus = usable_cpus()
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cpus
    return max(1, min(cpus, int(cpus - busy + 0.5)))


def child_count(path: Path, lean: bool = False) -> int:
    """How many children read the report at ``path`` (see the module's docstring)."""
    env = os.environ.get("GEMMLAB_NCU_REP_PROCS", "").strip()
    if env.isdigit() and int(env) >= 1:
        return int(env)
    try:
        size = path.stat().st_size
    except OSError:
        return 1
    return max(1, min(MAX_PROCS, idle_cpus(), size // (LEAN_SHARD_BYTES if lean else SHARD_BYTES)))


def read_in_children(path: Path, selection: str, procs: int | None = None,
                     timeout_s: float = 600.0, source: str | None = None) -> dict:
    """The ``ncu_rep.decode`` payload of the whole report, read by ``procs`` children; ``source``
    names the report in errors when ``path`` is its lean copy."""
    source = source or str(path)
    k = procs or child_count(path, lean=source != str(path))
    env = dict(os.environ, GEMMLAB_NCU_REP_ISOLATE="0")
    children = [
        subprocess.Popen([sys.executable, "-m", CHILD_MODULE, str(path),
                          "--metrics", selection, "--shard", f"{i}/{k}", "--source", source],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        for i in range(k)
    ]
    results = []
    try:
        for p in children:
            out, err = p.communicate(timeout=timeout_s)
            results.append((p.returncode, out, err))
    except subprocess.TimeoutExpired:
        raise UserError(f"{source}: reading the report took more than {timeout_s:.0f} s") from None
    finally:
        for p in children:
            if p.poll() is None:
                p.kill()
                p.wait()
    for code, _, err in results:
        if code != 0:
            raise _error(source, code, err.decode("utf-8", "replace"))
    try:
        payloads = [json.loads(out) for _, out, _ in results]
    except ValueError as e:
        raise UserError(f"{source}: reading the report in a child process failed (bad output: {e})") from None
    return merge(payloads)


def merge(payloads: list[dict]) -> dict:
    """One payload from the shards' payloads (launches in report order)."""
    first = payloads[0]
    launches = sorted((d for p in payloads for d in p["launches"]), key=lambda d: d["id"])
    if any(p["total"] != first["total"] for p in payloads) or len(launches) != first["total"]:
        raise UserError(f"the children reading the report disagree on its launches "
                        f"({[p['total'] for p in payloads]} in all, {len(launches)} decoded)")
    return {**first, "launches": launches}


def _error(source: str, code: int, stderr: str) -> UserError:
    message = (stderr.strip().splitlines() or [f"exit code {code}"])[-1]
    message = message.removeprefix("gemmlab: error: ")
    if code == 3:
        return ToolMissing(message)
    if code == 2:
        return InputError(message)
    return UserError(f"{source}: reading the report in a child process failed ({message})")
