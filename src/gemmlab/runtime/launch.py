"""Launching ladder rungs on CuPy arrays.

``gemm`` is the one-call API; ``prepare`` resolves everything once (compiled kernels, launch
geometry, the autotuner's choice) and returns a callable that only checks shapes and launches,
for timing loops.

Operands are C-contiguous (row-major) CuPy arrays: A is M x K, B is K x N, C is M x N. Their
dtypes follow the rung: float32 for the FP32 ladder; for the BF16 tensor-core ladder A and B are
``uint16`` arrays holding bfloat16 bit patterns (CuPy has no bfloat16 dtype; gemmlab.bf16
converts) and C is ``uint16`` (bf16 output) or float32 (the ``*_f32out`` rungs). For the FP8
ladder A and B are ``uint8`` arrays of e4m3 bit patterns (gemmlab.numerics.fp8 converts) and **B is
given N x K** ("TN", B transposed: 8-bit wgmma reads both operands K-major); a K x N B is refused
(``cupy.ascontiguousarray(b.T)`` makes the N x K copy); C is ``uint16`` bf16.

Vector rungs (16-byte global accesses) need K and N multiples of 4 (float32) or 8 (bfloat16) and
A, B, C on 16-byte boundaries. Where the shape allows it, the vector instantiation is used whenever the three
pointers are aligned and the rung's ``scalar_twin`` otherwise (e.g. for a view starting at an odd
element); where the shape does not, the scalar twin is always used.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Union

import numpy as np

from gemmlab.errors import InputError
from gemmlab.kernels import registry
from gemmlab.kernels.registry import Rung, check_shape, scalar_twin

log = logging.getLogger(__name__)

RungLike = Union[Rung, str]


def _as_rung(rung: RungLike) -> Rung:
    return registry.get(rung) if isinstance(rung, str) else rung


# NumPy/CuPy dtype holding each gemmlab dtype.
ARRAY_DTYPES = {"fp32": np.dtype(np.float32), "bf16": np.dtype(np.uint16),
                "fp8": np.dtype(np.uint8)}
_DTYPE_WORDS = {"fp32": "float32", "bf16": "uint16 (bfloat16 bit patterns; gemmlab.bf16.to_bits "
                                            "converts)",
                "fp8": "uint8 (e4m3 bit patterns; gemmlab.numerics.fp8.to_bits converts)"}


def _check_array(label: str, x: Any, cupy, dtype: str = "fp32") -> None:
    if not isinstance(x, cupy.ndarray):
        raise InputError(f"{label}: expected a cupy.ndarray, got {type(x).__name__}")
    if x.dtype != ARRAY_DTYPES[dtype]:
        raise InputError(f"{label}: expected dtype {_DTYPE_WORDS[dtype]}, got {x.dtype}")
    if x.ndim != 2:
        raise InputError(f"{label}: expected a 2-D matrix, got shape {x.shape}")
    if not x.flags.c_contiguous:
        raise InputError(f"{label}: expected a C-contiguous (row-major) array; use "
                         f"cupy.ascontiguousarray")


def operand_shape(a: Any, b: Any, c: Any, in_dtype: str = "fp32",
                  out_dtype: str | None = None) -> tuple[int, int, int]:
    """(M, N, K) of C = A @ B (fp8: A @ B^T, B given N x K) after checking types, dtypes,
    layouts, shapes and aliasing.

    ``in_dtype`` is the dtype of A and B, ``out_dtype`` that of C (default: ``in_dtype``); the
    FP32 ladder's defaults check float32 throughout."""
    from gemmlab.runtime.device import require_cupy

    cupy = require_cupy()
    out_dtype = out_dtype or in_dtype
    for label, x, dt in (("a", a, in_dtype), ("b", b, in_dtype), ("c", c, out_dtype)):
        _check_array(label, x, cupy, dt)
    if registry.B_LAYOUTS[in_dtype] == "nk":
        M, N, K = _tn_shape(a, b, c)
    else:
        (M, K), (K2, N), (Mc, Nc) = a.shape, b.shape, c.shape
        if K2 != K:
            raise InputError(f"b: expected {K} rows to match a's {a.shape}, got shape {b.shape}")
        if (Mc, Nc) != (M, N):
            raise InputError(f"c: expected shape ({M}, {N}) for a {a.shape} @ b {b.shape}, got "
                             f"{c.shape}")
    for label, x in (("a", a), ("b", b)):
        if _overlaps(x, c):
            raise InputError(f"c overlaps {label}: the output must not alias an input")
    if len({a.device.id, b.device.id, c.device.id}) != 1:
        raise InputError("a, b, c: expected all three on the same GPU")
    return M, N, K


