"""The shape map's GPU part: the ladder's harness at every shape of a grid, in FP32, BF16 or FP8.

Per shape, in grid order: prepare the rung (``runtime.launch.prepare``: the dispatch rung, the
default, plans its kernels for the shape; the autotuned rung resolves to its remembered or freshly
tuned winner; a vector rung falls back to its scalar twin when N or K is not a multiple of 4), check it (fresh random inputs, poisoned output and guard,
float64 reference: ``bench.check.Checker``), time it (``bench.timer.time_fn``: CUDA events, L2
flushed, warm-up and measurement budgets), then the reference the same way in the same process,
the two in interleaved rounds (``bench.ladder.run_targets``): cuBLAS SGEMM (TF32 off) for FP32,
cuBLAS BF16 at its best for ``--dtype bf16``, cuBLASLt FP8 at its best for ``fp8`` - where
cuBLASLt refuses an FP8 shape, the rung is measured alone and the shape says why it has no
reference. What actually ran — instantiation, compiler, grid — is recorded per shape.

``run_grid`` is the orchestration, run on a CPU with a fake ``Bench`` in the tests; ``measure``
builds the real bench, environment and copy ceiling and calls it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Callable, Optional, Sequence

from gemmlab.bench.ladder import (
    Bench,
    Target,
    cublas_bf16_target,
    cublas_fp8_target,
    cublas_target,
    run_targets,
    with_tensor_peaks,
)
from gemmlab.bench.results import Row, RunRecord
from gemmlab.errors import UserError
from gemmlab.shapes import shapemap
from gemmlab.shapes.grids import GridShape, ShapesOptions

log = logging.getLogger(__name__)

# (label, index of the measurement, number of measurements, phase)
Progress = Callable[[str, int, int, str], None]
TargetsFor = Callable[[GridShape], tuple[Target, Optional[Target]]]


def rung_target(rung_name: str, s: GridShape) -> Target:
    """The rung at this shape (the ladder's target for it); the prepared launcher records what it
    will launch (and its compiler)."""
    from gemmlab.bench.ladder import rung_targets
    from gemmlab.kernels import registry

    (base,) = rung_targets([registry.get(rung_name)], *s.dims)
    info = dict(base.info)

    def prep():
        run = base.prepare()
        # What prepare resolved to (the autotuned rung: a tuned candidate and its compiler; the
        # dispatch rung: itself, with its plan as ``rung``); the harness records the launched
        # instantiation and geometry itself (``launched_by``).
        info["backend"] = getattr(run, "backend", None)
        requested = getattr(run, "requested", None)
        info["resolved"] = getattr(requested, "name", None)
        return run

    return Target(base.spec, prep, info)


def reference_target(dtype: str, s: GridShape) -> tuple[Optional[Target], str]:
    """The reference for a shape of a ``dtype`` map, and "" - or None and why there is none
    (cuBLASLt FP8 refuses some shapes: its best is searched here, once, so a refusal is known
    before the rung is timed)."""
    if dtype == "fp32":
        return cublas_target(*s.dims), ""
    if dtype == "bf16":
        return cublas_bf16_target(*s.dims), ""
    t = cublas_fp8_target(*s.dims)
    try:
        run = t.prepare()
    except UserError as e:
        return None, e.message
    return Target(t.spec, lambda: run, t.info), ""


def _at(row: Row, s: GridShape) -> Row:
    """The row with its grid shape, and the compiler the rung was prepared with in what ran."""
    launched = dict(row.launched)
    backend = row.info.get("backend")
    if not row.reference and launched and backend:
        launched["backend"] = backend
    return replace(row, launched=launched, extra={**row.extra, "grid_shape": s.to_dict()})


def run_grid(shapes: Sequence[GridShape], targets_for: TargetsFor, bench: Bench,
             progress: Optional[Progress] = None) -> list[Row]:
    """Check and time the rung and cuBLAS at every shape: two rows per shape (rung first, cuBLAS
    second), each with its ``grid_shape``."""
    rows: list[Row] = []
    total = 2 * len(shapes)
    for si, s in enumerate(shapes):
        target, ref = targets_for(s)
        if ref is None:
            log.warning("%s: no reference (%s); the rung is measured alone",
                        s.name, target.info.get("no_reference") or "none")

        def say(name: str, i: int, _n: int, phase: str, _s=s, _si=si) -> None:
            if progress is not None:
                progress(f"{_s.name} {name}", 2 * _si + i, total, phase)

        measured, ref_row = run_targets([target], ref, bench, say)
        rows += [_at(r, s) for r in measured + ([ref_row] if ref_row is not None else [])]
    return rows


def measure(options: ShapesOptions, progress: Optional[Progress] = None) -> RunRecord:
    """The whole GPU job behind ``gemmlab shapes``: its run record (rows, map, env, ceiling)."""
    from gemmlab.bench import env as envmod
    from gemmlab.bench.ladder import GpuBench
    from gemmlab.bench.ceilings import copy_ceiling
    from gemmlab.runtime import cublas

    dtype = options.dtype
    env, reader = envmod.capture(math_mode=cublas.math_mode())
    if dtype == "fp32" and not cublas.tf32_off():
        raise UserError(f"cuBLAS is not in FP32 mode ({env.get('cublas_math_mode')}); the map compares FP32 with FP32")
    peak = envmod.fp32_peak(env) if dtype == "fp32" else envmod.tensor_peak(dtype, env)
    bench = GpuBench(options.timing, reader, seed=options.seed)
    env["l2_flush_bytes"] = bench.backend.l2_flush_bytes
    ceiling = {}
    if any(shapemap.is_skinny(shapemap.shape_class(*s.dims, dtype)) for s in options.shapes):
        ceiling = copy_ceiling(str(env.get("gpu")))

    def targets_for(s: GridShape) -> tuple[Target, Optional[Target]]:
        target = rung_target(options.rung, s)
        ref, why = reference_target(dtype, s)
        if ref is None:
            target.info["no_reference"] = why
        return target, ref

    rows = run_grid(options.shapes, targets_for, bench, progress)
    if dtype != "fp32":
        rows = with_tensor_peaks(rows, env, dtype)
    return assemble(rows, env, peak, ceiling, options)


def assemble(rows: Sequence[Row], env: dict, peak: dict, ceiling: dict, options: ShapesOptions) -> RunRecord:
    """The run record of measured rows (pure: the CPU tests build runs with it). Its ``map`` is a
    derived copy for people reading the JSON (``shapemap.from_record`` recomputes it from the rows)."""
    gpu = str(env.get("gpu") or "this GPU")
    meta = {"dtype": options.dtype, "gpu": gpu, "grid": options.grid_name, "rung": options.rung, "peak": peak,
            "ceiling": ceiling, "options": options.to_dict()}
    record = RunRecord("shapes", tuple(rows), env, meta)
    return replace(record, meta={**meta, "map": shapemap.from_record(record).to_dict()})
