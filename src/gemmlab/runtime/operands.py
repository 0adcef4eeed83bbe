"""What a GEMM's operands must be before anything launches: CuPy arrays of the rung's dtypes, 2-D,
C-contiguous (row-major), shapes that agree (A M x K; B K x N, or N x K for the FP8 "TN" layout;
C M x N), on one GPU, and C aliasing neither input. bfloat16 and e4m3 travel as ``uint16`` /
``uint8`` bit patterns (``gemmlab.numerics`` converts). Used by every launcher: the ladder's
rungs, the dispatch rung and the cuBLAS references.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gemmlab.errors import InputError
from gemmlab.kernels.families import B_LAYOUTS


# NumPy/CuPy dtype holding each gemmlab dtype.
ARRAY_DTYPES = {"fp32": np.dtype(np.float32), "bf16": np.dtype(np.uint16), "fp16": np.dtype(np.float16),
                "fp8": np.dtype(np.uint8)}
_DTYPE_WORDS = {"fp32": "float32", "fp16": "float16", "bf16": "uint16 (bfloat16 bit patterns; gemmlab.bf16.to_bits "
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
    if B_LAYOUTS[in_dtype] == "nk":
        M, N, K = _tn_shape(a, b, c)
    else:
        (M, K), (K2, N), (Mc, Nc) = a.shape, b.shape, c.shape
        if K2 != K:
            raise InputError(f"b: expected {K} rows to match a's {a.shape}, got shape {b.shape}")
        if (Mc, Nc) != (M, N):
            raise InputError(f"c: expected shape ({M}, {N}) for a {a.shape} @ b {b.shape}, got "
                             f"{c.shape}")
    for label, x in (("a", a), ("b", b)):
        if overlaps(x, c):
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


def overlaps(x: Any, y: Any) -> bool:
    x0, y0 = x.data.ptr, y.data.ptr
    return x0 < y0 + y.nbytes and y0 < x0 + x.nbytes


def aligned16(*arrays: Any) -> bool:
    return all(x.data.ptr % 16 == 0 for x in arrays)
