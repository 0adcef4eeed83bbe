"""Poisoned outputs and the two ways a lesson's output is judged (numpy or cupy as ``xp``).

Outputs are allocated with guard elements after them; output and guard are filled with the harness's
poison NaN (``gemmlab.bench.check.POISON_BITS``). After a run, an element still holding the poison
was never written, a guard element that changed was written out of bounds, and a NaN or inf fails.

* ``exact``: integer or copied data must equal the reference bit for bit.
* ``within``: each element within a stated bound of a float64 reference.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from gemmlab.bench.check import POISON_BITS
from gemmlab.lessons.base import LessonCheck

GUARD = 1024  # elements poisoned after every output


def poisoned(xp: Any, n: int, dtype: Any) -> tuple[Any, Any]:
    """(output of n elements, guard of GUARD elements), both poisoned, in one allocation."""
    buf = xp.full(n + GUARD, POISON_BITS, dtype=xp.uint32)
    view = buf.view(xp.float32) if np.dtype(dtype) == np.float32 else buf.view(xp.int32)
    return view[:n], view[n:]


def _unwritten(xp: Any, out: Any) -> Any:
    return out.view(xp.uint32) == xp.uint32(POISON_BITS)


def _guard_written(xp: Any, guard: Optional[Any]) -> int:
    if guard is None:
        return 0
    return int((guard.view(xp.uint32) != xp.uint32(POISON_BITS)).sum())


def _first(xp: Any, mask: Any) -> Optional[int]:
    return int(xp.argmax(mask.ravel())) if bool(mask.any()) else None


def exact(out: Any, expected: Any, xp: Any, guard: Optional[Any] = None) -> LessonCheck:
    """Every element equal to ``expected``; nothing unwritten, non-finite or out of bounds."""
    out, expected = out.ravel(), expected.ravel()
    if out.shape != expected.shape:
        raise ValueError(f"shapes differ: out {out.shape}, expected {expected.shape}")
    unwritten = _unwritten(xp, out) if out.dtype.itemsize == 4 and out.dtype.kind == "f" else out != out
    nonfinite = ~xp.isfinite(out) & ~unwritten if out.dtype.kind == "f" else xp.zeros(out.shape, dtype=bool)
    wrong = (out != expected) & ~unwritten & ~nonfinite
    return _verdict(xp, out, unwritten, nonfinite, wrong, guard, None, None)


def within(out: Any, ref: Any, bound: Any, xp: Any, guard: Optional[Any] = None) -> LessonCheck:
    """|out - ref| <= bound elementwise (ref and bound float64); NaN/inf and unwritten fail."""
    out, ref, bound = out.ravel(), ref.ravel(), bound.ravel()
    unwritten = _unwritten(xp, out)
    out64 = out.astype(xp.float64)
    finite = xp.isfinite(out64)
    nonfinite = ~finite & ~unwritten
    err = xp.where(finite, xp.abs(out64 - ref), 0.0)
    wrong = finite & (err > bound)
    max_err = float(err.max()) if out.size else 0.0
    norm = float(xp.linalg.norm(ref))
    rel = float(xp.linalg.norm(err)) / norm if norm > 0 else 0.0
    return _verdict(xp, out, unwritten, nonfinite, wrong, guard, max_err, rel)


def _verdict(xp, out, unwritten, nonfinite, wrong, guard, max_err, rel) -> LessonCheck:
    n_un, n_nf, n_wr = int(unwritten.sum()), int(nonfinite.sum()), int(wrong.sum())
    n_guard = _guard_written(xp, guard)
    if n_un:
        reason = f"{n_un} of {out.size} elements were never written (still poisoned), first at {_first(xp, unwritten)}"
    elif n_nf:
        reason = f"{n_nf} elements are NaN or inf, first at {_first(xp, nonfinite)}"
    elif n_guard:
        reason = f"{n_guard} elements past the end of the output were overwritten (out-of-bounds writes)"
    elif n_wr:
        reason = f"{n_wr} of {out.size} elements differ from the reference, first at {_first(xp, wrong)}"
    else:
        reason = "ok"
    return LessonCheck(reason == "ok", reason, int(out.size), n_un, n_nf, n_wr, n_guard, max_err, rel)
