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


from gemmlab.kernels import registry
from gemmlab.kernels.families import Rung
from gemmlab.problem import check_shape
from gemmlab.runtime.operands import operand_shape
from gemmlab.runtime.prepared import PreparedGemm

log = logging.getLogger(__name__)

RungLike = Union[Rung, str]


def _as_rung(rung: RungLike) -> Rung:
    return registry.get(rung) if isinstance(rung, str) else rung


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
    if r.name in registry.DISPATCH_TC:
        from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

        return TcDispatchedGemm(r, M, N, K, backend=backend)
    if r.name in registry.AUTOTUNED:
        from gemmlab.runtime import autotune

        check_shape(M, N, K)
        r, backend = autotune.resolve(M, N, K, r.dtype)  # the winner comes with the compiler it won with
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
