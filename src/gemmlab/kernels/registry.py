"""Looking rungs up: by name (``get``, ``names``), by dtype (``all_rungs``, ``ladder``,
``autotune_candidates``), the sweep (``sweep_variants``) and the abstract rungs resolved at launch
(``AUTOTUNED``, ``DISPATCH``).

What a rung is lives in gemmlab.kernels.families (``Rung``, the families and their checks, the
dtype and architecture facts); which rungs exist, in gemmlab.kernels.ladders (the ladders, twins,
sweep and autotuner candidates). This module only puts them together for callers that look rungs
up, so it stays small.
"""

from __future__ import annotations

from gemmlab.errors import InputError
from gemmlab.kernels.families import AUTOTUNED, DTYPES, Rung
from gemmlab.kernels.ladders import (BF16_CANDIDATES, DISPATCH, DISPATCH_TC, FP8_LADDER,
                                     FP8_SHAPE_RUNGS, FP32_CANDIDATES, LADDER, SHAPE_RUNGS, SWEEP,
                                     TC_LADDER, TC_SHAPE_RUNGS, f32_out_twin, scalar_twin)

__all__ = ["AUTOTUNED", "DISPATCH", "DISPATCHERS", "DISPATCH_TC", "abstract", "all_rungs", "autotune_candidates", "get", "ladder", "names",
           "sweep_variants"]

_BY_NAME: dict[str, Rung] = {}
# The rungs that pick their kernels per shape at launch (gemmlab.runtime.launch.prepare).
DISPATCHERS = (DISPATCH,) + DISPATCH_TC


def abstract(name: str) -> bool:
    """True for a rung that is resolved at launch: autotuned (a tuned winner) or a dispatcher."""
    return name in AUTOTUNED or name in DISPATCHERS


def _check_dtype(dtype: str | None) -> None:
    if dtype is not None and dtype not in DTYPES:
        raise InputError(f"dtype={dtype!r}: expected one of {', '.join(DTYPES)}")


def _tc_all() -> tuple[Rung, ...]:
    base = (TC_LADDER + tuple(f32_out_twin(r) for r in TC_LADDER if r.name not in AUTOTUNED)
            + BF16_CANDIDATES + TC_SHAPE_RUNGS)
    return base + tuple(scalar_twin(r) for r in base if r.vectorized)


def sweep_variants() -> tuple[Rung, ...]:
    """The first seed article's smem_tiled variants: tile 8/16/32, block shapes 8x8, 16x16,
    32x8, 32x16, extra vs minimal barriers, rolled vs unrolled inner loop."""
    return SWEEP


def autotune_candidates(dtype: str = "fp32") -> tuple[Rung, ...]:
    """The instantiations the autotuned rung of ``dtype``'s ladder chooses from."""
    _check_dtype(dtype)
    return BF16_CANDIDATES if dtype == "bf16" else FP32_CANDIDATES


def all_rungs(dtype: str | None = "fp32") -> tuple[Rung, ...]:
    """Every instantiation gemmlab can launch for ``dtype``.

    "fp32" (the default, as before the tensor-core ladder existed): the SGEMM ladder, the sweep,
    the autotuner's candidates, the dispatch rung and the scalar twin of each vector rung. "bf16":
    the tensor-core ladder, the float32-output twin of each rung and the scalar twin of each vector
    rung. "fp8": the FP8 ladder (no twins: bf16 output only, TMA only). None: all three.
    """
    _check_dtype(dtype)
    if dtype == "bf16":
        return _tc_all()
    if dtype == "fp8":
        return FP8_LADDER + FP8_SHAPE_RUNGS
    base = LADDER + SWEEP + FP32_CANDIDATES + SHAPE_RUNGS
    fp32 = base + tuple(scalar_twin(r) for r in base if r.vectorized)
    return fp32 if dtype == "fp32" else fp32 + _tc_all() + FP8_LADDER + FP8_SHAPE_RUNGS


def ladder(dtype: str = "fp32") -> tuple[Rung, ...]:
    """The rungs ``gemmlab ladder --dtype DTYPE`` climbs: LADDER, TC_LADDER or FP8_LADDER."""
    _check_dtype(dtype)
    return {"bf16": TC_LADDER, "fp8": FP8_LADDER}.get(dtype, LADDER)


def get(name: str) -> Rung:
    """The rung called ``name`` (either ladder); InputError listing the valid names otherwise."""
    if not _BY_NAME:
        _BY_NAME.update((r.name, r) for r in all_rungs(None))
    try:
        return _BY_NAME[name]
    except KeyError:
        ladder_names = ", ".join(r.name for r in LADDER)
        tc = ", ".join(r.name for r in TC_LADDER)
        f8 = ", ".join(r.name for r in FP8_LADDER)
        raise InputError(
            f"unknown rung {name!r}; ladder rungs: {ladder_names} (plus the smem_tiled_t*_b* "
            f"sweep variants, autotuned_* candidates and *_scalar twins: see "
            f"gemmlab.kernels.registry.all_rungs()); {DISPATCH}, {', '.join(DISPATCH_TC)} (pick "
            f"kernels by shape); "
            f"bf16 tensor-core rungs: {tc} (plus *_f32out and *_scalar twins); fp8 rungs: {f8}") from None


def names() -> tuple[str, ...]:
    """Names of all rungs of both ladders, in all_rungs(None) order."""
    return tuple(r.name for r in all_rungs(None))
