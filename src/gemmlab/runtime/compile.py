"""Compile ladder kernels to cubins, cache them on disk, and load them with CuPy.

Compilers: NVRTC through CuPy's bindings (the default; no toolkit needed beyond CuPy's wheels) or
nvcc (``backend="nvcc"``). Options are ``-std=c++17 -lineinfo`` plus the target architecture;
``--use_fast_math`` is deliberately absent: it would replace IEEE division/sqrt and flush
denormals, and every rung must match a float64 reference to FP32 accuracy.

Cache: ``$GEMMLAB_CACHE_DIR`` or ``~/.cache/gemmlab/kernels`` (``$XDG_CACHE_HOME`` respected).
A cubin is stored under the SHA-256 of (source text, options, architecture, compiler name and
version), so editing a kernel, changing a flag, moving to another GPU generation or upgrading
the compiler each produce a new entry, never a stale hit. The source text hashed is the
self-contained translation unit (local includes already inlined by gemmlab.kernels.source), so
an edit to a shared header changes the key too. Files are written to a temporary name and
renamed into place (``gemmlab.fileio``), so concurrent processes never read half a cubin.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from gemmlab.errors import InputError
from gemmlab.fileio import write_atomic
from gemmlab.kernels.families import Rung
from gemmlab.kernels.source import translation_unit
from gemmlab.runtime.toolchain import (BASE_OPTIONS, KernelCompileError, arch_flag, find_nvcc,
                                       format_compile_error)

if TYPE_CHECKING:
    import cupy

log = logging.getLogger(__name__)

CACHE_ENV = "GEMMLAB_CACHE_DIR"
_STATIC_SMEM_LIMIT = 48 * 1024  # above this a block needs the dynamic-shared-memory opt-in


class ArchUnsupported(InputError):
    """The device lacks the architecture a rung needs (one line; other rungs still run)."""


def cache_dir() -> Path:
    """Where compiled kernels (and autotuning records) are kept."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "gemmlab" / "kernels"


