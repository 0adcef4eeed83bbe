"""The compiler's resource report for ladder kernels, on the CPU: ``nvcc -cubin -Xptxas -v``.

For each kernel and architecture: registers per thread, static shared memory, barriers, stack
frame, and spill stores/loads. Tests use it to prove no rung spills; the occupancy calculator can
use registers and shared memory per rung without a GPU. The text compiled is the same translation
unit the runtime compiles (gemmlab.kernels.source), with the same options plus ``-Xptxas -v``.
"""

from __future__ import annotations

import collections
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from gemmlab.kernels.families import Rung
from gemmlab.kernels.source import translation_unit
from gemmlab.runtime.toolchain import BASE_OPTIONS, KernelCompileError, arch_flag, find_nvcc, format_compile_error

DEFAULT_ARCHS: tuple[str, ...] = ("sm_80", "sm_90")


@dataclass(frozen=True)
class Resources:
    """ptxas's report for one kernel on one architecture (bytes unless named otherwise)."""

    kernel: str
    arch: str
    registers: int  # per thread
    barriers: int
    smem: int  # static shared memory per block
    stack_frame: int
    spill_stores: int
    spill_loads: int

    @property
    def spills(self) -> bool:
        return self.spill_stores > 0 or self.spill_loads > 0


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(sm_\w+)'")
_PROPS = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_report(text: str) -> list[Resources]:
    """Every entry function's resources from ptxas ``-v`` output (nvcc's stderr)."""
    out: list[Resources] = []
    cur: dict | None = None

    def flush() -> None:
        if cur is not None and "registers" in cur:
            out.append(Resources(**cur))

    for line in text.splitlines():
        m = _ENTRY.search(line)
        if m:
            flush()
            cur = {"kernel": m.group(1), "arch": m.group(2), "barriers": 0, "smem": 0,
                   "stack_frame": 0, "spill_stores": 0, "spill_loads": 0}
            continue
        if cur is None:
            continue
        m = _PROPS.search(line)
        if m:
            cur["stack_frame"], cur["spill_stores"], cur["spill_loads"] = map(int, m.groups())
            continue
        m = _USED.search(line)
        if m:
            cur["registers"] = int(m.group(1))
            b = _BARRIERS.search(line)
            s = _SMEM.search(line)
            cur["barriers"] = int(b.group(1)) if b else 0
            cur["smem"] = int(s.group(1)) if s else 0
    flush()
    return out


def _target(rung: Rung, arch: str) -> str | None:
    """What ``rung`` compiles for when ``arch`` is asked: the rung's own architecture-specific
    target (sm_90a) on that GPU generation, nothing where the rung cannot run."""
    from gemmlab.kernels.families import arch_refusal, compile_arch

    digits = arch.removeprefix("sm_").rstrip("a")
    if arch_refusal(rung, int(digits[:-1]), int(digits[-1])):
        return None
    return compile_arch(rung, arch)


def _compile_report(nvcc: str, source: str, arch: str, options: Sequence[str]) -> str:
    with tempfile.TemporaryDirectory(prefix="gemmlab-ptxas-") as d:
        src = Path(d) / "unit.cu"
        src.write_text(source, encoding="utf-8")
        cmd = [nvcc, "-cubin", arch_flag(arch), *options, "-Xptxas", "-v",
               "-o", str(Path(d) / "unit.cubin"), str(src)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise KernelCompileError(format_compile_error(
                "unit.cu", "nvcc", arch, cmd[1:-3], source, res.stderr + res.stdout))
        return res.stderr + res.stdout


def resources(rungs: Iterable[Rung], archs: Sequence[str] = DEFAULT_ARCHS, jobs: int = 2,
              nvcc: str | None = None, unit: Callable[[list], str] = translation_unit
              ) -> list[Resources]:
    """Compile every rung for every architecture (one nvcc run per source file and
    architecture, ``jobs`` at a time) and return ptxas's report for each. ``unit`` builds the
    translation unit of kernels sharing a source (``gemmlab.kernels.paths.translation_unit`` for
    the dispatch rung's kernels)."""
    nvcc = nvcc or find_nvcc()
    by_source: dict[str, list[Rung]] = collections.defaultdict(list)
    for r in rungs:
        by_source[r.source].append(r)
    tasks = []
    for rs in by_source.values():
        for target in sorted({a for a in (_target(rs[0], arch) for arch in archs) if a}):
            tasks.append((unit(rs), target))
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        reports = list(pool.map(lambda t: _compile_report(nvcc, t[0], t[1], BASE_OPTIONS), tasks))
    return [res for text in reports for res in parse_ptxas_report(text)]
