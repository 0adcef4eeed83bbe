"""What is being measured: a frozen, hashable description of one GEMM configuration.

``BenchSpec`` is the key a measurement is filed under (like ``TaskSpec`` in
``torch.utils.benchmark``): kernel name, problem shape, scalars, data type and the kernel's
compile-time parameters. It is validated when it is built, so nothing downstream has to wonder
whether ``M`` is a positive int.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from gemmlab.errors import InputError
from gemmlab.problem import check_shape, gemm_flops

# "float32": the SGEMM ladder (cuBLAS in true FP32, TF32 off; FP32 bound in bench.check).
# "bf16": A, B bfloat16, FP32 accumulation, C bfloat16; "bf16_fp32out": the same with C float32
# (the tensor-core ladder; cublasGemmEx with the same types; bound in numerics.bf16).
# "fp8_e4m3": A e4m3 (M x K), B e4m3 given N x K ("TN"), tensor-core accumulation, C bfloat16 (the
# FP8 ladder; cuBLASLt FP8 with the same types; bound in numerics.fp8).
DTYPES = ("float32", "bf16", "bf16_fp32out", "fp8_e4m3")


def spec_dtype(in_dtype: str, out_dtype: str) -> str:
    """The BenchSpec dtype of a rung with these registry dtypes ("fp32"/"bf16"/"fp8")."""
    if in_dtype == "fp32":
        return "float32"
    if in_dtype == "fp8":
        return "fp8_e4m3"
    return "bf16" if out_dtype == "bf16" else "bf16_fp32out"

def _finite(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    if not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def freeze_params(params: Mapping[str, int] | tuple | None) -> tuple[tuple[str, int], ...]:
    """Kernel parameters as a sorted tuple of (name, int) pairs, so the spec stays hashable."""
    if params is None:
        return ()
    items = params.items() if isinstance(params, Mapping) else params
    out = []
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise InputError(f"params must map names to integers, got entry {item!r}")
        key, value = item
        if not isinstance(key, str) or not key:
            raise InputError(f"params names must be non-empty strings, got {key!r}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"params[{key!r}] must be an integer, got {value!r}")
        out.append((key, value))
    return tuple(sorted(out))


@dataclass(frozen=True)
class BenchSpec:
    """One GEMM configuration: C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C (row-major)."""

    kernel: str
    M: int
    N: int
    K: int
    alpha: float = 1.0
    beta: float = 0.0
    dtype: str = "float32"
    params: tuple[tuple[str, int], ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.kernel, str) or not self.kernel.strip():
            raise InputError(f"kernel must be a non-empty name, got {self.kernel!r}")
        check_shape(self.M, self.N, self.K)
        object.__setattr__(self, "alpha", _finite("alpha", self.alpha))
        object.__setattr__(self, "beta", _finite("beta", self.beta))
        if self.dtype not in DTYPES:
            raise InputError(f"dtype must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        object.__setattr__(self, "params", freeze_params(self.params))

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.M, self.N, self.K)

    @property
    def flops(self) -> int:
        """2·M·N·K: one multiply and one add per term (the alpha/beta epilogue is not counted)."""
        return gemm_flops(self.M, self.N, self.K)

    def with_kernel(self, kernel: str, params: Mapping[str, int] | None = None) -> "BenchSpec":
        """The same problem for another kernel."""
        return BenchSpec(kernel, self.M, self.N, self.K, self.alpha, self.beta, self.dtype, freeze_params(params))

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "M": self.M,
            "N": self.N,
            "K": self.K,
            "alpha": self.alpha,
            "beta": self.beta,
            "dtype": self.dtype,
            "params": dict(self.params),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "BenchSpec":
        return cls(
            kernel=d["kernel"],
            M=d["M"],
            N=d["N"],
            K=d["K"],
            alpha=d.get("alpha", 1.0),
            beta=d.get("beta", 0.0),
            dtype=d.get("dtype", "float32"),
            params=freeze_params(d.get("params") or {}),
        )