def cache_key(source: str, options: Sequence[str], arch: str, compiler_id: str) -> str:
    """Hex SHA-256 of everything that shapes the binary."""
    blob = json.dumps([source, list(options), arch, compiler_id], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Compiler(Protocol):
    """Turns CUDA C source into a cubin for one architecture."""

    name: str

    @property
    def version(self) -> str: ...

    def compile(self, source: str, options: Sequence[str], arch: str, name: str) -> bytes: ...


class NvrtcCompiler:
    """NVRTC through CuPy's bindings (cupy_backends.cuda.libs.nvrtc)."""

    name = "nvrtc"

    def __init__(self) -> None:
        from gemmlab.runtime.device import require_cupy

        require_cupy()
        from cupy_backends.cuda.libs import nvrtc

        self._nvrtc = nvrtc

    @functools.cached_property
    def version(self) -> str:
        major, minor = self._nvrtc.getVersion()
        return f"nvrtc {major}.{minor}"

    def compile(self, source: str, options: Sequence[str], arch: str, name: str) -> bytes:
        nv = self._nvrtc
        opts = [*options, f"--gpu-architecture={arch}"]
        prog = nv.createProgram(source, f"{name}.cu", (), ())
        try:
            try:
                nv.compileProgram(prog, opts)
            except nv.NVRTCError:
                raise KernelCompileError(format_compile_error(
                    name, self.version, arch, opts, source, nv.getProgramLog(prog))) from None
            return nv.getCUBIN(prog)
        finally:
            nv.destroyProgram(prog)


class NvccCompiler:
    """nvcc -cubin (also what gemmlab.runtime.nvcc uses for the resource report)."""

    name = "nvcc"

    def __init__(self, nvcc: str | None = None) -> None:
        self.path = nvcc or find_nvcc()

    @functools.cached_property
    def version(self) -> str:
        out = subprocess.run([self.path, "--version"], capture_output=True, text=True,
                             check=False).stdout
        version = re.search(r"\bV(\S+)", out)
        build = re.search(r"Build (\S+)", out)
        if not version:
            return "nvcc " + out.strip().replace("\n", " ")
        return f"nvcc {version.group(1)}" + (f" ({build.group(1)})" if build else "")

    def compile(self, source: str, options: Sequence[str], arch: str, name: str) -> bytes:
        with tempfile.TemporaryDirectory(prefix="gemmlab-nvcc-") as d:
            src, out = Path(d) / f"{name}.cu", Path(d) / f"{name}.cubin"
            src.write_text(source, encoding="utf-8")
            cmd = [self.path, "-cubin", arch_flag(arch), *options, "-o", str(out), str(src)]
            res = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if res.returncode != 0:
                raise KernelCompileError(format_compile_error(
                    name, self.version, arch, cmd[1:-3], source, res.stderr + res.stdout))
            return out.read_bytes()


@functools.lru_cache(maxsize=None)
def get_compiler(backend: str = "nvrtc") -> Compiler:
    """The compiler for ``backend`` ("nvrtc" or "nvcc")."""
    if backend == "nvrtc":
        return NvrtcCompiler()
    if backend == "nvcc":
        return NvccCompiler()
    raise InputError(f"backend={backend!r}: expected 'nvrtc' or 'nvcc'")


def compile_cubin(source: str, *, arch: str, compiler: Compiler, name: str = "kernel",
                  options: Sequence[str] = BASE_OPTIONS, root: Path | None = None) -> Path:
    """The cached cubin for ``source``, compiling it (and storing it) on a miss."""
    root = root if root is not None else cache_dir()
    key = cache_key(source, options, arch, f"{compiler.name}:{compiler.version}")
    path = root / f"{key}.cubin"
    if path.is_file():
        log.debug("kernel cache hit: %s -> %s", name, path)
        return path
    t0 = time.perf_counter()
    cubin = compiler.compile(source, options, arch, name)
    seconds = time.perf_counter() - t0
    write_atomic(path, cubin, make_parents=True)
    meta = {"name": name, "arch": arch, "options": list(options), "compiler": compiler.version,
            "source_sha256": hashlib.sha256(source.encode()).hexdigest(),
            "compile_seconds": seconds, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    write_atomic(path.with_suffix(".json"), json.dumps(meta, indent=1))
    log.info("compiled %s for %s with %s in %.2f s -> %s", name, arch, compiler.version,
             seconds, path)
    return path


_LOADED: dict[tuple[str, str, str, str], Any] = {}


def compile_rung(rung: Rung, arch: str | None = None, backend: str = "nvrtc") -> "cupy.RawKernel":
    """The loaded kernel of ``rung`` for the current device (compiled or taken from the cache).

    A rung that needs an architecture the device lacks (``rung.arch``, e.g. the tensor-core
    rungs on a pre-Ampere GPU) is refused with a one-line InputError before anything compiles;
    an ``sm_90a`` rung is compiled for ``sm_90a`` rather than the device's ``sm_90``.
    Rungs using more than 48 KB of dynamic shared memory get the opt-in attribute set here.
    """
    from gemmlab.kernels.families import arch_refusal, compile_arch
    from gemmlab.runtime import device

    cupy = device.require_gpu()
    dev = device.info()
    refusal = arch_refusal(rung, dev.cc_major, dev.cc_minor, dev.name)
    if refusal:
        raise ArchUnsupported(refusal)
    arch = compile_arch(rung, arch or dev.arch)
    source = translation_unit([rung])
    memo = (rung.kernel, hashlib.sha256(source.encode()).hexdigest(), arch, backend)
    kernel = _LOADED.get(memo)
    if kernel is not None:
        return kernel
    smem = rung.dynamic_smem
    if smem > dev.smem_per_block_optin:
        raise InputError(
            f"rung {rung.name} needs {smem} bytes of shared memory per block; {dev.name} allows "
            f"at most {dev.smem_per_block_optin}")
    path = compile_cubin(source, arch=arch, compiler=get_compiler(backend), name=rung.kernel)
    module = cupy.RawModule(path=str(path))
    kernel = module.get_function(rung.kernel)
    if smem > _STATIC_SMEM_LIMIT:
        kernel.max_dynamic_shared_size_bytes = smem
    _LOADED[memo] = kernel
    return kernel


_MODULES: dict[tuple[str, str, str], Any] = {}


def compile_module(source: str, name: str, arch: str | None = None, backend: str = "nvrtc") -> Any:
    """A loaded ``cupy.RawModule`` for a self-contained source with ``extern "C"`` kernels (the
    lessons' .cu files), compiled with the same options and disk cache as the ladder."""
    from gemmlab.runtime import device

    cupy = device.require_gpu()
    arch = arch or device.info().arch
    memo = (hashlib.sha256(source.encode()).hexdigest(), arch, backend)
    module = _MODULES.get(memo)
    if module is None:
        path = compile_cubin(source, arch=arch, compiler=get_compiler(backend), name=name)
        module = _MODULES[memo] = cupy.RawModule(path=str(path))
    return module
