"""The reference: cuBLAS SGEMM through CuPy's cuBLAS bindings, in true FP32.

gemmlab keeps its own cuBLAS handle per device and math mode instead of borrowing CuPy's, so
nothing else (CUPY_TF32, another library changing CuPy's handle) can switch it to TF32 tensor
cores behind our back. The default handle is set to CUBLAS_DEFAULT_MATH: FP32 inputs, FP32
multiply-adds, no TF32 (cuBLAS uses TF32 for FP32 GEMMs only under CUBLAS_TF32_TENSOR_OP_MATH or
the FP32_FAST_TF32 compute types). ``math_mode()`` reads the mode back from the handle, so what
is recorded with results is what cuBLAS was told, not what we meant to tell it.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from gemmlab.errors import InputError

CUBLAS_DEFAULT_MATH = 0
CUBLAS_PEDANTIC_MATH = 2
CUBLAS_TF32_TENSOR_OP_MATH = 3
_MODE_NAMES = {0: "CUBLAS_DEFAULT_MATH", 1: "CUBLAS_TENSOR_OP_MATH", 2: "CUBLAS_PEDANTIC_MATH",
               3: "CUBLAS_TF32_TENSOR_OP_MATH"}
_MATH = {"fp32": CUBLAS_DEFAULT_MATH, "tf32": CUBLAS_TF32_TENSOR_OP_MATH}
_OP_N = 0  # CUBLAS_OP_N

_handles: dict[tuple[int, str], int] = {}


def _lib():
    from gemmlab.runtime.device import require_gpu

    require_gpu()
    from cupy_backends.cuda.libs import cublas

    return cublas


def _handle(math: str) -> int:
    if math not in _MATH:
        raise InputError(f"math={math!r}: expected one of {sorted(_MATH)}")
    import cupy

    lib = _lib()
    key = (cupy.cuda.runtime.getDevice(), math)
    h = _handles.get(key)
    if h is None:
        h = lib.create()
        lib.setMathMode(h, _MATH[math])
        _handles[key] = h
    return h


def sgemm(a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0,
          math: str = "fp32") -> None:
    """C = alpha * A @ B + beta * C with cublasSgemm, on CuPy's current stream, in place.

    ``math="fp32"`` (the default, and the only mode gemmlab compares against) uses
    CUBLAS_DEFAULT_MATH; ``math="tf32"`` exists so tests can show the FP32 check would catch TF32.
    Row-major operands are passed as their column-major transposes: C^T = B^T A^T.
    """
    import cupy

    from gemmlab.runtime.operands import operand_shape

    M, N, K = operand_shape(a, b, c)
    lib = _lib()
    h = _handle(math)
    lib.setStream(h, cupy.cuda.get_current_stream().ptr)
    al = np.array(alpha, dtype=np.float32)
    be = np.array(beta, dtype=np.float32)
    lib.sgemm(h, _OP_N, _OP_N, N, M, K, al.ctypes.data, b.data.ptr, N, a.data.ptr, K,
              be.ctypes.data, c.data.ptr, N)


def math_mode(math: str = "fp32") -> str:
    """What the handle used by ``sgemm(math=...)`` is set to, read back from cuBLAS, plus the
    NVIDIA_TF32_OVERRIDE environment variable when set (recorded with every result)."""
    lib = _lib()
    mode = lib.getMathMode(_handle(math))
    text = f"cublasSgemm {_MODE_NAMES.get(mode, f'math mode {mode}')}"
    text += " (TF32 off)" if mode in (CUBLAS_DEFAULT_MATH, CUBLAS_PEDANTIC_MATH) else " (TF32 on)"
    override = os.environ.get("NVIDIA_TF32_OVERRIDE")
    if override is not None:
        text += f", NVIDIA_TF32_OVERRIDE={override}"
    return text


def tf32_off(math: str = "fp32") -> bool:
    """True when the handle's math mode excludes TF32."""
    return _lib().getMathMode(_handle(math)) in (CUBLAS_DEFAULT_MATH, CUBLAS_PEDANTIC_MATH)


# ---- BF16: cublasGemmEx with bfloat16 inputs and FP32 compute ------------------------------
# cudaDataType / cublasComputeType_t values (stable in the CUDA headers).
CUDA_R_32F = 0
CUDA_R_16F = 2
CUDA_R_16BF = 14
CUBLAS_COMPUTE_32F = 68
CUBLAS_GEMM_DEFAULT = -1
_CUDA_TYPES = {"bf16": CUDA_R_16BF, "fp32": CUDA_R_32F, "fp16": CUDA_R_16F}
_IN_TYPES = {"bf16": CUDA_R_16BF, "fp16": CUDA_R_16F}


