"""The FP32 error bounds every correctness check derives from (``check`` for the SGEMM ladder,
``bf16`` and ``fp8`` for the tensor-core ladders, the lessons' checks).

``gamma`` is Higham's γ_n (*Accuracy and Stability of Numerical Algorithms*, §3.1): the worst-case
relative error growth of n floating-point operations with unit roundoff u; ``normwise_bound`` the
stated bound on the normwise relative error of an FP32 GEMM with inner dimension K.
"""

from __future__ import annotations

import math

# float32 unit roundoff (round to nearest): 2**-24.
FP32_U = 2.0**-24

# Normwise bound for K <= 16384. Rounding errors of a length-K FP32 dot product behave like a
# random walk, so the typical relative error of the whole product is about sqrt(K)·u: 2.7e-6 at
# K=2048, 7.6e-6 at K=16384, whatever the summation order. 1e-4 leaves more than 10x headroom for
# any FP32 kernel at those sizes while TF32 (≈3e-4 on random inputs), BF16 (1e-3..1e-2), a missing
# k-tile (≈1/sqrt(number of tiles)) or a mis-indexed operand (≈1) all fail. Beyond K=16384 the
# bound grows like sqrt(K), as the typical error does.
NORMWISE_BOUND = 1e-4
NORMWISE_BOUND_K = 16384


def normwise_bound(K: int) -> float:
    """The stated FP32 bound on ‖C − ref‖_F / ‖ref‖_F for a GEMM with inner dimension K."""
    return NORMWISE_BOUND * max(1.0, math.sqrt(K / NORMWISE_BOUND_K))


def gamma(n: int, u: float = FP32_U) -> float:
    """γ_n = n·u / (1 − n·u): the worst-case relative error growth of n floating-point operations."""
    nu = n * u
    if nu >= 1:
        return math.inf
    return nu / (1 - nu)
