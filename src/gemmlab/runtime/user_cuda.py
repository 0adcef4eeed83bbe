"""Compiling and launching a user's own ``.cu`` GEMM kernel as its declaration says.

The source is compiled as the user wrote it, with ``-lineinfo`` always (so a profile maps each stall
sample to the user's file and line) and a ``#line 1 "<absolute path>"`` in front, so the line table
names the user's file even though NVRTC compiles from memory. The file's own directory is on the
include path. NVRTC by default (a template instantiation through a name expression, lowered to its
mangled name by NVRTC); nvcc on request. The cubin is cached like the ladder's
(``runtime.compile.cache_key``: source, options, architecture, the compiler's exact build).

``UserGemm`` is bound to one M x N x K: it computes the launch geometry once, then maps each call's
``(a, b, c, alpha, beta)`` onto the kernel's own parameter order (``Declaration.args``): pointers
for A, B, C, ``int`` for M, N, K, ``float`` for alpha and beta. A kernel without alpha and beta
computes C = A @ B, so it is only called with alpha = 1 and beta = 0.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from gemmlab.errors import InputError
from gemmlab.fileio import write_atomic
from gemmlab.kernels.declared import Declaration
from gemmlab.kernels.families import b_shape
from gemmlab.runtime.compile import cache_dir, cache_key, compiler_build, get_compiler
from gemmlab.runtime.operands import ARRAY_DTYPES
from gemmlab.runtime.toolchain import BASE_OPTIONS, KernelCompileError, arch_flag, format_compile_error

log = logging.getLogger(__name__)

_STATIC_SMEM_LIMIT = 48 * 1024  # above this a block needs the dynamic-shared-memory opt-in


def options_for(path: Path, compiler: str = "nvrtc") -> tuple[str, ...]:
    """The compile options of a user kernel: gemmlab's (C++17, -lineinfo), the file's directory, and
    for NVRTC the CUDA toolkit's headers (``<cuda_fp16.h>``, ``<mma.h>``: nvcc finds its own, NVRTC
    finds none of them by itself)."""
    dirs = [str(path.resolve().parent)] + (cuda_include_dirs() if compiler == "nvrtc" else [])
    return (*BASE_OPTIONS, *(f"-I{d}" for d in dirs))


def cuda_include_dirs() -> list[str]:
    """Folders holding the CUDA toolkit's headers: $CUDA_HOME/$CUDA_PATH, nvcc's toolkit, CuPy's
    CUDA path, /usr/local/cuda, and the headers of NVIDIA's pip wheels (nvidia/*/include)."""
    import glob
    import os
    import shutil

    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    try:
        import cupy

        roots.append(cupy.cuda.get_cuda_path())
    except Exception as e:  # noqa: BLE001 - no CuPy or no toolkit: the other places still count
        log.debug("no CUDA path from CuPy: %s", e)
    roots.append("/usr/local/cuda")
    found = []
    for r in roots:
        if r and (Path(r) / "include" / "cuda_fp16.h").is_file() and str(Path(r) / "include") not in found:
            found.append(str(Path(r) / "include"))
    for site in sys.path:
        for inc in sorted(glob.glob(os.path.join(site, "nvidia", "*", "include"))):
            if (Path(inc) / "cuda_fp16.h").is_file() and inc not in found:
                found.append(inc)
    return found[:1]  # one toolkit's headers: two versions' side by side would mix their definitions


def with_line_directive(text: str, path: Path) -> str:
    """The source as compiled: line 1 of the user's file stays line 1, under its absolute path."""
    return f'#line 1 "{path.resolve()}"\n{text}'


def _nvrtc(source: str, options: Sequence[str], arch: str, path: Path, expression: Optional[str]) -> tuple[bytes, str]:
    from cupy_backends.cuda.libs import nvrtc as nv

    compiler = get_compiler("nvrtc")
    opts = [*options, f"--gpu-architecture={arch}"]
    prog = nv.createProgram(source, str(path.resolve()), (), ())
    try:
        if expression:
            nv.addNameExpression(prog, expression)
        try:
            nv.compileProgram(prog, opts)
        except nv.NVRTCError:
            raise KernelCompileError(format_compile_error(
                str(path), compiler.version, arch, opts, source.split("\n", 1)[1], nv.getProgramLog(prog))) from None
        lowered = nv.getLoweredName(prog, expression) if expression else ""
        return nv.getCUBIN(prog), lowered
    finally:
        nv.destroyProgram(prog)


