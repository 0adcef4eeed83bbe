"""Measure a lesson on the GPU: for every point and variant, check on fresh inputs, then time.

The harness is the ladder's: ``bench.timer.time_fn`` with ``CupyBackend`` (CUDA events, L2 read
flush, warm-up and measurement budgets, the hold kernel), ``bench.stats.Measurement`` (median,
IQR, noise flag), SM clocks read before and after the timed runs, the environment of
``bench.env.capture``. Every variant of one point is timed on the same inputs; every check draws
its own. Rates: bytes/s of the variant's own loads and stores against the copy ceiling (stored by
``gemmlab ceilings --measure`` for this GPU, else measured here with the same 1 GiB copy), and for
``tiling`` FLOP/s against the clock-derived FP32 peak.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Optional, Sequence

from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import Measurement
from gemmlab.bench.timer import TimingOptions
from gemmlab.lessons import verdict
from gemmlab.lessons.base import LaunchContext, Lesson, Point

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int, str], None]


def context(lesson: Lesson) -> LaunchContext:
    from gemmlab.runtime import compile as comp
    from gemmlab.runtime import device

    dev = device.info()
    module = comp.compile_module(lesson.code(), lesson.name)
    names = {k for v in lesson.variants for k in v.kernels}
    kernels = {k: module.get_function(k) for k in sorted(names)}
    return LaunchContext(kernels, dev.sm_count, dev.smem_per_block_optin,
                         {"max_threads_per_sm": dev.max_threads_per_sm})


def spec_dict(lesson: Lesson, variant: str, pt: Point) -> dict:
    """The store's spec columns: M,N,K are the problem's dimensions (n,1,1 for a vector)."""
    n = pt.size
    M, N, K = (n, n, n) if lesson.name == "tiling" else ((n, n, 1) if lesson.name == "bank_conflicts" else (n, 1, 1))
    return {"kernel": variant, "M": M, "N": N, "K": K, "dtype": "int32" if lesson.name == "atomics" else "float32",
            "alpha": 1.0, "beta": 0.0, "params": {pt.name: pt.value}}


def row(lesson: Lesson, variant: str, pt: Point, m: Measurement, check: Any, clocks: dict, info: dict,
        ceiling: Optional[float], peak: Optional[float]) -> dict:
    d = m.to_dict()
    d.update(kernel=variant, lesson=lesson.name, point=pt.to_dict(), info=info, spec=spec_dict(lesson, variant, pt),
             correct=check.ok, check=check.to_dict(), clocks=clocks)
    nbytes, flops = lesson.nbytes(variant, pt), lesson.flops(pt)
    bw = nbytes / m.median if nbytes else None
    d["bytes"], d["bandwidth_bytes_per_s"] = nbytes, bw
    d["pct_of_copy"] = 100.0 * bw / ceiling if bw and ceiling else None
    d["flops"] = flops
    d["gflops"] = flops / m.median / 1e9 if flops else None
    d["pct_of_peak"] = 100.0 * flops / m.median / peak if flops and peak else None
    return d


def add_speedups(lesson: Lesson, rows: list[dict]) -> None:
    """speedup_vs_baseline: the headline baseline's median at the same point / this median."""
    base = lesson.comparisons[0].baseline
    medians = {(r["kernel"], str(r["point"])): r["median_s"] for r in rows}
    for r in rows:
        b = medians.get((base, str(r["point"])))
        r["speedup_vs_baseline"] = b / r["median_s"] if b else None
        r["is_baseline"] = r["kernel"] == base


def measure(lesson: Lesson, points: Sequence[Point], options: TimingOptions, *, seed: int = 0,
            progress: Optional[Progress] = None) -> dict:
    """The whole GPU job behind ``gemmlab lesson NAME``: a result dict (``verdicts`` included)."""
    from gemmlab.bench import ceilings
    from gemmlab.bench import env as envmod
    from gemmlab.bench.timer import CupyBackend, time_fn
    from gemmlab.runtime import device

    cp = device.require_gpu()
    math_mode = None
    if any(not v.kernels for v in lesson.variants):
        from gemmlab.runtime import cublas

        math_mode = cublas.math_mode()
    env, reader = envmod.capture(math_mode=math_mode)
    peak = envmod.fp32_peak(env)
    ctx = context(lesson)
    backend = CupyBackend(flush_l2=options.flush_l2)
    env["l2_flush_bytes"] = backend.l2_flush_bytes
    ceiling = ceilings.copy_ceiling(env["gpu"]) if lesson.metric == "bandwidth" else {}
    check_rng = cp.random.default_rng(seed)
    time_rng = cp.random.default_rng(seed + 1_000_003)  # timing inputs: their own stream (never zeros)
    sync = cp.cuda.get_current_stream().synchronize
    total = len(points) * len(lesson.variants)
    rows: list[dict] = []
    for pt in points:
        timing_ins = None
        for v in lesson.variants:
            i = len(rows)
            say = (lambda phase, _n=f"{v.name} @ {pt.label}", _i=i: progress(_n, _i, total, phase)) if progress else (lambda phase: None)
            say("check")
            ins, outs = lesson.inputs(cp, check_rng, pt), lesson.outputs(cp, pt)
            lesson.launch(v.name, ctx, ins, outs, pt)
            sync()
            chk = lesson.check(v.name, ins, outs, pt, cp)
            del ins, outs
            cp.get_default_memory_pool().free_all_blocks()
            if timing_ins is None:
                timing_ins = lesson.inputs(cp, time_rng, pt)
            outs = lesson.outputs(cp, pt)
            clocks: dict = {"source": reader.source}

            def phase(name: str, _say=say, _clocks=clocks) -> None:
                if name == "measure":
                    _clocks["sm_mhz_before"] = reader.sm_mhz()
                _say(name)

            res = time_fn(lambda: lesson.launch(v.name, ctx, timing_ins, outs, pt), backend, options, on_phase=phase)
            clocks["sm_mhz_after"] = reader.sm_mhz()
            spec = BenchSpec(v.name, *(spec_dict(lesson, v.name, pt)[k] for k in ("M", "N", "K")))
            m = Measurement(spec, res.samples_s, res.to_dict())
            rows.append(row(lesson, v.name, pt, m, chk, clocks, lesson.info(v.name, ctx, pt),
                            ceiling.get("copy_bytes_per_s"), peak.get("flops")))
            del outs
            say("done")
        del timing_ins
        cp.get_default_memory_pool().free_all_blocks()
    return assemble(lesson, rows, env, peak, ceiling, options, seed)


def assemble(lesson: Lesson, rows: list[dict], env: dict, peak: dict, ceiling: dict, options: TimingOptions,
             seed: int) -> dict:
    """The result dict from measured rows (pure: the CPU tests build runs with it)."""
    add_speedups(lesson, rows)
    verdicts = verdict.lesson_verdicts(lesson, rows)
    gpu = str(env.get("gpu") or "this GPU")
    return {
        "command": "lesson",
        "lesson": lesson.name,
        "title": lesson.title,
        "gpu": gpu,
        "env": env,
        "peak": peak,
        "ceiling": ceiling,
        "options": {"timing": options.to_dict(), "seed": seed},
        "sweep": {"param": lesson.param.name, "points": [p for p in _unique(r["point"] for r in rows)]},
        "verdicts": [v.to_dict() for v in verdicts],
        "headline": verdict.headline(lesson, verdicts, gpu),
        "rows": rows,
    }


def _unique(items) -> list:
    out: list = []
    for x in items:
        if x not in out:
            out.append(x)
    return out