def _tn_shape(a: Any, b: Any, c: Any) -> tuple[int, int, int]:
    """(M, N, K) of C = A @ B^T with B given N x K ("TN", the fp8 layout); N comes from C."""
    (M, K), (Mc, N) = a.shape, c.shape
    if Mc != M:
        raise InputError(f"c: expected {M} rows to match a's {a.shape}, got shape {c.shape}")
    if b.shape != (N, K):
        if b.shape == (K, N):
            raise InputError(
                f"b: shape {b.shape} is K x N; fp8 takes B as N x K row-major ('TN': B "
                f"transposed, K-major, as 8-bit wgmma reads it): pass "
                f"cupy.ascontiguousarray(b.T)")
        raise InputError(f"b: expected shape ({N}, {K}) (N x K, 'TN') for a {a.shape} and c "
                         f"{c.shape}, got {b.shape}")
    return M, N, K


def _overlaps(x: Any, y: Any) -> bool:
    x0, y0 = x.data.ptr, y.data.ptr
    return x0 < y0 + y.nbytes and y0 < x0 + x.nbytes


def _aligned16(*arrays: Any) -> bool:
    return all(x.data.ptr % 16 == 0 for x in arrays)


class PreparedGemm:
    """A rung bound to one (M, N, K): call it with (a, b, c, alpha, beta) to launch."""

    def __init__(self, rung: Rung, M: int, N: int, K: int, backend: str = "nvrtc") -> None:
        from gemmlab.runtime import compile as _compile

        check_shape(M, N, K)
        if rung.name in registry.AUTOTUNED:
            from gemmlab.runtime import autotune

            # The tuned winner comes with the compiler it won with.
            rung, backend = autotune.resolve(M, N, K, rung.dtype)
        self.requested = rung
        self.M, self.N, self.K = M, N, K
        refusal = rung.refusal(M, N, K)
        if refusal:
            raise InputError(refusal)
        sms = None
        if rung.persistent:
            from gemmlab.runtime import device

            sms = device.info().sm_count
        self.grid, self.block, self.smem = rung.launch_config(M, N, K, sms=sms)
        self._maps: dict[tuple[int, int, int], tuple[Any, ...]] = {}
        self.backend = backend
        self._dtypes = (ARRAY_DTYPES[rung.dtype], ARRAY_DTYPES[rung.out_dtype])
        self._vec_rung = rung if rung.vectorized and rung.accepts(M, N, K) else None
        self._scalar_rung = scalar_twin(rung)
        self._vec = (_compile.compile_rung(self._vec_rung, backend=backend)
                     if self._vec_rung else None)
        self._scalar = (None if self._vec is not None
                        else _compile.compile_rung(self._scalar_rung, backend=backend))
        self._args = (np.int32(M), np.int32(N), np.int32(K))
        self._b_shape = registry.b_shape(rung.dtype, K, N)

    @property
    def rung(self) -> Rung:
        """The instantiation launched for aligned operands."""
        return self._vec_rung or self._scalar_rung

    def rung_for(self, a: Any, b: Any, c: Any) -> Rung:
        """The instantiation that a call with these operands launches."""
        if self._vec_rung is not None and _aligned16(a, b, c):
            return self._vec_rung
        return self._scalar_rung

    def _kernel_for(self, a: Any, b: Any, c: Any):
        if self._vec is not None and _aligned16(a, b, c):
            return self._vec
        if self._scalar is None:
            from gemmlab.runtime import compile as _compile

            self._scalar = _compile.compile_rung(self._scalar_rung, backend=self.backend)
        return self._scalar

    def __call__(self, a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
        if a.shape != (self.M, self.K) or b.shape != self._b_shape or c.shape != (self.M,
                                                                                   self.N):
            tn = " (b given N x K, 'TN')" if self.requested.b_layout == "nk" else ""
            raise InputError(
                f"operands a {a.shape}, b {b.shape}, c {c.shape} do not match the prepared "
                f"M={self.M}, N={self.N}, K={self.K}{tn}")
        t_in, t_out = self._dtypes
        if a.dtype != t_in or b.dtype != t_in or c.dtype != t_out:
            raise InputError(
                f"operands a {a.dtype}, b {b.dtype}, c {c.dtype}: rung {self.requested.name} "
                f"takes a, b as {t_in} and c as {t_out}")
        kernel = self._kernel_for(a, b, c)
        args = (*self._args, np.float32(alpha), a, b, np.float32(beta), c)
        if self.requested.tma:
            args = (*self._tensor_maps(a, b, c), *args)
        kernel(self.grid, self.block, args, shared_mem=self.smem)

    def _tensor_maps(self, a: Any, b: Any, c: Any) -> tuple[Any, ...]:
        """The TMA tensor maps of a and b (and c for a TMA-store epilogue). They hold the
        addresses, so they are cached per operand pointers: a timing loop encodes them once."""
        rung = self.requested
        key = (a.data.ptr, b.data.ptr, c.data.ptr if rung.tma_store else 0)
        maps = self._maps.get(key)
        if maps is None:
            from gemmlab.runtime import tma

            spec_a, spec_b = tma.rung_specs(rung, self.M, self.N, self.K)
            if len(self._maps) >= 8:  # many operand buffers: keep the cache small
                self._maps.clear()
            maps = (tma.encode(spec_a, a.data.ptr), tma.encode(spec_b, b.data.ptr))
            if rung.tma_store and rung.dtype == "fp8" and self.N % 8:
                # C's rows are not 16-byte multiples: the kernel stores C directly and never
                # reads this map (persistent_fp8.cu)
                maps += (tma.zero_param(),)
            elif rung.tma_store:
                maps += (tma.encode(tma.c_spec(self.M, self.N), c.data.ptr),)
            self._maps[key] = maps
        return maps


def prepare(rung: RungLike, M: int, N: int, K: int, backend: str | None = None
            ) -> Callable[..., None]:
    """Compile (or load) ``rung`` for M x N x K once; the result launches it on call.

    ``backend`` is the compiler ("nvrtc" or "nvcc"; None: NVRTC for a rung, the dispatch rung's
    own choice for it - nvcc when installed). The abstract ``autotuned`` rung resolves to its
    remembered (or freshly tuned) winner and uses the compiler that winner was timed with; the
    abstract ``dispatch`` rung returns a ``dispatch_gemm.DispatchedGemm``, which picks its kernels
    by shape (same calling convention, ``rung`` / ``rung_for`` say what runs).
    """
    r = _as_rung(rung)
    if r.name == registry.DISPATCH:
        from gemmlab.runtime.dispatch_gemm import DispatchedGemm

        return DispatchedGemm(r, M, N, K, backend=backend)
    return PreparedGemm(r, M, N, K, backend=backend or "nvrtc")


_PREPARED: dict[tuple[str, int, int, int, str], Callable[..., None]] = {}
_PREPARED_MAX = 256


def gemm(rung: RungLike, a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0,
         stream: Any = None, backend: str | None = None) -> None:
    """C = alpha * A @ B + beta * C with ``rung``, in place on ``c`` (row-major cupy arrays of
    the rung's dtypes: float32, or uint16 bfloat16 bits for the tensor-core ladder; for the fp8
    rungs A and B are uint8 e4m3 bits, B given N x K, and C = alpha * A @ B^T + beta * C).

    With ``beta == 0`` C is not read (BLAS semantics). Launches on ``stream`` (a cupy Stream)
    or the current stream; returns without synchronizing.
    """
    r = _as_rung(rung)
    M, N, K = operand_shape(a, b, c, r.dtype, r.out_dtype)
    key = (r.name, M, N, K, backend)
    prepared = _PREPARED.get(key)
    if prepared is None:
        if len(_PREPARED) >= _PREPARED_MAX:  # many distinct shapes: keep memory bounded
            _PREPARED.clear()
        prepared = _PREPARED[key] = prepare(r, M, N, K, backend=backend)
    if stream is None:
        prepared(a, b, c, alpha, beta)
    else:
        with stream:
            prepared(a, b, c, alpha, beta)
