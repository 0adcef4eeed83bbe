"""FP8 (e4m3) on the host, and the error bound an FP8 tensor-core GEMM is held to (pure; NumPy or
CuPy arrays alike).

Storage. CuPy (and NumPy) have no 8-bit float dtype, so gemmlab holds e4m3 matrices as ``uint8``
arrays of bit patterns, row-major: A is M x K and B is given **N x K** ("TN": B transposed, both
operands K-major - 8-bit wgmma and cuBLASLt's FP8 kernels read no other layout). C is M x N bfloat16
(``uint16`` bits, gemmlab.numerics.bf16).

The format is OCP FP8 E4M3 as NVIDIA implements it (``__nv_fp8_e4m3``, PyTorch's
``float8_e4m3fn``): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; S.1111.111
is NaN (0x7F / 0xFF); the largest finite value is S.1111.110 = 1.75 * 2^8 = 448; normals down to
2^-6; subnormals m * 2^-9, m = 1..7. ``to_bits`` rounds float32 to the nearest e4m3 (ties to even)
and **saturates**: anything past 448 - infinities included - becomes +-448, as
``cvt.rn.satfinite.e4m3x2.f32`` does; NaN stays NaN (0x7F with the sign). ``from_bits`` is exact.

The bound. The kernel computes ``C^ = bf16(alpha * s^ + beta * C0)`` where s^ is the tensor cores'
sum of the K products of e4m3 values. The reference is the same product in float64 from the *same
e4m3 inputs* (input rounding is not the kernel's error). Element by element:

* each product of two e4m3 numbers (4-bit significands) is exact (8 bits) in FP32, and within its
  range (|p| <= 448^2, |p| >= 2^-18);
* the accumulation is *not* FP32 in the IEEE sense. Hopper's FP8 MMA keeps about 13 mantissa bits
  in its accumulator (reported as an "FP22" accumulator - 1 sign, 8 exponent, 13 mantissa bits - by
  SageAttention2, and as "around 14 bits" by DeepSeek-V3, section 3.3.2; NVIDIA does not document
  it). cuBLASLt's default FP8 mode promotes partial sums to FP32 registers now and then; its
  ``CUBLASLT_MATMUL_DESC_FAST_ACCUM`` mode, like this ladder's rung (and unlike DeepGEMM's
  two-level accumulation), does not. The model here: one accumulator rounding per k32 wgmma step
  (``ceil(K / 32)`` of them), each with relative error at most ``u_acc = 2^-13`` (13 kept fraction
  bits, truncation allowed), plus the alpha scaling and the beta * C0 addition in FP32. That gives
  ``e_acc = gamma_(ceil(K/32) + 2)(u_acc) * T`` with ``T = |alpha| * (|A||B|) + |beta| * |C0|``
  (Higham, §3.1: any summation order). It is a model of undocumented hardware, so the GPU probe
  prints the worst observed error as a fraction of it;
* the bf16 output adds one rounding: ``2^-8 * (|ref| + e_acc)``.

So ``|C^ - ref| <= e_acc + 2^-8 * (|ref| + e_acc)`` per element. The normwise relative error is held
to ``2^-8 + ceil(K/32) * u_acc + normwise_bound(K)``: the output rounding, then every accumulator
rounding at full size relative to the final result (truncation is biased, so these errors add up
rather than cancel: DeepSeek-V3 saw a maximum relative error near 2% at K = 4096), then the FP32
ladder's headroom. At K = 4096 that is about 2%; a k-tile (128 of K) missing from the sum costs
about 1/sqrt(K/128) = 18% and fails.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from gemmlab.numerics.bf16 import BF16_U, Tolerance
from gemmlab.numerics.bounds import FP32_U, gamma, normwise_bound

E4M3_MAX = 448.0  # largest finite e4m3 (S.1111.110)
E4M3_MAX_BITS = 0x7E
E4M3_NAN_BITS = 0x7F  # S.1111.111 (with the sign bit: 0xFF)
E4M3_MIN_NORMAL = 2.0**-6
E4M3_MIN_SUBNORMAL = 2.0**-9
# Relative error of one accumulator rounding of Hopper's FP8 MMA: 13 kept fraction bits, truncation
# allowed (2 x the round-to-nearest 2^-14), as bf16.TC_ACCUM_FACTOR allows truncation in FP32.
FP8_ACCUM_U = 2.0**-13
FP8_MMA_K = 32  # K of one wgmma.m64nNk32 e4m3 step: one accumulator rounding per step


def _xp(x: Any) -> Any:
    if isinstance(x, np.ndarray) or np.isscalar(x):
        return np
    import cupy

    return cupy


def to_bits(x: Any) -> Any:
    """float32 (or float64, rounded to float32 first) -> uint8 e4m3 bit patterns: round to nearest,
    ties to even; |x| past 448 (infinities included) -> +-448 (saturation); NaN -> NaN (0x7F with
    x's sign); -0.0 -> 0x80."""
    xp = _xp(x)
    u = xp.asarray(x, dtype=xp.float32).view(xp.uint32)
    sign = ((u >> 24) & xp.uint32(0x80)).astype(xp.uint8)
    a = u & xp.uint32(0x7FFFFFFF)  # |x| as float32 bits
    # Normal range (|x| >= 2^-6, float32 biased exponent >= 121): keep 3 of the 23 mantissa bits,
    # rounding the 20 dropped ones to nearest even; a carry moves into the exponent by itself.
    # (a >> 20) is exponent << 3 | top 3 mantissa bits; rebiasing 127 -> 7 subtracts 120 << 3.
    r = (a + xp.uint32(0x7FFFF) + ((a >> 20) & xp.uint32(1))) >> 20
    normal = r.astype(xp.int32) - (120 << 3)
    # Subnormal range (|x| < 2^-6): the value is m * 2^-9, m = round-half-even(|x| * 2^9); m = 8
    # is 2^-6, the smallest normal, whose code is also 8. Scaling by 2^9 is exact in float32.
    small = a < xp.uint32(0x3C800000)  # 0x3C800000 = 2^-6
    tiny = xp.where(small, a, xp.uint32(0)).view(xp.float32)  # large values out: no overflow
    sub = xp.rint(tiny * xp.float32(512.0)).astype(xp.int32)
    code = xp.where(small, sub, normal)
    code = xp.minimum(code, E4M3_MAX_BITS)  # saturate (also +-inf: their codes are far above)
    nan = a > xp.uint32(0x7F800000)
    code = xp.where(nan, E4M3_NAN_BITS, code)
    return code.astype(xp.uint8) | sign


@functools.lru_cache(maxsize=1)
def _table() -> np.ndarray:
    """The float32 value of each of the 256 e4m3 codes (NaN for 0x7F and 0xFF)."""
    out = np.empty(256, dtype=np.float32)
    for c in range(256):
        s = -1.0 if c & 0x80 else 1.0
        e, m = (c >> 3) & 0xF, c & 7
        if e == 0xF and m == 7:
            out[c] = np.nan
        elif e == 0:
            out[c] = s * m * E4M3_MIN_SUBNORMAL
        else:
            out[c] = s * (1.0 + m / 8.0) * 2.0 ** (e - 7)
    return out


def from_bits(bits: Any) -> Any:
    """uint8 e4m3 bit patterns -> float32 (exact)."""
    xp = _xp(bits)
    b = xp.asarray(bits)
    if b.dtype != xp.uint8:
        raise TypeError(f"expected uint8 e4m3 bit patterns, got {b.dtype}")
    table = _table() if xp is np else xp.asarray(_table())
    return table[b]


def round_e4m3(x: Any) -> Any:
    """float32 values rounded (and saturated) to e4m3, as float32."""
    return from_bits(to_bits(x))


def accum_steps(K: int) -> int:
    """Accumulator roundings of one output element: one per k32 wgmma step."""
    return -(-K // FP8_MMA_K)


def tolerance(K: int, out_dtype: str = "bf16") -> Tolerance:
    """The bound for an e4m3-input GEMM of inner dimension K with bf16 output, accumulated as
    Hopper's FP8 MMA does (see the module docstring for the derivation)."""
    if out_dtype != "bf16":
        raise ValueError(f"out_dtype={out_dtype!r}: the FP8 rungs write bf16 only")
    if K < 1:
        raise ValueError(f"K={K}: expected >= 1")
    steps = accum_steps(K)
    acc = gamma(steps + 2, FP8_ACCUM_U)
    return Tolerance(K=K, out_dtype=out_dtype, accum_factor=acc, out_u=BF16_U,
                     normwise=BF16_U + steps * FP8_ACCUM_U + normwise_bound(K), in_dtype="fp8")


def fp32_model_factor(K: int) -> float:
    """What the elementwise factor would be were the accumulation IEEE FP32 (the BF16 ladder's
    model, gamma_(K+2)(2u)): shown next to the FP8 model so a reader sees the price of the
    reduced-precision accumulator."""
    return gamma(K + 2, 2 * FP32_U)


def e4m3_values() -> np.ndarray:
    """Every finite e4m3 value, ascending (253 of them: +-0 counted once)."""
    t = _table()
    v = np.unique(t[~np.isnan(t)])
    assert math.isclose(float(v.max()), E4M3_MAX)
    return v