def _nvcc(source: str, options: Sequence[str], arch: str, path: Path) -> bytes:
    import subprocess
    import tempfile

    compiler = get_compiler("nvcc")
    with tempfile.TemporaryDirectory(prefix="gemmlab-user-") as d:
        src, out = Path(d) / f"{path.stem}.cu", Path(d) / f"{path.stem}.cubin"
        src.write_text(source, encoding="utf-8")
        cmd = [compiler.path, "-cubin", arch_flag(arch), *options, "-o", str(out), str(src)]
        res = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise KernelCompileError(format_compile_error(
                str(path), compiler.version, arch, cmd[1:-3], source.split("\n", 1)[1], res.stderr + res.stdout))
        return out.read_bytes()


def compile_user(decl: Declaration, path: Path, text: str, arch: str) -> tuple[Path, str]:
    """(cached cubin, the symbol to load) for the declared kernel of ``text``."""
    options = options_for(path, decl.compiler)
    source = with_line_directive(text, path)
    compiler = get_compiler(decl.compiler)
    # NVRTC lowers every kernel's name through a name expression (a C++ kernel's symbol is mangled);
    # nvcc kernels are found by name in the cubin (load_function).
    expression = decl.kernel if decl.compiler == "nvrtc" else None
    # the local headers it includes are part of what is compiled: an edit to one is a new binary
    deps = "".join(f"\n// {p}\n{t}" for p, t in local_includes(text, path.resolve().parent))
    key = cache_key(source + deps + f"\n// name expression: {expression}", options, arch, compiler_build(compiler))
    cubin_path = cache_dir() / "user" / f"{key}.cubin"
    meta_path = cubin_path.with_suffix(".json")
    if cubin_path.is_file() and meta_path.is_file():
        return cubin_path, json.loads(meta_path.read_text())["symbol"]
    if decl.compiler == "nvrtc":
        cubin, lowered = _nvrtc(source, options, arch, path, expression)
    else:
        cubin, lowered = _nvcc(source, options, arch, path), ""
    symbol = lowered or decl.function  # nvcc: a C++ kernel's mangled name is found at load time
    write_atomic(cubin_path, cubin, make_parents=True)
    write_atomic(meta_path, json.dumps({"file": str(path), "kernel": decl.kernel, "symbol": symbol, "arch": arch,
                                        "options": list(options), "compiler": compiler.version,
                                        "source_sha256": hashlib.sha256(text.encode()).hexdigest()}, indent=1))
    return cubin_path, symbol


_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def local_includes(text: str, folder: Path, seen: Optional[set] = None) -> list[tuple[str, str]]:
    """(path, text) of every ``#include "..."`` file found beside the source, recursively, each once."""
    seen = set() if seen is None else seen
    out = []
    for name in _LOCAL_INCLUDE.findall(text):
        p = (folder / name).resolve()
        if p in seen or not p.is_file():
            continue
        seen.add(p)
        t = p.read_text(encoding="utf-8", errors="replace")
        out.append((str(p), t))
        out += local_includes(t, p.parent, seen)
    return out


def load_function(cubin: Path, symbol: str, function: str) -> Any:
    """The kernel in the cubin: by its symbol; a C++ (mangled) kernel without a name expression is
    found by its demangled name among the module's symbols."""
    import cupy

    module = cupy.RawModule(path=str(cubin))
    try:
        return module.get_function(symbol)
    except Exception:  # noqa: BLE001 - CuPy raises CUDADriverError (not found): try the mangled names
        pass
    for name in _cubin_symbols(cubin):
        if name.startswith(f"_Z{len(function)}{function}"):
            return module.get_function(name)
    raise InputError(f"{cubin}: no kernel {function!r} in the compiled module; declare kernel=NAME")


def _cubin_symbols(cubin: Path) -> list[str]:
    """Function symbols in a cubin (an ELF file): the names after ``.text.`` in its section names."""
    data = cubin.read_bytes()
    names = set()
    for part in data.split(b"\x00"):
        if part.startswith(b".text.") and len(part) > 6:
            names.add(part[6:].decode("ascii", "replace"))
    return sorted(names)


