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
from gemmlab.problem import check_shape, gemm_flops, gemm_types


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
    dtype: str = "fp32"  # A and B (gemmlab.problem.DTYPES)
    params: tuple[tuple[str, int], ...] = field(default=())
    out_dtype: str = ""  # C; "" = the default for dtype (fp8 writes bf16, the others keep the type)

    def __post_init__(self) -> None:
        if not isinstance(self.kernel, str) or not self.kernel.strip():
            raise InputError(f"kernel must be a non-empty name, got {self.kernel!r}")
        check_shape(self.M, self.N, self.K)
        object.__setattr__(self, "alpha", _finite("alpha", self.alpha))
        object.__setattr__(self, "beta", _finite("beta", self.beta))
        dtype, out_dtype = gemm_types(self.dtype, self.out_dtype or None)
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "out_dtype", out_dtype)
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
        return BenchSpec(kernel, self.M, self.N, self.K, self.alpha, self.beta, self.dtype, freeze_params(params),
                         self.out_dtype)

    def to_dict(self) -> dict:
        return {
            "kernel": self.kernel,
            "M": self.M,
            "N": self.N,
            "K": self.K,
            "alpha": self.alpha,
            "beta": self.beta,
            "dtype": self.dtype,
            "out_dtype": self.out_dtype,
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
            dtype=d.get("dtype", "fp32"),  # a legacy name maps to its (A/B, C) pair
            params=freeze_params(d.get("params") or {}),
            out_dtype=d.get("out_dtype") or "",
        )
