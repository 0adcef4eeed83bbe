"""Correctness of one GEMM configuration, checked before it is timed.

Every check draws fresh random inputs (a seeded generator that keeps advancing, so a run is
reproducible but no two checks see the same matrices), poisons the output, runs the kernel once
and compares with a float64 reference computed from the same FP32 inputs.

Two passes:

* ``beta = 0``, C filled with a NaN carrying a recognisable payload (``POISON_BITS``). Any element
  still holding that bit pattern afterwards was never written. BLAS semantics say C is not read
  when beta is 0, so a correct kernel overwrites every element; a kernel that reads C anyway
  turns the poison into NaN and fails too. ``guard`` elements past the end of C are poisoned as
  well and must stay poisoned: a kernel without bounds checks writes there at shapes that are not
  a multiple of its tile.
* only when the configuration's beta is not 0: C holds random values C0 and the reference is
  alpha·A·B + beta·C0, so an unwritten element (still C0) or a wrong beta term is an error.

Verdict, all on float64: no NaN or inf anywhere; no element unwritten; the normwise relative error
``‖C − ref‖_F / ‖ref‖_F`` within ``normwise_bound(K)``; and every element within the
componentwise FP32 bound ``|C − ref| ≤ γ_{K+2} · (|alpha|·|A|·|B| + |beta|·|C0|)``, with
``γ_n = n·u / (1 − n·u)`` and ``u = 2⁻²⁴`` (Higham, *Accuracy and Stability of Numerical
Algorithms*, §3.1 and §3.5: it holds for any order of summation, with or without FMA). The
componentwise test is rigorous — a correct FP32 kernel cannot fail it — and catches a single wrong
element that a norm over millions of elements would average away. The normwise test catches what
the componentwise bound is too loose for: reduced precision (TF32 lands near 3e-4) and small
systematic errors.

The BF16 tensor-core ladder is checked the same way with bfloat16 inputs (uint16 bit patterns,
the reference computed from the same bf16 values) and, for bf16 output, a bf16 poison pattern;
its bound comes from ``gemmlab.numerics.bf16.tolerance`` (``tol=``), derived there. The FP8 rungs
get e4m3 inputs (uint8 bit patterns, B drawn N x K: the "TN" layout they take; the reference is
A @ B^T of the same e4m3 values), bf16 poison, and ``gemmlab.numerics.fp8.tolerance``.

The core (``evaluate``) is array-library agnostic (numpy or cupy, passed as ``xp``), so the CPU
tests feed it deliberately wrong outputs.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional

import numpy as np

from gemmlab.numerics.bounds import gamma, normwise_bound

# A quiet NaN with the payload 0xDEAD. NaNs that arithmetic produces on NVIDIA GPUs are the
# canonical 0x7FFFFFFF, so this exact pattern in the output means "nothing wrote here".
POISON_BITS = 0x7FC0DEAD

# How many elements past the end of C are poisoned and must stay untouched.
GUARD_MIN = 1024


def componentwise_factor(K: int) -> float:
    """γ_{K+2}: K multiply-adds, the alpha scaling, and the beta·C addition."""
    return gamma(K + 2)


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one kernel output. ``ok`` is True only when every test passed."""

    ok: bool
    reason: str  # "ok", or the first failed test in words
    rel_err: float  # ‖C − ref‖_F / ‖ref‖_F, non-finite elements counted as 0 (nan when none is finite)
    bound: float  # the normwise bound it was held to
    max_abs_err: float
    n_unwritten: int
    first_unwritten: Optional[tuple[int, int]]
    n_nonfinite: int  # NaN or inf that is not the poison pattern
    first_nonfinite: Optional[tuple[int, int]]
    n_over_bound: int  # elements outside the componentwise bound
    first_over_bound: Optional[tuple[int, int]]
    n_guard_written: int  # poisoned elements past the end of C that were overwritten
    beta: float = 0.0
    passes: tuple = ()  # for a combined check: the CheckResult of each pass, as dicts

    def to_dict(self) -> dict:
        d = asdict(self)
        d["passes"] = list(self.passes)
        return d


