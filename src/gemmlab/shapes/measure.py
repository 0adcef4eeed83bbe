"""The shape map's GPU part: the ladder's harness at every shape of a grid.

Per shape, in grid order: prepare the rung (``runtime.launch.prepare``: the dispatch rung, the
default, plans its kernels for the shape; the autotuned rung resolves to its remembered or freshly
tuned winner; a vector rung falls back to its scalar twin when N or K is not a multiple of 4), check it (fresh random inputs, poisoned output and guard,
float64 reference: ``bench.check.Checker``), time it (``bench.timer.time_fn``: CUDA events, L2
flushed, warm-up and measurement budgets), then cuBLAS SGEMM (TF32 off) the same way in the same
process. What actually ran — instantiation, compiler, grid — is recorded per shape.

``run_grid`` is the orchestration, run on a CPU with a fake ``Bench`` in the tests; ``measure``
builds the real bench, environment and copy ceiling and calls it.
"""

from __future__ import annotations

import logging
from typing import Callable, Optional, Sequence

from gemmlab.bench.ladder import Bench, Row, Target, cublas_target, run_targets
from gemmlab.bench.spec import BenchSpec
from gemmlab.shapes import shapemap
from gemmlab.shapes.grids import GridShape, ShapesOptions

log = logging.getLogger(__name__)

# (label, index of the measurement, number of measurements, phase)
Progress = Callable[[str, int, int, str], None]
TargetsFor = Callable[[GridShape], tuple[Target, Optional[Target]]]


def rung_target(rung_name: str, s: GridShape) -> Target:
    """The rung at this shape; the prepared launcher records what it will launch (and its compiler)."""
    from gemmlab.kernels import registry
    from gemmlab.runtime import device
    from gemmlab.runtime.launch import prepare

    rung = registry.get(rung_name)
    sms = device.info().sm_count if rung.persistent else None  # persistent: one CTA per SM
    grid, block, smem = rung.launch_config(*s.dims, sms=sms)
    info = {"order": rung.order, "family": rung.family, "summary": rung.summary, "source": rung.source,
            "function": rung.kernel, "params": dict(rung.params)}

    def prep():
        run = prepare(rung, *s.dims)
        # What prepare resolved to (the autotuned rung: a tuned candidate and its compiler; the
        # dispatch rung: itself, with its plan as ``rung``); the harness records the launched
        # instantiation and geometry itself (``launched_by``).
        info["backend"] = getattr(run, "backend", None)
        requested = getattr(run, "requested", None)
        info["resolved"] = getattr(requested, "name", None)
        return run

    del grid, block, smem  # launch_config only validates the grid limits here
    return Target(BenchSpec(rung.name, *s.dims, params=dict(rung.params)), prep, info)


def _row_dict(row: Row, s: GridShape) -> dict:
    d = row.to_dict()
    d["grid_shape"] = s.to_dict()
    d["shape_class"] = shapemap.shape_class(*s.dims)
    return d


def run_grid(shapes: Sequence[GridShape], targets_for: TargetsFor, bench: Bench, peak_flops: Optional[float] = None,
             progress: Optional[Progress] = None) -> list[dict]:
    """Check and time the rung and cuBLAS at every shape; the stored row dicts, two per shape
    (rung first, cuBLAS second), each with its ``grid_shape`` and ``shape_class``."""
    rows: list[dict] = []
    total = 2 * len(shapes)
    for si, s in enumerate(shapes):
        target, ref = targets_for(s)

        def say(name: str, i: int, _n: int, phase: str, _s=s, _si=si) -> None:
            if progress is not None:
                progress(f"{_s.name} {name}", 2 * _si + i, total, phase)

        measured, ref_row = run_targets([target], ref, bench, peak_flops, say)
        for r in measured + ([ref_row] if ref_row is not None else []):
            d = _row_dict(r, s)
            backend = d["info"].get("backend")
            if not r.is_reference and d.get("launched") and backend:
                d["launched"]["backend"] = backend
            rows.append(d)
    return rows


def measure(options: ShapesOptions, progress: Optional[Progress] = None) -> dict:
    """The whole GPU job behind ``gemmlab shapes``: the result dict (rows, map, env, ceiling)."""
    from gemmlab.bench import env as envmod
    from gemmlab.bench.ladder import GpuBench
    from gemmlab.bench.ceilings import copy_ceiling
    from gemmlab.runtime import cublas

    env, reader = envmod.capture(math_mode=cublas.math_mode())
    if not cublas.tf32_off():
        from gemmlab.errors import UserError

        raise UserError(f"cuBLAS is not in FP32 mode ({env.get('cublas_math_mode')}); the map compares FP32 with FP32")
    peak = envmod.fp32_peak(env)
    bench = GpuBench(options.timing, reader, seed=options.seed)
    env["l2_flush_bytes"] = bench.backend.l2_flush_bytes
    ceiling = {}
    if any(shapemap.is_skinny(shapemap.shape_class(*s.dims)) for s in options.shapes):
        ceiling = copy_ceiling(str(env.get("gpu")))

    def targets_for(s: GridShape) -> tuple[Target, Target]:
        return rung_target(options.rung, s), cublas_target(*s.dims)

    rows = run_grid(options.shapes, targets_for, bench, peak.get("flops"), progress)
    return assemble(rows, env, peak, ceiling, options)


def assemble(rows: list[dict], env: dict, peak: dict, ceiling: dict, options: ShapesOptions) -> dict:
    """The result dict from measured rows (pure: the CPU tests build runs with it)."""
    gpu = str(env.get("gpu") or "this GPU")
    result = {
        "command": "shapes",
        "dtype": "fp32",
        "gpu": gpu,
        "grid": options.grid_name,
        "rung": options.rung,
        "env": env,
        "peak": peak,
        "ceiling": ceiling,
        "options": options.to_dict(),
        "rows": rows,
    }
    result["map"] = shapemap.from_result(result).to_dict()
    return result
