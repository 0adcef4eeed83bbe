"""bfloat16 on the host, and the error bound a BF16 tensor-core GEMM is held to (pure; NumPy or
CuPy arrays alike).

Storage. CuPy (and NumPy) have no bfloat16 dtype, so gemmlab holds bfloat16 matrices as
``uint16`` arrays of bit patterns, row-major: A is M x K, B is K x N, C is M x N. ``to_bits``
rounds float32 to the nearest bfloat16 (ties to even, as ``cvt.rn.bf16.f32`` and PyTorch do; NaN
stays a quiet NaN, overflow goes to inf); ``from_bits`` is exact (a bfloat16 is the top half of a
float32).

The bound. The kernel computes ``Ĉ = out(alpha · ŝ + beta · C0)`` where ŝ is the FP32-accumulated
sum of the K products of bf16 values. The reference is the same product in float64 from the *same
bf16-rounded inputs* (input rounding is not the kernel's error: both sides see identical values).
Then, element by element (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1, §3.5):

* each product of two bf16 numbers (8-bit significands) is exact in FP32 (16 <= 24 bits);
* K additions, the alpha scaling and the beta·C0 addition, each in FP32, give at most
  ``γ_{K+2}·T`` with ``T = |alpha|·(|A||B|) + |beta|·|C0|``, ``γ_n = n·u / (1 − n·u)``,
  ``u = 2^-24``, for any summation order. Tensor cores do not promise IEEE round-to-nearest
  inside an MMA (a k-group of products is aligned to the largest exponent and the sum may be
  truncated), so each step is allowed round-toward-zero's 2u: ``e_acc = γ_{K+2}(2u)·T``;
* a bf16 output adds one rounding of the FP32 result: at most ``u_bf16 = 2^-8`` of its magnitude,
  ``u_bf16·(|ref| + e_acc)``. A float32 output adds nothing (its rounding is the last of the
  K + 2 operations above).

So ``|Ĉ − ref| <= e_acc + u_out·(|ref| + e_acc)`` for every element: a rigorous bound, which a
correct kernel cannot fail, and which a wrong index, a skipped k-tile, a NaN or an unwritten
element fail. Alongside it the normwise relative error ‖Ĉ − ref‖_F / ‖ref‖_F is held to
``u_out + normwise_bound(K)`` (FP32 accumulation's typical √K·u behaviour with the FP32 ladder's
headroom, plus at most one output rounding per element): it catches small systematic errors the
elementwise bound is too loose for at large K (it grows like K).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gemmlab.numerics.bounds import FP32_U, gamma, normwise_bound

BF16_U = 2.0**-8  # unit roundoff of bfloat16 (8-bit significand, round to nearest)
# Allowance for tensor-core accumulation: round-toward-zero's 2u instead of u per FP32 step.
TC_ACCUM_FACTOR = 2.0
OUT_U = {"fp32": 0.0, "bf16": BF16_U}  # extra output rounding beyond the FP32 operations
# A quiet bf16 NaN with a payload no arithmetic produces (NVIDIA's canonical bf16 NaN is 0x7FFF):
# this pattern left in C means "nothing wrote here".
POISON_BF16 = 0x7FDE


def _xp(x: Any) -> Any:
    if isinstance(x, np.ndarray) or np.isscalar(x):
        return np
    import cupy

    return cupy


def to_bits(x: Any) -> Any:
    """float32 (or float64, rounded to float32 first) -> uint16 bfloat16 bit patterns, round to
    nearest even; NaN -> quiet NaN of the same sign; values past the largest bf16 -> inf."""
    xp = _xp(x)
    u = xp.asarray(x, dtype=xp.float32).view(xp.uint32)
    rounded = (u + xp.uint32(0x7FFF) + ((u >> 16) & xp.uint32(1))) >> 16
    nan = (u & xp.uint32(0x7FFFFFFF)) > xp.uint32(0x7F800000)
    quiet = (u >> 16) | xp.uint32(0x0040)
    return xp.where(nan, quiet, rounded).astype(xp.uint16)


def from_bits(bits: Any) -> Any:
    """uint16 bfloat16 bit patterns -> float32 (exact)."""
    xp = _xp(bits)
    b = xp.asarray(bits)
    if b.dtype != xp.uint16:
        raise TypeError(f"expected uint16 bfloat16 bit patterns, got {b.dtype}")
    return (b.astype(xp.uint32) << 16).view(xp.float32)


def round_bf16(x: Any) -> Any:
    """float32 values rounded to the nearest bfloat16, as float32."""
    return from_bits(to_bits(x))


@dataclass(frozen=True)
class Tolerance:
    """The bound one GEMM output is held to (see the module docstring for the derivation)."""

    K: int
    out_dtype: str  # "bf16" or "fp32"
    accum_factor: float  # e_acc = accum_factor * T
    out_u: float  # one output rounding's relative error (0 for float32 output)
    normwise: float  # bound on ||C - ref||_F / ||ref||_F
    in_dtype: str = "bf16"  # the inputs' type ("fp8": gemmlab.numerics.fp8.tolerance), for messages

    def elementwise(self, absref: Any, ref: Any) -> Any:
        """The largest |C - ref| allowed per element: e_acc + out_u * (|ref| + e_acc)."""
        xp = _xp(absref)
        e_acc = self.accum_factor * absref
        return e_acc + self.out_u * (xp.abs(ref) + e_acc)


def tolerance(K: int, out_dtype: str = "bf16") -> Tolerance:
    """The bound for a BF16-input, FP32-accumulate GEMM of inner dimension K with ``out_dtype``
    output ("bf16" or "fp32")."""
    if out_dtype not in OUT_U:
        raise ValueError(f"out_dtype={out_dtype!r}: expected 'bf16' or 'fp32'")
    if K < 1:
        raise ValueError(f"K={K}: expected >= 1")
    acc = gamma(K + 2, TC_ACCUM_FACTOR * FP32_U)
    u = OUT_U[out_dtype]
    return Tolerance(K=K, out_dtype=out_dtype, accum_factor=acc, out_u=u,
                     normwise=u + normwise_bound(K))


def within(out: Any, ref: Any, absref: Any, tol: Tolerance) -> tuple[bool, float, int]:
    """(every element finite and within the bound, the worst |C - ref| / bound, how many
    elements exceed it). ``out`` is float32 or float64 (decode bf16 with from_bits first)."""
    xp = _xp(out)
    out64 = out.astype(xp.float64)
    finite = xp.isfinite(out64)
    bound = tol.elementwise(absref, ref)
    err = xp.where(finite, xp.abs(out64 - ref), xp.inf)
    tiny = np.finfo(np.float32).tiny  # an exact zero result must still allow a zero error
    ratio = err / xp.maximum(bound, tiny)
    worst = float(ratio.max()) if ratio.size else 0.0
    n_over = int((ratio > 1.0).sum())
    return n_over == 0 and math.isfinite(worst), worst, n_over
