"""A GEMM problem's shape: parsing it, checking it, and the work it holds.

C[M,N] = alpha * A[M,K] @ B[K,N] + beta * C. Every layer counts FLOPs and validates shapes here, so
a "2·M·N·K" or a 32-bit limit is written once.
"""

from __future__ import annotations

from typing import Any

from gemmlab.errors import InputError

# Element types, one vocabulary everywhere (the kernel registry, BenchSpec, the store, run JSON and
# the CLI's --dtype): "fp32"; "bf16" (bfloat16, held as uint16 bit patterns); "fp8" (OCP e4m3, held
# as uint8 bit patterns); "int32" (the atomics lesson's counters).
DTYPES = ("fp32", "bf16", "fp8", "int32", "fp16")  # fp16: IEEE half, your own kernels only
# C's type when only A's and B's is named: the FP8 ladder writes bf16; the others keep the type.
DEFAULT_OUT = {"fp32": "fp32", "bf16": "bf16", "fp8": "bf16", "int32": "int32", "fp16": "fp16"}
# The names BenchSpec used before there was one vocabulary (runs stored by gemmlab 0.1): (A/B, C).
LEGACY_DTYPES = {"float32": ("fp32", "fp32"), "bf16_fp32out": ("bf16", "fp32"), "fp8_e4m3": ("fp8", "bf16")}

# The kernels index with 32-bit ``int`` (``row * K + k``); an operand of 2**31 or more elements
# would overflow that index and write somewhere else.
MAX_ELEMENTS = 2**31 - 1


def gemm_flops(M: int, N: int, K: int) -> int:
    """2·M·N·K: one multiply and one add per term (the alpha/beta epilogue is not counted)."""
    return 2 * M * N * K


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be a positive integer, got {value!r} ({name}={value!r})")
    if value < 1:
        raise InputError(f"{name} must be a positive integer (>= 1), got {value} ({name}={value})")
    return value


def check_shape(M: Any, N: Any, K: Any) -> tuple[int, int, int]:
    """(M, N, K) after checking each is an integer >= 1 and every operand fits 32-bit indexing;
    InputError naming the dimension or operand otherwise."""
    for name, v in (("M", M), ("N", N), ("K", K)):
        _positive_int(name, v)
    for name, a, b in (("M*K (A)", M, K), ("K*N (B)", K, N), ("M*N (C)", M, N)):
        if a * b > MAX_ELEMENTS:
            raise InputError(
                f"shape M,N,K={M},{N},{K}: {name} has {a * b} elements; "
                f"the ladder kernels index with 32-bit int, so at most {MAX_ELEMENTS} are allowed"
            )
    return M, N, K


def parse_shape(text: str, what: str = "--shape") -> tuple[int, int, int]:
    """``"M,N,K"`` → (M, N, K), each a positive integer; errors name ``what`` (the flag or field the
    text came from) and the value."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise InputError(f"{what} expects three positive integers M,N,K (e.g. 2048,2048,2048), got {text!r}")
    M, N, K = (int(p) for p in parts)
    for name, v in (("M", M), ("N", N), ("K", K)):
        if v < 1:
            raise InputError(f"{what} {text}: {name} must be >= 1, got {v}")
    return M, N, K


def gemm_types(dtype: Any, out_dtype: Any = None) -> tuple[str, str]:
    """(A/B dtype, C dtype) in the one vocabulary; a legacy name (``float32``, ``bf16_fp32out``,
    ``fp8_e4m3``) maps to its pair. ``out_dtype`` None: the default for ``dtype``."""
    if dtype in LEGACY_DTYPES and not out_dtype:
        return LEGACY_DTYPES[dtype]
    if dtype not in DTYPES:
        raise InputError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    out = out_dtype or DEFAULT_OUT[dtype]
    if out not in DTYPES:
        raise InputError(f"out_dtype must be one of {', '.join(DTYPES)}, got {out!r}")
    return dtype, out
