"""IEEE half (fp16) inputs with FP32 accumulation: the bound a user's fp16 GEMM is checked against.

The same derivation as ``gemmlab.numerics.bf16``: the inputs are exact fp16 values (the reference is
computed from them in float64), the products and sums run in FP32 (tensor cores round toward zero,
hence ``TC_ACCUM_FACTOR``), and an fp16 output adds one rounding of unit roundoff 2⁻¹¹ (11-bit
significand). A kernel that accumulates in fp16 itself (``__hfma`` chains) is held to FP32
accumulation and fails: the check says what the kernel computes, not what would be good enough.
fp16's range ends at 65504; the check's inputs are uniform in [-1, 1], so sums stay far below it
for K < 65504.
"""

from __future__ import annotations

from gemmlab.numerics.bf16 import TC_ACCUM_FACTOR, Tolerance
from gemmlab.numerics.bounds import FP32_U, gamma, normwise_bound

FP16_U = 2.0**-11  # unit roundoff of IEEE half (11-bit significand, round to nearest)
OUT_U = {"fp32": 0.0, "fp16": FP16_U}
# A quiet half NaN with a payload no arithmetic produces (NVIDIA's canonical half NaN is 0x7FFF):
# this pattern left in C means "nothing wrote here".
POISON_FP16 = 0x7EAD


def tolerance(K: int, out_dtype: str = "fp16") -> Tolerance:
    """The bound for an FP16-input, FP32-accumulate GEMM of inner dimension K."""
    if out_dtype not in OUT_U:
        raise ValueError(f"out_dtype={out_dtype!r}: expected 'fp16' or 'fp32'")
    if K < 1:
        raise ValueError(f"K={K}: expected >= 1")
    u = OUT_U[out_dtype]
    return Tolerance(K=K, out_dtype=out_dtype, accum_factor=gamma(K + 2, TC_ACCUM_FACTOR * FP32_U), out_u=u,
                     normwise=u + normwise_bound(K), in_dtype="fp16")