def gemm_ex_args(M: int, N: int, K: int, a_ptr: int, b_ptr: int, c_ptr: int, out_dtype: str,
                 alpha_ptr: int, beta_ptr: int, in_dtype: str = "bf16") -> tuple:
    """The cublasGemmEx arguments after the handle for row-major C (M x N) = A (M x K, bf16) @
    B (K x N, bf16), FP32 compute, C in ``out_dtype``.

    cuBLAS is column-major; a row-major X is the column-major X^T, so we ask for
    C^T (N x M) = B^T (N x K) @ A^T (K x M): m = N, n = M, first operand B (ld N), second A
    (ld K), C with ld N, no transposes. alpha and beta are host float32 pointers (FP32 compute
    takes float scalars)."""
    if out_dtype not in _CUDA_TYPES:
        raise InputError(f"out_dtype={out_dtype!r}: expected 'bf16', 'fp16' or 'fp32'")
    t = _IN_TYPES[in_dtype]
    return (_OP_N, _OP_N, N, M, K, alpha_ptr, b_ptr, t, N, a_ptr, t, K,
            beta_ptr, c_ptr, _CUDA_TYPES[out_dtype], N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT)


def call_gemm_ex(lib: Any, handle: int, M: int, N: int, K: int, a_ptr: int, b_ptr: int,
                 c_ptr: int, out_dtype: str, alpha: float, beta: float, in_dtype: str = "bf16") -> None:
    """One cublasGemmEx call through ``lib`` (CuPy's cublas module, or a fake in CPU tests)."""
    al = np.array(alpha, dtype=np.float32)
    be = np.array(beta, dtype=np.float32)
    lib.gemmEx(handle, *gemm_ex_args(M, N, K, a_ptr, b_ptr, c_ptr, out_dtype, al.ctypes.data,
                                     be.ctypes.data, in_dtype))


def gemm_bf16(a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
    """C = alpha * A @ B + beta * C with cublasGemmEx: A (M x K) and B (K x N) row-major uint16
    arrays of bfloat16 bits, CUBLAS_COMPUTE_32F, C row-major bf16 (uint16) or float32 - the
    output type follows c's dtype, so cuBLAS is timed with the same types as the rung it is
    compared with. On CuPy's current stream, in place. beta == 0: C is not read (BLAS)."""
    import cupy

    from gemmlab.runtime.operands import operand_shape

    out_dtype = "bf16" if c.dtype == np.uint16 else "fp32"
    M, N, K = operand_shape(a, b, c, "bf16", out_dtype)
    lib = _lib()
    h = _handle("fp32")  # CUBLAS_DEFAULT_MATH: 16-bit inputs use tensor cores in any math mode
    lib.setStream(h, cupy.cuda.get_current_stream().ptr)
    call_gemm_ex(lib, h, M, N, K, a.data.ptr, b.data.ptr, c.data.ptr, out_dtype, alpha, beta)


def gemm_fp16(a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
    """As ``gemm_bf16`` for IEEE half: A, B float16, CUBLAS_COMPUTE_32F, C float16 or float32 (c's
    dtype) - the reference a user's fp16 kernel is compared with."""
    import cupy

    from gemmlab.runtime.operands import operand_shape

    out_dtype = "fp16" if c.dtype == np.float16 else "fp32"
    M, N, K = operand_shape(a, b, c, "fp16", out_dtype)
    lib = _lib()
    h = _handle("fp32")
    lib.setStream(h, cupy.cuda.get_current_stream().ptr)
    call_gemm_ex(lib, h, M, N, K, a.data.ptr, b.data.ptr, c.data.ptr, out_dtype, alpha, beta, "fp16")


def fp16_label(out_dtype: str = "fp16") -> str:
    return (f"cublasGemmEx A,B CUDA_R_16F, C {'CUDA_R_16F' if out_dtype == 'fp16' else 'CUDA_R_32F'},"
            f" CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT")


def bf16_label(out_dtype: str = "bf16") -> str:
    """What the BF16 reference is, for tables and stored results."""
    return (f"cublasGemmEx A,B CUDA_R_16BF, C {'CUDA_R_16BF' if out_dtype == 'bf16' else 'CUDA_R_32F'},"
            f" CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT")
