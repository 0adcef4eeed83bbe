"""Read a ``.ncu-rep`` in a child process when the CUDA stack is already loaded here.

NVIDIA's ``ncu_report`` that ships with Nsight Compute 2025.3.1 crashes (SIGSEGV inside
``IMetric.unit()``) in a process that has CuPy's CUDA libraries loaded and a context open — seen on
the lent H100, 2026-11-21: the same report loads fine in a fresh process. ``gemmlab ladder
--profile`` and the GPU tests are such processes, so there the report is read by
``python -m gemmlab.profile.ncu_rep_isolated PATH``, which prints the records as JSON; a user's
error in the child comes back as the same one-line error here.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

from gemmlab.errors import InputError, ToolMissing, UserError
from gemmlab.profile.records import KernelLaunch, Metric, RuleResult

# Modules whose import puts a CUDA runtime and context into this process.
CUDA_MODULES = ("cupy", "torch", "jax", "numba.cuda", "pycuda")


def cuda_loaded() -> bool:
    """True when reading in-process is unsafe: a CUDA stack is imported (or GEMMLAB_NCU_REP_ISOLATE=1)."""
    if os.environ.get("GEMMLAB_NCU_REP_ISOLATE") == "1":
        return True
    return any(m in sys.modules for m in CUDA_MODULES)


def to_json(launches: list[KernelLaunch]) -> str:
    def enc(k: KernelLaunch) -> dict:
        d = dataclasses.asdict(k)
        d["metrics"] = {n: [m.value, m.unit] for n, m in k.metrics.items()}
        return d

    return json.dumps([enc(k) for k in launches])


def from_json(text: str) -> list[KernelLaunch]:
    out = []
    for d in json.loads(text):
        d["metrics"] = {n: Metric(v, u) for n, (v, u) in d["metrics"].items()}
        d["rules"] = [RuleResult(**r) for r in d["rules"]]
        for dim in ("block", "grid"):
            d[dim] = tuple(d[dim]) if d[dim] is not None else None
        out.append(KernelLaunch(**d))
    return out


def read_in_child(path: Path, timeout_s: float = 600.0) -> list[KernelLaunch]:
    env = dict(os.environ, GEMMLAB_NCU_REP_ISOLATE="0")
    p = subprocess.run([sys.executable, "-m", "gemmlab.profile.ncu_rep_isolated", str(path)],
                       capture_output=True, text=True, timeout=timeout_s, env=env)
    if p.returncode == 0:
        return from_json(p.stdout)
    message = (p.stderr.strip().splitlines() or [f"exit code {p.returncode}"])[-1]
    message = message.removeprefix("gemmlab: error: ")
    if p.returncode == 3:
        raise ToolMissing(message)
    if p.returncode == 2:
        raise InputError(message)
    raise UserError(f"{path}: reading the report in a child process failed ({message})")


def main(argv: list[str]) -> int:
    from gemmlab.profile.ncu_rep import read_rep

    try:
        launches = read_rep(Path(argv[0]))
    except UserError as e:
        print(f"gemmlab: error: {e.message}", file=sys.stderr)
        return e.code
    sys.stdout.write(to_json(launches))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
