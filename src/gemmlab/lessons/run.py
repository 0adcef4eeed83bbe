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

import functools
import logging
from typing import Callable, Optional, Sequence

from gemmlab.bench.results import Row, RunRecord
from gemmlab.bench.stats import Measurement
from gemmlab.bench.timer import TimingOptions
from gemmlab.lessons import record
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


def measure(lesson: Lesson, points: Sequence[Point], options: TimingOptions, *, seed: int = 0,
            progress: Optional[Progress] = None) -> RunRecord:
    """The whole GPU job behind ``gemmlab lesson NAME``: its run record (``verdicts`` included)."""
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
    rows: list[Row] = []
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

            res = time_fn(functools.partial(lesson.launch, v.name, ctx, timing_ins, outs, pt), backend, options, on_phase=phase)
            clocks["sm_mhz_after"] = reader.sm_mhz()
            m = Measurement(record.spec(lesson, v.name, pt), res.samples_s, res.to_dict())
            rows.append(record.row(lesson, v.name, pt, m, chk, clocks, lesson.info(v.name, ctx, pt)))
            del outs
            say("done")
        del timing_ins
        cp.get_default_memory_pool().free_all_blocks()
    return record.assemble(lesson, rows, env, peak, ceiling, options, seed)
