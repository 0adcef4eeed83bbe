"""cuBLASLt for the BF16 and FP8 references: heuristic candidates for one GEMM, and running any
of them.

CuPy 14 binds cuBLAS but not cuBLASLt (``cupy_backends.cuda.libs`` has no cublaslt module), so
gemmlab calls ``libcublasLt.so`` through ctypes. The library is the one already loaded into the
process (libcublas, which CuPy loads, depends on it: its path is read from /proc/self/maps), so
cuBLAS and cuBLASLt always come from the same release; failing that, the nvidia-cublas wheel's
copy or the system's (``ctypes.util.find_library``).

Three layers, so everything but the last is tested on a CPU:

* ``lt_problem`` (pure): the row-major -> column-major mapping and the four matrix layouts for
  C (M x N) = A (M x K) @ B (K x N), as ``runtime/cublas.py`` does for cublasGemmEx:
  cuBLASLt computes D^T (N x M) = B^T (N x K) @ A^T (K x M), so its "A" is our B and its "B"
  our A, no transposes, every leading dimension the row length. For FP8 (``in_dtype="fp8"``)
  cuBLASLt takes only the "TN" form (transa = T, transb = N), which is exactly gemmlab's FP8
  layout: our B given N x K row-major is, column-major, a K x N matrix with ld K, and op T makes it
  the N x K "A" that D^T = B A^T needs; our A (M x K row-major) is a K x M column-major "B" with
  ld K, used as it is (op N). Both operands are K-major, as in the kernel.
* ``LtPlan``: descriptors, preference (workspace, alignment), the heuristic's algorithms, each
  algorithm's configuration decoded (``describe``), and ``run`` - all through an ``LtApi`` of
  plain Python values, which CPU tests replace with a fake.
* ``CtypesLt``: that API on the real library (argument types declared for every function).

Enum values come from cublasLt.h (nvidia-cublas 13.1, CUDA 13); tile, stages and cluster-shape
ids are decoded with ``gemmlab/data/cublaslt_ids.json``, extracted from the same header.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping, Optional, Protocol, Sequence

from gemmlab.errors import InputError, UserError

# cudaDataType / cublasComputeType_t (library_types.h, cublas_api.h)
CUDA_R_32F = 0
CUDA_R_16BF = 14
CUDA_R_8F_E4M3 = 28
CUBLAS_COMPUTE_32F = 68
DTYPES = {"bf16": CUDA_R_16BF, "fp32": CUDA_R_32F}
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1  # cublasOperation_t

# cublasLtMatmulDescAttributes_t the references set: name -> (attribute, C type of its value).
# The FP8 A/B scale pointers (17, 18) are left unset: NULL means a scale of 1.0.
DESC_ATTRIBUTES: dict[str, tuple[int, Any]] = {
    "transa": (3, ctypes.c_int32),  # cublasOperation_t
    "transb": (4, ctypes.c_int32),
    "fast_accum": (25, ctypes.c_int8),  # FP8 only: 1 = never promote partial sums to FP32
}

STATUS = {0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED",
          3: "CUBLAS_STATUS_ALLOC_FAILED", 7: "CUBLAS_STATUS_INVALID_VALUE",
          8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
          13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR",
          15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR"}

# cublasLtMatmulPreferenceAttributes_t
PREF_MAX_WORKSPACE_BYTES = 1  # uint64
PREF_MIN_ALIGNMENT_BYTES = {"A": 5, "B": 6, "C": 7, "D": 8}  # uint32 each; cuBLASLt default 256

# cublasLtMatmulAlgoConfigAttributes_t: name -> (attribute, C type). The size passed must equal
# the attribute's storage size exactly, so the types matter.
ALGO_CONFIG: dict[str, tuple[int, Any]] = {
    "algo_id": (0, ctypes.c_int32),
    "tile_id": (1, ctypes.c_uint32),
    "splitk": (2, ctypes.c_int32),
    "reduction_scheme": (3, ctypes.c_uint32),
    "cta_swizzling": (4, ctypes.c_uint32),
    "custom_option": (5, ctypes.c_uint32),
    "stages_id": (6, ctypes.c_uint32),
    "inner_shape_id": (7, ctypes.c_uint16),
    "cluster_shape_id": (8, ctypes.c_uint16),
}
REDUCTION_SCHEMES = {0: "NONE", 1: "INPLACE", 2: "COMPUTE_TYPE", 4: "OUTPUT_TYPE"}

DEFAULT_WORKSPACE = 32 << 20  # bytes: what PyTorch gives cuBLASLt on Hopper
DEFAULT_ALGOS = 8
DEFAULT_ALIGNMENT = 256  # cuBLASLt's own default for every operand


class CublasLtError(UserError):
    """A cuBLASLt call failed: one line naming the function and the status."""


def status_name(status: int) -> str:
    return STATUS.get(status, f"status {status}")


# --- pure: the problem ------------------------------------------------------------------------
@dataclass(frozen=True)
class Layout:
    """One cublasLtMatrixLayout: column-major ``rows`` x ``cols`` of ``dtype`` with leading
    dimension ``ld``."""

    dtype: int
    rows: int
    cols: int
    ld: int


@dataclass(frozen=True)
class LtProblem:
    """Row-major C (M x N) = A (M x K, bf16) @ B (K x N, bf16) as the column-major cuBLASLt
    product D^T = B^T A^T: m = N, n = M, k = K; cuBLASLt's A operand is our B, its B our A.

    ``in_dtype="fp8"``: C = A (M x K, e4m3) @ B^T with B given N x K (e4m3, "TN"); cuBLASLt's A
    is our B read with op T (a K x N column-major matrix, ld K), its B our A with op N (K x M,
    ld K); C and D bf16. A/B scale pointers stay NULL (scale 1.0)."""

    M: int
    N: int
    K: int
    out_dtype: str
    layouts: Mapping[str, Layout]  # "A", "B", "C", "D" in cuBLASLt's naming
    in_dtype: str = "bf16"
    trans: tuple[int, int] = (CUBLAS_OP_N, CUBLAS_OP_N)  # (transa, transb)

    @staticmethod
    def operands(a_ptr: int, b_ptr: int, c_ptr: int) -> tuple[int, int, int, int]:
        """(cuBLASLt A, B, C, D) device pointers for our a, b, c: in place, D = C."""
        return b_ptr, a_ptr, c_ptr, c_ptr


def lt_problem(M: int, N: int, K: int, out_dtype: str, in_dtype: str = "bf16") -> LtProblem:
    """The cuBLASLt layouts of a row-major bf16 GEMM with ``out_dtype`` ("bf16"/"fp32") C, or
    (``in_dtype="fp8"``) of an e4m3 GEMM in the TN layout with bf16 C."""
    for label, v in (("M", M), ("N", N), ("K", K)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError(f"{label}={v!r}: expected an integer >= 1")
    if out_dtype not in DTYPES:
        raise InputError(f"out_dtype={out_dtype!r}: expected 'bf16' or 'fp32'")
    if in_dtype == "fp8":
        if out_dtype != "bf16":
            raise InputError(f"out_dtype={out_dtype!r}: the FP8 reference writes bf16 C only")
        e4m3 = CUDA_R_8F_E4M3
        layouts = {
            "A": Layout(e4m3, K, N, K),  # our B (N x K row-major) = K x N col-major; op T: N x K
            "B": Layout(e4m3, K, M, K),  # our A (M x K row-major) = K x M col-major; op N
            "C": Layout(CUDA_R_16BF, N, M, N),  # our C (M x N row-major) = N x M col-major
            "D": Layout(CUDA_R_16BF, N, M, N),
        }
        return LtProblem(M, N, K, out_dtype, layouts, "fp8", (CUBLAS_OP_T, CUBLAS_OP_N))
    if in_dtype != "bf16":
        raise InputError(f"in_dtype={in_dtype!r}: expected 'bf16' or 'fp8'")
    out = DTYPES[out_dtype]
    layouts = {
        "A": Layout(CUDA_R_16BF, N, K, N),  # our B (K x N row-major) = B^T, N x K col-major
        "B": Layout(CUDA_R_16BF, K, M, K),  # our A (M x K row-major) = A^T, K x M col-major
        "C": Layout(out, N, M, N),          # our C (M x N row-major) = C^T, N x M col-major
        "D": Layout(out, N, M, N),
    }
    return LtProblem(M, N, K, out_dtype, layouts)


def pointer_alignment(ptr: int, cap: int = DEFAULT_ALIGNMENT) -> int:
    """The largest power of two (at most ``cap``) dividing ``ptr``."""
    if ptr == 0:
        return cap
    return min(cap, ptr & -ptr)


# --- decoding an algorithm's configuration ------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _ids() -> dict:
    text = (resources.files("gemmlab") / "data" / "cublaslt_ids.json").read_text("utf-8")
    return json.loads(text)


def _name(table: str, value: Optional[int]) -> Optional[str]:
    if value is None:
        return None
    return _ids()[table].get(str(value), f"id {value}")


def describe(config: Mapping[str, Optional[int]]) -> dict:
    """A raw algorithm configuration (``ALGO_CONFIG`` names -> ints) with the ids decoded:
    ``tile`` "128x256", ``stages`` "64x4" (k-depth x count), ``cluster`` "2x1x1", ``inner_shape``,
    ``reduction``."""
    out: dict[str, Any] = dict(config)
    out["tile"] = _name("tile", config.get("tile_id"))
    out["stages"] = _name("stages", config.get("stages_id"))
    out["cluster"] = _name("cluster_shape", config.get("cluster_shape_id"))
    out["inner_shape"] = _name("inner_shape", config.get("inner_shape_id"))
    rs = config.get("reduction_scheme")
    out["reduction"] = None if rs is None else REDUCTION_SCHEMES.get(rs, f"id {rs}")
    return out


def short_label(desc: Mapping[str, Any]) -> str:
    """One line for a decoded configuration, e.g. ``algo 66 tile 128x256 stages 64x4 cluster
    2x1x1 splitK 1 swizzle 0``."""
    parts = [f"algo {desc.get('algo_id')}"]
    for key, word in (("tile", "tile"), ("stages", "stages"), ("cluster", "cluster"),
                      ("splitk", "splitK"), ("cta_swizzling", "swizzle")):
        v = desc.get(key)
        if v is not None:
            parts.append(f"{word} {v}")
    if desc.get("splitk") not in (None, 0, 1) and desc.get("reduction"):
        parts.append(f"reduction {desc['reduction']}")
    return " ".join(parts)


# --- the API gemmlab uses, with Python values ---------------------------------------------------
@dataclass(frozen=True)
class LtAlgo:
    """One heuristic result: the opaque 64-byte algorithm, the workspace it needs, its predicted
    waves, and its readable configuration."""

    raw: bytes
    workspace: int
    waves: float
    config: Mapping[str, Optional[int]] = field(default_factory=dict)


class LtApi(Protocol):
    def version(self) -> int: ...
    def create(self) -> int: ...
    def matmul_desc(self, compute: int, scale: int) -> int: ...
    def desc_attribute(self, desc: int, name: str, value: int) -> None: ...
    def layout(self, layout: Layout) -> int: ...
    def preference(self, workspace: int, alignment: Mapping[str, int]) -> int: ...
    def heuristics(self, handle: int, desc: int, layouts: Sequence[int], pref: int,
                   count: int) -> list[LtAlgo]: ...
    def matmul(self, handle: int, desc: int, alpha_ptr: int, a_ptr: int, a_layout: int,
               b_ptr: int, b_layout: int, beta_ptr: int, c_ptr: int, c_layout: int, d_ptr: int,
               d_layout: int, algo: bytes, workspace_ptr: int, workspace_size: int,
               stream: int) -> None: ...
    def destroy(self, kind: str, obj: int) -> None: ...


class LtPlan:
    """Descriptors and heuristic algorithms for one (M, N, K, output type[, input type]).

    ``alignment`` is what the heuristic is told the operands' pointers are aligned to (bytes,
    per operand); ``run`` refuses pointers aligned less than that (InputError), since such an
    algorithm may read or write misaligned vectors. ``in_dtype="fp8"`` sets the TN transposes
    and, when ``fast_accum`` is not None, CUBLASLT_MATMUL_DESC_FAST_ACCUM (0: cuBLASLt's default,
    partial sums promoted to FP32 now and then; 1: accumulate in the tensor cores throughout, as
    gemmlab's FP8 rung does)."""

    def __init__(self, api: LtApi, handle: int, M: int, N: int, K: int, out_dtype: str,
                 workspace: int = DEFAULT_WORKSPACE, count: int = DEFAULT_ALGOS,
                 alignment: int = DEFAULT_ALIGNMENT, in_dtype: str = "bf16",
                 fast_accum: Optional[bool] = None) -> None:
        if count < 1:
            raise InputError(f"count={count}: ask the heuristic for at least one algorithm")
        if fast_accum is not None and in_dtype != "fp8":
            raise InputError("fast_accum: an FP8-only cuBLASLt attribute")
        self.api, self.handle = api, handle
        self.problem = lt_problem(M, N, K, out_dtype, in_dtype)
        self.workspace = workspace
        self.alignment = alignment
        self.fast_accum = fast_accum
        self._objs: list[tuple[str, int]] = []
        try:
            self.desc = self._keep("matmul_desc", api.matmul_desc(CUBLAS_COMPUTE_32F, CUDA_R_32F))
            if self.problem.trans != (CUBLAS_OP_N, CUBLAS_OP_N):
                api.desc_attribute(self.desc, "transa", self.problem.trans[0])
                api.desc_attribute(self.desc, "transb", self.problem.trans[1])
            if fast_accum is not None:
                api.desc_attribute(self.desc, "fast_accum", int(bool(fast_accum)))
            self.layouts = {k: self._keep("layout", api.layout(v))
                            for k, v in self.problem.layouts.items()}
            self.pref = self._keep("preference", api.preference(
                workspace, {k: alignment for k in PREF_MIN_ALIGNMENT_BYTES}))
            order = [self.layouts[k] for k in ("A", "B", "C", "D")]
            self.algos = [a for a in api.heuristics(handle, self.desc, order, self.pref, count)
                          if a.workspace <= workspace]
        except BaseException:
            self.close()
            raise

    def _keep(self, kind: str, obj: int) -> int:
        self._objs.append((kind, obj))
        return obj

    def describe(self, i: int) -> dict:
        """Algorithm ``i``'s configuration, decoded, with its workspace and predicted waves."""
        a = self.algos[i]
        return {**describe(a.config), "workspace_bytes": a.workspace, "waves": a.waves}

    def run(self, i: int, a_ptr: int, b_ptr: int, c_ptr: int, alpha_ptr: int, beta_ptr: int,
            workspace_ptr: int, stream: int) -> None:
        """C = alpha * A @ B + beta * C with algorithm ``i`` (host float32 alpha, beta)."""
        for label, p in (("a", a_ptr), ("b", b_ptr), ("c", c_ptr)):
            if pointer_alignment(p, self.alignment) < self.alignment:
                raise InputError(
                    f"{label}: device pointer {p:#x} is not {self.alignment}-byte aligned, as the "
                    f"cuBLASLt algorithms of this plan were chosen for")
        A, B, C, D = self.problem.operands(a_ptr, b_ptr, c_ptr)
        L = self.layouts
        self.api.matmul(self.handle, self.desc, alpha_ptr, A, L["A"], B, L["B"], beta_ptr, C,
                        L["C"], D, L["D"], self.algos[i].raw, workspace_ptr, self.workspace,
                        stream)

    def close(self) -> None:
        while self._objs:
            kind, obj = self._objs.pop()
            try:
                self.api.destroy(kind, obj)
            except Exception:  # noqa: BLE001 - teardown must not mask the original error
                pass


# --- the real library ---------------------------------------------------------------------------
class _HeuristicResult(ctypes.Structure):
    """cublasLtMatmulHeuristicResult_t (96 bytes)."""

    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspaceSize", ctypes.c_size_t),
                ("state", ctypes.c_int), ("wavesCount", ctypes.c_float),
                ("reserved", ctypes.c_int * 4)]