class UserGemm:
    """A user's GEMM kernel bound to one M x N x K: call it with (a, b, c, alpha, beta)."""

    def __init__(self, decl: Declaration, path: Path, text: str, M: int, N: int, K: int,
                 arch: Optional[str] = None) -> None:
        from gemmlab.runtime import device

        device.require_gpu()
        dev = device.info()
        refusal = decl.refusal(M, N, K)
        if refusal:
            raise InputError(refusal)
        self.decl, self.M, self.N, self.K = decl, M, N, K
        self.grid, self.block, self.smem = decl.launch(M, N, K)
        if self.smem > dev.smem_per_block_optin:
            raise InputError(f"{decl.file}: smem: {self.smem} bytes of dynamic shared memory at M,N,K={M},{N},{K}; "
                             f"{dev.name} allows at most {dev.smem_per_block_optin} per block")
        self.arch = arch or decl.arch or dev.arch
        cubin, symbol = compile_user(decl, path, text, self.arch)
        self.kernel = load_function(cubin, symbol, decl.function)
        if self.smem > _STATIC_SMEM_LIMIT:
            self.kernel.max_dynamic_shared_size_bytes = self.smem
        self._types = (ARRAY_DTYPES[decl.dtype], ARRAY_DTYPES[decl.out_dtype])
        self._b_shape = b_shape(decl.dtype, K, N)

    @functools.cached_property
    def attributes(self) -> dict:
        """What the compiler made of it: registers per thread, local memory (spills), static shared memory."""
        k = self.kernel
        return {"registers": int(k.num_regs), "local_bytes": int(k.local_size_bytes),
                "static_smem_bytes": int(k.shared_size_bytes), "max_threads_per_block": int(k.max_threads_per_block)}

    @property
    def launched(self) -> dict:
        return {"kernel": self.decl.kernel, "grid": list(self.grid), "block": list(self.block), "smem": self.smem,
                "arch": self.arch, **self.attributes}

    def __call__(self, a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
        if a.shape != (self.M, self.K) or b.shape != self._b_shape or c.shape != (self.M, self.N):
            raise InputError(f"operands a {a.shape}, b {b.shape}, c {c.shape} do not match the prepared "
                             f"M={self.M}, N={self.N}, K={self.K}")
        if a.dtype != self._types[0] or b.dtype != self._types[0] or c.dtype != self._types[1]:
            raise InputError(f"operands a {a.dtype}, b {b.dtype}, c {c.dtype}: {self.decl.name} takes "
                             f"{self._types[0]} inputs and a {self._types[1]} output")
        if not self.decl.has_scalars and (alpha != 1.0 or beta != 0.0):
            raise InputError(f"{self.decl.name} takes no alpha and beta (args={','.join(self.decl.args)}): it "
                             f"computes C = A @ B; run it with alpha=1, beta=0")
        values = {"A": a, "B": b, "C": c, "M": np.int32(self.M), "N": np.int32(self.N), "K": np.int32(self.K),
                  "alpha": np.float32(alpha), "beta": np.float32(beta)}
        self.kernel(self.grid, self.block, tuple(values[name] for name in self.decl.args), shared_mem=self.smem)


def load_kernel(path: str | Path, kernel: str, *, arch: Optional[str] = None, compiler: str = "nvrtc") -> Any:
    """A ``cupy.RawKernel`` for ``kernel`` (a function name or a template's name expression) in the
    ``.cu`` file at ``path``, compiled the way gemmlab compiles a user's kernel (``-lineinfo``, the
    file's own path in the line table, cached): what a spec file's ``custom_kernel`` calls to bring
    a CUDA kernel that is not a GEMM into the loop, so ``gemmlab profile spec.py`` finds its lines.

        k = load_kernel("row_softmax.cu", "row_softmax")
        k((rows,), (256,), (x, y, cupy.int32(cols)), shared_mem=0)
    """
    from gemmlab.kernels.declared import Declaration
    from gemmlab.runtime import device

    device.require_gpu()
    p = Path(path)
    if not p.is_absolute() and not p.is_file():
        caller = Path(sys._getframe(1).f_globals.get("__file__", ".")).resolve().parent  # beside the spec file
        p = caller / p
    if not p.is_file():
        raise InputError(f"{path}: no such .cu file")
    text = p.read_text(encoding="utf-8")
    decl = Declaration(file=str(p), name=p.stem, kernel=kernel, args=(), dtype="fp32", out_dtype="fp32", block=("1",),
                       compiler=compiler, arch=arch)
    cubin, symbol = compile_user(decl, p, text, arch or device.info().arch)
    return load_function(cubin, symbol, decl.function)
