"""Compile ladder kernels to cubins, cache them on disk, and load them with CuPy.

Compilers: NVRTC through CuPy's bindings (the default; no toolkit needed beyond CuPy's wheels) or
nvcc (``backend="nvcc"``). Options are ``-std=c++17 -lineinfo`` plus the target architecture
(and, for NVRTC, ``NVRTC_OPTIONS``);
``--use_fast_math`` is deliberately absent: it would replace IEEE division/sqrt and flush
denormals, and every rung must match a float64 reference to FP32 accuracy.

Cache: ``$GEMMLAB_CACHE_DIR`` or ``~/.cache/gemmlab/kernels`` (``$XDG_CACHE_HOME`` respected).
A cubin is stored under the SHA-256 of (source text, options, architecture, the compiler's exact
build, gemmlab's version), so editing a kernel, changing a flag, moving to another GPU generation,
upgrading the compiler (a patch release too) or gemmlab each produce a new entry, never a stale
hit. The build is, for nvcc, its whole ``nvcc --version`` text ("Build cuda_13.0.r13.0/compiler.
36424714_0"); for NVRTC, whose API reports only major.minor, the version plus the identity (path,
size, modification time) of the libnvrtc the process loaded, and CuPy's version. The source text hashed is the
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


def gemmlab_version() -> str:
    """gemmlab's version, read when asked (so a test can stand in another)."""
    import gemmlab

    return gemmlab.__version__


def cache_key(source: str, options: Sequence[str], arch: str, compiler_id: str,
              tool_version: str | None = None) -> str:
    """Hex SHA-256 of everything that shapes the binary: ``compiler_id`` names the compiler's exact
    build (``compiler_build``), ``tool_version`` gemmlab's version (default: this one)."""
    version = gemmlab_version() if tool_version is None else tool_version
    blob = json.dumps([source, list(options), arch, compiler_id, f"gemmlab {version}"], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def compiler_build(compiler: "Compiler") -> str:
    """``name:build`` of a compiler: its ``build`` (the exact build) where it has one, else its version."""
    return f"{compiler.name}:{getattr(compiler, 'build', None) or compiler.version}"


_MAPS = "/proc/self/maps"


def loaded_libraries(prefix: str, maps: str | None = None) -> list[str]:
    """Paths of the shared libraries whose file name starts with ``prefix`` that this process has
    mapped (Linux ``/proc/self/maps``; ``maps``: its text); [] where that cannot be read."""
    if maps is None:
        try:
            with open(_MAPS, encoding="utf-8", errors="replace") as f:
                maps = f.read()
        except OSError:
            return []
    paths = set()
    for line in maps.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and Path(parts[5].strip()).name.startswith(prefix):
            paths.add(parts[5].strip())
    return sorted(paths)


def file_identity(path: str) -> str:
    """``realpath size mtime_ns``: a different build of a library is a different file."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return f"{path} (unreadable)"
    return f"{real} {st.st_size} {st.st_mtime_ns}"


def nvrtc_build(version: str, libraries: Sequence[str], extra: Sequence[str] = ()) -> str:
    """The exact NVRTC build: ``nvrtc major.minor`` (all its API reports), the identity of every
    loaded libnvrtc file, and ``extra`` (CuPy's version and the CUDA runtime's)."""
    libs = [file_identity(p) for p in libraries] or ["libnvrtc not found in the process's mappings"]
    return "; ".join([version, *libs, *extra])


class Compiler(Protocol):
    """Turns CUDA C source into a cubin for one architecture."""

    name: str

    @property
    def version(self) -> str: ...  # for messages: "nvrtc 13.0", "nvcc 13.0.48 (cuda_13.0...)"

    # Optional ``build``: the exact build, what the cache is keyed by (``compiler_build``); a
    # compiler without one is keyed by its version.

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

    @functools.cached_property
    def build(self) -> str:
        """The exact build (``nvrtc_build``): a patch release keeps major.minor but is another file."""
        import cupy

        version = self.version  # loads libnvrtc, so it is in the process's mappings below
        extra = [f"cupy {cupy.__version__}"]
        try:
            extra.append(f"cuda runtime {cupy.cuda.runtime.runtimeGetVersion()}")
        except Exception as e:  # no usable runtime: the library's identity still tells builds apart
            log.debug("CUDA runtime version unavailable: %s", e)
        # libnvrtc.so only: libnvrtc-builtins is mapped at the first compile, and would change the key
        return nvrtc_build(version, loaded_libraries("libnvrtc.so"), extra)

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
    def version_text(self) -> str:
        """What ``nvcc --version`` prints."""
        return subprocess.run([self.path, "--version"], capture_output=True, text=True, check=False).stdout

    @functools.cached_property
    def version(self) -> str:
        out = self.version_text
        version = re.search(r"\bV(\S+)", out)
        build = re.search(r"Build (\S+)", out)
        if not version:
            return "nvcc " + out.strip().replace("\n", " ")
        return f"nvcc {version.group(1)}" + (f" ({build.group(1)})" if build else "")

    @functools.cached_property
    def build(self) -> str:
        """The whole ``nvcc --version`` text (release, build string, build date) and nvcc's own file."""
        text = " | ".join(line.strip() for line in self.version_text.strip().splitlines())
        return f"{text} | {file_identity(self.path)}"

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


# gemmlab's own kernels under NVRTC: a generic lambda in device code (the persistent rungs'
# per-stage MMAs take the K-steps as ``auto steps``) is a function without an execution-space
# annotation, which NVRTC 13.0 rejects as a host function ("host functions are not allowed in JIT
# mode"); nvcc makes it __device__ from its context. No gemmlab kernel has host code, so treating
# unannotated functions as __device__ changes nothing else. (A user's .cu compiles as written.)
NVRTC_OPTIONS: tuple[str, ...] = ("--device-as-default-execution-space",)


def compile_cubin(source: str, *, arch: str, compiler: Compiler, name: str = "kernel",
                  options: Sequence[str] = BASE_OPTIONS, root: Path | None = None) -> Path:
    """The cached cubin for ``source``, compiling it (and storing it) on a miss."""
    root = root if root is not None else cache_dir()
    if compiler.name == "nvrtc":
        options = (*options, *NVRTC_OPTIONS)
    build = compiler_build(compiler)
    key = cache_key(source, options, arch, build)
    path = root / f"{key}.cubin"
    if path.is_file():
        log.debug("kernel cache hit: %s -> %s", name, path)
        return path
    t0 = time.perf_counter()
    cubin = compiler.compile(source, options, arch, name)
    seconds = time.perf_counter() - t0
    write_atomic(path, cubin, make_parents=True)
    meta = {"name": name, "arch": arch, "options": list(options), "compiler": compiler.version,
            "compiler_build": build, "gemmlab": gemmlab_version(),
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