_Algo = ctypes.c_uint64 * 8  # cublasLtMatmulAlgo_t
_P = ctypes.c_void_p


def _loaded_from_maps(maps: str, stem: str = "libcublasLt.so") -> Optional[str]:
    """Path of an already loaded ``stem`` in a /proc/PID/maps text, or None."""
    for line in maps.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and Path(parts[5]).name.startswith(stem):
            return parts[5].strip()
    return None


def library_candidates() -> list[str]:
    """Where libcublasLt may be, best first: the copy already loaded in this process (the one
    CuPy's libcublas uses), the nvidia-cublas wheel's, then the loader's search."""
    out: list[str] = []
    env = os.environ.get("GEMMLAB_CUBLASLT_LIB")
    if env:
        out.append(env)
    try:
        loaded = _loaded_from_maps(Path("/proc/self/maps").read_text())
    except OSError:
        loaded = None
    if loaded:
        out.append(loaded)
    try:
        import nvidia  # the namespace package of NVIDIA's wheels

        for base in getattr(nvidia, "__path__", []):
            for sub in ("cu13/lib", "cublas/lib"):
                out.extend(str(p) for p in sorted(Path(base, sub).glob("libcublasLt.so*")))
    except ImportError:
        pass
    found = ctypes.util.find_library("cublasLt")
    if found:
        out.append(found)
    out.extend(["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"])
    return list(dict.fromkeys(out))


