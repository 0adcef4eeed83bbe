"""The cuBLAS BF16 reference's call, on the CPU: a fake cublasGemmEx that does the column-major
product on host memory proves the row-major <-> column-major argument mapping."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from gemmlab.errors import InputError
from gemmlab.numerics.bf16 import from_bits, round_bf16, to_bits
from gemmlab.runtime import cublas

_NP = {cublas.CUDA_R_16BF: np.uint16, cublas.CUDA_R_32F: np.float32}


def _view(ptr, dtype, count):
    ctype = ctypes.c_uint16 if dtype == np.uint16 else ctypes.c_float
    return np.ctypeslib.as_array((ctype * count).from_address(ptr)).view(dtype)


def _decode(x, t):
    return from_bits(x) if t == cublas.CUDA_R_16BF else x


class FakeCublas:
    """cublasGemmEx's column-major semantics (no transposes) on host pointers."""

    def __init__(self):
        self.calls = []

    def gemmEx(self, handle, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc,
               compute, algo):
        self.calls.append((handle, ta, tb, m, n, k, at, lda, bt, ldb, ct, ldc, compute, algo))
        assert (ta, tb) == (0, 0)
        al = _view(alpha, np.float32, 1)[0]
        be = _view(beta, np.float32, 1)[0]
        # column-major: element (i, j) of an m x n matrix with leading dimension ld is at j*ld + i
        a = _decode(_view(A, _NP[at], lda * k), at).reshape(k, lda).T[:m, :]  # m x k
        b = _decode(_view(B, _NP[bt], ldb * n), bt).reshape(n, ldb).T[:k, :]  # k x n
        cmem = _view(C, _NP[ct], ldc * n)
        c = cmem.reshape(n, ldc).T[:m, :]
        acc = al * (a.astype(np.float64) @ b.astype(np.float64))
        if be != 0:
            acc += be * _decode(c, ct).astype(np.float64)
        c[...] = to_bits(acc.astype(np.float32)) if ct == cublas.CUDA_R_16BF else acc


@pytest.mark.parametrize("out", ["bf16", "fp32"])
def test_row_major_product_through_column_major_gemm_ex(out):
    M, N, K = 5, 7, 3
    rng = np.random.default_rng(0)
    a = to_bits(rng.standard_normal((M, K)).astype(np.float32))
    b = to_bits(rng.standard_normal((K, N)).astype(np.float32))
    c0 = rng.standard_normal((M, N)).astype(np.float32)
    c = to_bits(c0) if out == "bf16" else c0.copy()
    lib = FakeCublas()
    cublas.call_gemm_ex(lib, 1234, M, N, K, a.ctypes.data, b.ctypes.data, c.ctypes.data, out,
                        1.5, -0.5)
    cin = from_bits(to_bits(c0)) if out == "bf16" else c0
    want = 1.5 * (from_bits(a).astype(np.float64) @ from_bits(b)) - 0.5 * cin
    got = from_bits(c) if out == "bf16" else c
    want = round_bf16(want.astype(np.float32)) if out == "bf16" else want
    np.testing.assert_allclose(got, want, rtol=1e-6)
    (call,) = lib.calls
    ct = cublas.CUDA_R_16BF if out == "bf16" else cublas.CUDA_R_32F
    assert call == (1234, 0, 0, N, M, K, 14, N, 14, K, ct, N, 68, -1)


def test_gemm_ex_args_types_and_refusal():
    args = cublas.gemm_ex_args(2, 3, 4, 10, 20, 30, "bf16", 1, 2)
    assert args[6] == 20 and args[9] == 10  # B first, then A (C^T = B^T A^T)
    assert args[-2:] == (cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT) == (68, -1)
    with pytest.raises(InputError):
        cublas.gemm_ex_args(2, 3, 4, 10, 20, 30, "fp64", 1, 2)
    half = cublas.gemm_ex_args(2, 3, 4, 10, 20, 30, "fp16", 1, 2, in_dtype="fp16")
    assert half[7] == half[10] == half[14] == cublas.CUDA_R_16F == 2  # A, B and C all CUDA_R_16F
    assert "CUBLAS_COMPUTE_32F" in cublas.bf16_label() and "16BF" in cublas.bf16_label()