def _index(flat: int, cols: int) -> tuple[int, int]:
    return (flat // cols, flat % cols)


def _first(xp: Any, mask: Any, cols: int) -> tuple[int, Optional[tuple[int, int]]]:
    n = int(mask.sum())
    if n == 0:
        return 0, None
    return n, _index(int(xp.argmax(mask.ravel())), cols)


def poison(xp: Any, shape: tuple[int, ...]) -> Any:
    """A float32 array of ``shape`` filled with the poison NaN."""
    return xp.full(shape, POISON_BITS, dtype=xp.uint32).view(xp.float32)


def evaluate(
    out: Any,
    ref: Any,
    absref: Any,
    K: int,
    *,
    guard: Any = None,
    beta: float = 0.0,
    xp: Any = np,
    tol: Any = None,
) -> CheckResult:
    """Judge ``out`` (M×N) against ``ref`` = the exact product and ``absref`` = the matching sum
    of magnitudes (|alpha|·|A|·|B| + |beta|·|C0|), both float64.

    ``out`` is float32, or uint16 bfloat16 bit patterns (then poisoned with ``POISON_BF16``).
    ``tol``: a ``gemmlab.numerics.bf16.Tolerance`` for BF16-input kernels; None holds ``out`` to the
    FP32 bounds above. ``guard``: the elements allocated after C, poisoned before the run, or None.
    """
    if out.shape != ref.shape or ref.shape != absref.shape:
        raise ValueError(f"shapes differ: out {out.shape}, ref {ref.shape}, absref {absref.shape}")
    cols = out.shape[1]
    if out.dtype == np.uint16:  # cupy dtypes are numpy dtypes
        from gemmlab.numerics.bf16 import POISON_BF16, from_bits

        poison_value, unit = xp.uint16(POISON_BF16), xp.uint16
        unwritten = out == poison_value
        out64 = from_bits(out).astype(xp.float64)
    elif out.dtype == np.float16:
        from gemmlab.numerics.fp16 import POISON_FP16

        poison_value, unit = xp.uint16(POISON_FP16), xp.uint16
        unwritten = out.view(xp.uint16) == poison_value
        out64 = out.astype(xp.float64)
    else:
        poison_value, unit = xp.uint32(POISON_BITS), xp.uint32
        unwritten = out.view(xp.uint32) == poison_value
        out64 = out.astype(xp.float64)
    n_unwritten, first_unwritten = _first(xp, unwritten, cols)
    finite = xp.isfinite(out64)
    n_nonfinite, first_nonfinite = _first(xp, ~finite & ~unwritten, cols)

    # A NaN, inf or unwritten element counts as 0 in the norm (its error is the whole reference
    # value), so a half-written output gets a relative error that says how much is missing.
    diff = xp.where(finite, out64 - ref, -ref)
    ref_norm = float(xp.linalg.norm(ref))
    if bool(finite.any()):
        err_norm = float(xp.linalg.norm(diff))
        rel_err = err_norm / ref_norm if ref_norm > 0 else (0.0 if err_norm == 0 else math.inf)
        max_abs_err = float(xp.abs(xp.where(finite, diff, 0.0)).max())
    else:
        rel_err, max_abs_err = math.nan, math.nan
    if tol is None:
        allowed, kind = componentwise_factor(K) * absref, "FP32 componentwise bound γ_(K+2)·(|α||A||B| + |β||C0|)"
        bound, what = normwise_bound(K), "FP32"
    else:
        allowed = tol.elementwise(absref, ref)
        label, module = {"fp8": ("FP8-input", "fp8"), "fp16": ("FP16-input", "fp16")}.get(tol.in_dtype,
                                                                                      ("BF16-input", "bf16"))
        kind = f"{label} componentwise bound ({tol.out_dtype} output, gemmlab.numerics.{module})"
        bound, what = tol.normwise, f"{label} ({tol.out_dtype} output)"
    over = finite & (xp.abs(diff) > allowed)
    n_over, first_over = _first(xp, over, cols)

    n_guard = 0
    if guard is not None:
        n_guard = int((guard.view(unit) != poison_value).sum())

    if n_unwritten:
        reason = (
            f"{n_unwritten} of {out.size} elements still hold the poison value, first at {first_unwritten} "
            "(never written, or C was read although beta is 0)"
        )
    elif n_nonfinite:
        reason = f"{n_nonfinite} elements are NaN or inf, first at {first_nonfinite}"
    elif n_guard:
        reason = f"{n_guard} elements past the end of C were overwritten (out-of-bounds writes)"
    elif n_over:
        i, j = first_over
        reason = (
            f"{n_over} elements exceed the {kind}, "
            f"first at {first_over}: got {float(out64[i, j])!r}, expected {float(ref[i, j])!r}"
        )
    elif not rel_err <= bound:
        reason = f"relative error {rel_err:.3e} exceeds the {what} bound {bound:.1e}"
    else:
        reason = "ok"
    return CheckResult(
        ok=reason == "ok",
        reason=reason,
        rel_err=rel_err,
        bound=bound,
        max_abs_err=max_abs_err,
        n_unwritten=n_unwritten,
        first_unwritten=first_unwritten,
        n_nonfinite=n_nonfinite,
        first_nonfinite=first_nonfinite,
        n_over_bound=n_over,
        first_over_bound=first_over,
        n_guard_written=n_guard,
        beta=beta,
    )


def reference(a: Any, b: Any, alpha: float, beta: float, c0: Any = None, xp: Any = np) -> tuple[Any, Any]:
    """(ref, absref) in float64: alpha·A·B + beta·C0 and |alpha|·|A|·|B| + |beta|·|C0|."""
    a64 = a.astype(xp.float64)
    b64 = b.astype(xp.float64)
    ref = alpha * (a64 @ b64)
    absref = abs(alpha) * (xp.abs(a64) @ xp.abs(b64))
    del a64, b64
    if beta != 0.0:
        c64 = c0.astype(xp.float64)
        ref += beta * c64
        absref += abs(beta) * xp.abs(c64)
    return ref, absref


def combine(results: list[CheckResult]) -> CheckResult:
    """One verdict over several passes: the first failure, or the worst relative error if all pass."""
    failed = [r for r in results if not r.ok]
    head = failed[0] if failed else max(results, key=lambda r: r.rel_err)
    d = asdict(head)
    d["passes"] = tuple(r.to_dict() for r in results)
    if failed and len(results) > 1:
        d["reason"] = f"beta={head.beta:g} pass: {head.reason}"
    return CheckResult(**d)


Launch = Callable[[Any, Any, Any, float, float], None]


class Checker:
    """Checks kernels on fresh random inputs; the generator is seeded once and keeps advancing."""

    def __init__(self, xp: Any = np, seed: int = 0, synchronize: Callable[[], None] = lambda: None) -> None:
        self.xp = xp
        self.seed = seed
        self._rng = xp.random.default_rng(seed)
        self._synchronize = synchronize

    def _uniform(self, shape: tuple[int, int]) -> Any:
        # Zero-mean inputs: results cancel, so sign and indexing mistakes cannot hide, and no
        # element is zero (zeros would hide unwritten outputs and can time faster).
        return self._rng.random(shape, dtype=self.xp.float32) * 2 - 1

    def check(self, run: Launch, M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0,
              in_dtype: str = "fp32", out_dtype: str = "fp32") -> CheckResult:
        """Run ``run(a, b, c, alpha, beta)`` once per pass and judge the output.

        ``in_dtype``/``out_dtype`` "bf16": A, B (and C) are uint16 bfloat16 bit patterns; the
        reference uses the same bf16 values and the bound from gemmlab.numerics.bf16.tolerance.
        ``in_dtype`` "fp8": A (M x K) and B (**N x K**) are uint8 e4m3 bit patterns, C bf16; the
        reference is A @ B^T and the bound gemmlab.numerics.fp8.tolerance."""
        from gemmlab.kernels.families import b_shape

        xp = self.xp
        a = self._operand((M, K), in_dtype)
        b = self._operand(b_shape(in_dtype, K, N), in_dtype)
        results = [self._pass(run, a, b, M, N, K, alpha, 0.0, in_dtype, out_dtype)]
        if beta != 0.0:
            results.append(self._pass(run, a, b, M, N, K, alpha, beta, in_dtype, out_dtype))
        del a, b
        if xp is not np:
            xp.get_default_memory_pool().free_all_blocks()
        return combine(results)

    def _operand(self, shape: tuple[int, int], dtype: str) -> Any:
        x = self._uniform(shape)
        if dtype == "fp16":
            return x.astype(self.xp.float16)
        if dtype == "bf16":
            from gemmlab.numerics.bf16 import to_bits

            return to_bits(x)
        if dtype == "fp8":
            from gemmlab.numerics import fp8

            return fp8.to_bits(x)
        return x

    def _pass(self, run: Launch, a: Any, b: Any, M: int, N: int, K: int, alpha: float, beta: float,
              in_dtype: str = "fp32", out_dtype: str = "fp32") -> CheckResult:
        xp = self.xp
        guard_n = max(GUARD_MIN, N)
        tol = None
        if out_dtype == "bf16":
            from gemmlab.numerics.bf16 import POISON_BF16

            buf = xp.full((M * N + guard_n,), POISON_BF16, dtype=xp.uint16)
        elif out_dtype == "fp16":
            from gemmlab.numerics.fp16 import POISON_FP16

            buf = xp.full((M * N + guard_n,), POISON_FP16, dtype=xp.uint16).view(xp.float16)
        else:
            buf = poison(xp, (M * N + guard_n,))
        c = buf[: M * N].reshape(M, N)
        c0 = None
        if beta != 0.0:
            c0 = self._operand((M, N), out_dtype)
            c[...] = c0
        run(a, b, c, alpha, beta)
        self._synchronize()
        if in_dtype == "bf16":
            from gemmlab.numerics.bf16 import from_bits, tolerance

            tol = tolerance(K, out_dtype)
            a, b = from_bits(a), from_bits(b)
        elif in_dtype == "fp16":
            from gemmlab.numerics import fp16

            tol = fp16.tolerance(K, out_dtype)  # a, b, c0 are exact float16 values: reference() widens them
        elif in_dtype == "fp8":
            from gemmlab.numerics import fp8

            tol = fp8.tolerance(K, out_dtype)
            a, b = fp8.from_bits(a), fp8.from_bits(b).T  # B is N x K: the product is A @ B^T
        if c0 is not None and out_dtype == "bf16":
            from gemmlab.numerics.bf16 import from_bits

            c0 = from_bits(c0)
        ref, absref = reference(a, b, alpha, beta, c0, xp=xp)
        return evaluate(c, ref, absref, K, guard=buf[M * N :], beta=beta, xp=xp, tol=tol)