class CtypesLt:
    """``LtApi`` on libcublasLt through ctypes."""

    def __init__(self, path: Optional[str] = None) -> None:
        tried = [path] if path else library_candidates()
        errors = []
        for p in tried:
            try:
                self.lib = ctypes.CDLL(p)
                self.path = p
                break
            except OSError as e:
                errors.append(f"{p}: {e}")
        else:
            raise CublasLtError("libcublasLt not found (tried " + "; ".join(errors) + "); set "
                                "GEMMLAB_CUBLASLT_LIB to its path")
        L = self.lib
        sig = {
            "cublasLtGetVersion": (ctypes.c_size_t, []),
            "cublasLtCreate": (ctypes.c_int, [ctypes.POINTER(_P)]),
            "cublasLtDestroy": (ctypes.c_int, [_P]),
            "cublasLtMatmulDescCreate": (ctypes.c_int, [ctypes.POINTER(_P), ctypes.c_int,
                                                        ctypes.c_int]),
            "cublasLtMatmulDescDestroy": (ctypes.c_int, [_P]),
            "cublasLtMatmulDescSetAttribute": (ctypes.c_int, [_P, ctypes.c_int, _P,
                                                              ctypes.c_size_t]),
            "cublasLtMatrixLayoutCreate": (ctypes.c_int, [ctypes.POINTER(_P), ctypes.c_int,
                                                          ctypes.c_uint64, ctypes.c_uint64,
                                                          ctypes.c_int64]),
            "cublasLtMatrixLayoutDestroy": (ctypes.c_int, [_P]),
            "cublasLtMatmulPreferenceCreate": (ctypes.c_int, [ctypes.POINTER(_P)]),
            "cublasLtMatmulPreferenceDestroy": (ctypes.c_int, [_P]),
            "cublasLtMatmulPreferenceSetAttribute": (ctypes.c_int, [_P, ctypes.c_int, _P,
                                                                    ctypes.c_size_t]),
            "cublasLtMatmulAlgoGetHeuristic": (ctypes.c_int, [
                _P, _P, _P, _P, _P, _P, _P, ctypes.c_int, ctypes.POINTER(_HeuristicResult),
                ctypes.POINTER(ctypes.c_int)]),
            "cublasLtMatmulAlgoConfigGetAttribute": (ctypes.c_int, [
                ctypes.POINTER(_Algo), ctypes.c_int, _P, ctypes.c_size_t,
                ctypes.POINTER(ctypes.c_size_t)]),
            "cublasLtMatmul": (ctypes.c_int, [
                _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, ctypes.POINTER(_Algo), _P,
                ctypes.c_size_t, _P]),
        }
        for name, (res, args) in sig.items():
            fn = getattr(L, name)
            fn.restype, fn.argtypes = res, args

    def _ok(self, name: str, status: int) -> None:
        if status != 0:
            raise CublasLtError(f"{name} failed: {status_name(status)} ({status})")

    def version(self) -> int:
        return int(self.lib.cublasLtGetVersion())

    def _create(self, name: str, *args: Any) -> int:
        h = _P()
        self._ok(name, getattr(self.lib, name)(ctypes.byref(h), *args))
        return int(h.value or 0)

    def create(self) -> int:
        return self._create("cublasLtCreate")

    def matmul_desc(self, compute: int, scale: int) -> int:
        return self._create("cublasLtMatmulDescCreate", compute, scale)

    def desc_attribute(self, desc: int, name: str, value: int) -> None:
        """cublasLtMatmulDescSetAttribute with the attribute's exact C type (``DESC_ATTRIBUTES``)."""
        attr, ctype = DESC_ATTRIBUTES[name]
        v = ctype(value)
        self._ok("cublasLtMatmulDescSetAttribute", self.lib.cublasLtMatmulDescSetAttribute(
            desc, attr, ctypes.byref(v), ctypes.sizeof(v)))

    def layout(self, layout: Layout) -> int:
        return self._create("cublasLtMatrixLayoutCreate", layout.dtype, layout.rows,
                            layout.cols, layout.ld)

    def preference(self, workspace: int, alignment: Mapping[str, int]) -> int:
        pref = self._create("cublasLtMatmulPreferenceCreate")
        try:
            ws = ctypes.c_uint64(workspace)
            self._ok("cublasLtMatmulPreferenceSetAttribute", self.lib.cublasLtMatmulPreferenceSetAttribute(
                pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(ws), ctypes.sizeof(ws)))
            for op, attr in PREF_MIN_ALIGNMENT_BYTES.items():
                v = ctypes.c_uint32(alignment[op])
                self._ok("cublasLtMatmulPreferenceSetAttribute",
                         self.lib.cublasLtMatmulPreferenceSetAttribute(
                             pref, attr, ctypes.byref(v), ctypes.sizeof(v)))
        except BaseException:
            self.destroy("preference", pref)
            raise
        return pref

    def algo_config(self, raw: bytes) -> dict[str, Optional[int]]:
        """Each ``ALGO_CONFIG`` attribute of an algorithm (None where the library refuses one)."""
        algo = _Algo.from_buffer_copy(raw)
        out: dict[str, Optional[int]] = {}
        for name, (attr, ctype) in ALGO_CONFIG.items():
            v, written = ctype(), ctypes.c_size_t()
            st = self.lib.cublasLtMatmulAlgoConfigGetAttribute(
                ctypes.byref(algo), attr, ctypes.byref(v), ctypes.sizeof(v), ctypes.byref(written))
            out[name] = int(v.value) if st == 0 else None
        return out

    def heuristics(self, handle: int, desc: int, layouts: Sequence[int], pref: int,
                   count: int) -> list[LtAlgo]:
        results = (_HeuristicResult * count)()
        n = ctypes.c_int()
        self._ok("cublasLtMatmulAlgoGetHeuristic", self.lib.cublasLtMatmulAlgoGetHeuristic(
            handle, desc, *layouts, pref, count, results, ctypes.byref(n)))
        out = []
        for r in results[: n.value]:
            if r.state != 0:
                continue
            raw = bytes(r.algo)
            out.append(LtAlgo(raw, int(r.workspaceSize), float(r.wavesCount),
                              self.algo_config(raw)))
        return out

    def matmul(self, handle: int, desc: int, alpha_ptr: int, a_ptr: int, a_layout: int,
               b_ptr: int, b_layout: int, beta_ptr: int, c_ptr: int, c_layout: int, d_ptr: int,
               d_layout: int, algo: bytes, workspace_ptr: int, workspace_size: int,
               stream: int) -> None:
        a = _Algo.from_buffer_copy(algo)
        self._ok("cublasLtMatmul", self.lib.cublasLtMatmul(
            handle, desc, alpha_ptr, a_ptr, a_layout, b_ptr, b_layout, beta_ptr, c_ptr, c_layout,
            d_ptr, d_layout, ctypes.byref(a), workspace_ptr or None, workspace_size,
            stream or None))

    def destroy(self, kind: str, obj: int) -> None:
        fn = {"handle": "cublasLtDestroy", "matmul_desc": "cublasLtMatmulDescDestroy",
              "layout": "cublasLtMatrixLayoutDestroy",
              "preference": "cublasLtMatmulPreferenceDestroy"}[kind]
        self._ok(fn, getattr(self.lib, fn)(obj))


@functools.lru_cache(maxsize=None)
def api() -> CtypesLt:
    """The process's libcublasLt (loaded once). Create a cuBLAS handle first
    (``runtime.cublas._handle``) so that CuPy has loaded libcublas and the same libcublasLt is
    found in the process's maps."""
    return CtypesLt()


_HANDLES: dict[int, int] = {}


def handle(device: int) -> int:
    """One cublasLt handle per device, kept for the process's life."""
    h = _HANDLES.get(device)
    if h is None:
        h = _HANDLES[device] = api().create()
    return h
