"""Read a ``.ncu-rep`` in a child process.

NVIDIA's ``ncu_report`` that ships with Nsight Compute 2025.3.1 crashes (SIGSEGV inside
``IMetric.unit()``) when the reading process has other native libraries loaded — seen on the lent
H100/H200 machines, 2026-11-21, both with CuPy's CUDA context open and inside the ``gemmlab`` CLI
(typer, rich, numpy, matplotlib loaded), while the same report loads fine in a fresh interpreter.
A crash would take the user's command down with no message, so gemmlab always reads reports in a
fresh ``python -m gemmlab.profile.ncu_rep_isolated PATH``, which prints the records as JSON; a
user's error in the child comes back as the same one-line error. ``GEMMLAB_NCU_REP_ISOLATE=0``
reads in-process (the child itself runs that way).
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

def isolate() -> bool:
    """Read in a child process unless GEMMLAB_NCU_REP_ISOLATE=0 (as the child itself sets)."""
    return os.environ.get("GEMMLAB_NCU_REP_ISOLATE", "1") != "0"


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
