"""The compiler toolchain facts every compiling module shares: the options ladder kernels are built
with, where nvcc is, how to name a target architecture, which compilers are available, and the one
error a failed compile raises (with numbered source around each line the log names).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Sequence

from gemmlab.errors import ToolMissing, UserError

BASE_OPTIONS: tuple[str, ...] = ("-std=c++17", "-lineinfo")

class KernelCompileError(UserError):
    """The compiler rejected a kernel. The message's first line names the kernel, compiler,
    architecture and options; the rest is the compiler's log and the numbered source lines it
    points at."""


_LOG_LINE = re.compile(r"\((\d+)\): (?:catastrophic )?(?:error|warning)")


def format_compile_error(name: str, compiler: str, arch: str, options: Sequence[str],
                         source: str, log_text: str, context: int = 2) -> str:
    """The KernelCompileError message: a summary line, the log, and numbered source lines
    around each line the log names (the whole source, numbered, when it names none)."""
    lines = source.splitlines()
    wanted: set[int] = set()
    for m in _LOG_LINE.finditer(log_text):
        n = int(m.group(1))
        wanted.update(range(max(1, n - context), min(len(lines), n + context) + 1))
    if not wanted:
        wanted = set(range(1, len(lines) + 1))
    width = len(str(len(lines)))
    shown, prev = [], 0
    for n in sorted(wanted):
        if prev and n != prev + 1:
            shown.append(" " * width + " | ...")
        shown.append(f"{n:>{width}} | {lines[n - 1]}")
        prev = n
    return (f"compiling {name} for {arch} with {compiler} failed (options: {' '.join(options)})\n"
            f"{log_text.rstrip()}\n--- source ---\n" + "\n".join(shown))


def find_nvcc() -> str:
    """Path of nvcc: PATH first, then $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin."""
    found = shutil.which("nvcc")
    if found:
        return found
    for base in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if base and (Path(base) / "bin" / "nvcc").is_file():
            return str(Path(base) / "bin" / "nvcc")
    raise ToolMissing("nvcc not found on PATH, $CUDA_HOME/bin or /usr/local/cuda/bin; the "
                      "kernel resource report needs the CUDA toolkit's compiler")


def arch_flag(arch: str) -> str:
    """nvcc's target option for ``arch``. Architecture-specific targets (sm_90a: wgmma,
    setmaxnreg) use the -gencode form: with nvcc 13.0 the -arch=sm_90a shorthand also runs a
    plain sm_90 pass that rejects those instructions."""
    if arch.endswith("a"):
        return f"-gencode=arch=compute_{arch.removeprefix('sm_')},code={arch}"
    return f"-arch={arch}"


def available_backends() -> tuple[str, ...]:
    """Compilers gemmlab can build with: NVRTC (CuPy's), and nvcc where it is installed."""
    try:
        find_nvcc()
    except ToolMissing:
        return ("nvrtc",)
    return ("nvrtc", "nvcc")
