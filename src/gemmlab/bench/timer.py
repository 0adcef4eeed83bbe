"""The timing loop: warm-up by time budget, one CUDA event pair per run, L2 flushed between runs.

It follows the rules of Triton's ``do_bench`` (``python/triton/testing.py``):

1. Run once and synchronize, so compilation, module load and cuBLAS handle creation stay out of
   the numbers.
2. Estimate the time of one run from a few flushed runs, and turn the warm-up and measurement
   budgets (milliseconds) into repeat counts: a 35 ms naive kernel and a 0.3 ms cuBLAS call both
   get about the same wall time, and enough runs for quartiles (at least ``min_repeats``).
3. Warm up (clocks ramp, instruction caches fill).
4. Measure in batches of at most ``batch_size`` runs. Each batch starts with a spin kernel that
   holds the GPU while the host queues the batch (nvbench's "blocking kernel" idea): otherwise a
   kernel shorter than the host's enqueue cost (CuPy launch, two event records, the flush: about
   20 µs of Python) finishes before its end event is even queued, and the gap lands inside the
   event pair. Then, for each run: flush L2, record the start event, run, record the end event.
   Only the kernel lies between the two events, never the flush or the hold. Each batch ends with
   one synchronize, before any of its events is read. The hold is sized from the host's own pace:
   the estimate runs time how long the host takes to queue one run (``host_s_per_run``), and each
   run then holds at least ``HOST_MARGIN`` times that. A call that launches several kernels from
   Python (operand copies, then the kernel; a user's module) queues slower than the fixed 50 us a
   run, and the runs late in a batch would wait on the host inside their event pairs: a tensor-
   core plan of three launches measured 17 us in one quarter of its runs and 70-87 us in the
   rest, beside a steady cuBLAS (docs/results/tc-streamk-2026-11-26). The host's pace also
   changes within a measurement (the flagged batches of one map queued at 2.4-8 times their
   estimated pace; a garbage collection or another thread holding the GIL would do it), so a batch
   whose runs may include host waits is dropped and measured again once, held twice the pace it
   showed, and the later batches keep that hold (``batches_retried``). Batches where the GPU may
   still have waited for the host inside an event pair are counted (``batches_host_behind``), so
   a result can say so. The test is exact on the safe side: run i was wholly queued (its end event
   included) before the GPU could reach it when the host's time from just before the hold to
   run i's end record is at most the hold plus the GPU's own time from the batch's first start
   event to run i's start event - the hold cannot begin before it is queued, nor run i before the
   hold and the runs ahead of it are done. A batch is counted only when some run fails that test.
   (The older test, the host's whole queueing time against the hold alone, ignored the flushes
   and runs the GPU works through after the hold: two H100 maps of the same kernels flagged 29
   and 17 sides of shapes with it, 12 and 11 with this one - docs/results/tc-cluster2d-2026-11-27.)

L2 is flushed rather than the inputs rotated. At M=N=K=2048 the three FP32 operands (48 MB) fit in
the H100's 50 MB L2, so without a flush every run after the first would read its inputs from L2
and measure the cache. Rotating input sets would need more than L2 / (bytes per set) copies —
several GB at the larger shapes — and would change which buffers a kernel sees between runs. The
flush is a *read* of a buffer twice the device's L2 size (read from the device, not assumed):
reading leaves L2 full of clean lines of the flush buffer, which the kernel can evict for free. A
write-based flush (Triton zeroes a 256 MB buffer) leaves dirty lines whose write-back to DRAM
would then be charged to the timed kernel. Nsight Compute's default ``--cache-control all`` also
starts every measured kernel with flushed caches, so harness times and ncu's ``gpu__time_duration``
describe the same cold-L2 situation.

The GPU pieces come in through the small ``TimerBackend`` protocol so the loop is tested on a CPU
with a seeded fake clock (``tests/test_bench_timer.py``); ``CupyBackend`` is the real one.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional, Protocol

from gemmlab.errors import InputError


class Event(Protocol):
    """A point on the GPU's timeline, recorded into the current stream."""

    def record(self) -> None: ...


class TimerBackend(Protocol):
    """What the timing loop needs from a GPU."""

    #: bytes the flush reads (0 when flushing is off)
    l2_flush_bytes: int

    def event(self) -> Event: ...

    def elapsed_s(self, start: Event, end: Event) -> float:
        """Seconds between two recorded, completed events."""
        ...

    def flush_l2(self) -> None: ...

    def hold(self, seconds: float) -> None:
        """Queue GPU work that keeps the stream busy for about ``seconds``."""
        ...

    def synchronize(self) -> None: ...


@dataclass(frozen=True)
class TimingOptions:
    """How long to warm up and measure. Budgets are milliseconds of kernel time, as in do_bench."""

    warmup_ms: float = 25.0
    rep_ms: float = 200.0
    # A fixed count replaces the rep_ms budget (still bounded below by 1).
    repeats: Optional[int] = None
    # At least this many measured runs, whatever the budget: quartiles of fewer runs say little.
    min_repeats: int = 10
    # At most this many, so that a 5 µs kernel does not queue 40 000 event pairs.
    max_repeats: int = 1000
    # Runs used to estimate one run's time before the budgets are converted to counts.
    estimate_runs: int = 5
    flush_l2: bool = True
    # Hold the GPU this long per measured run while the host queues the runs (see step 4). CuPy
    # enqueues a flush, two event records and a launch in about 20-40 µs of Python; 50 µs per run
    # keeps the host ahead, and a slower host gets HOST_MARGIN x its measured pace instead. Capped
    # so that one batch holds for at most 50 ms. 0 turns the hold off (to show what it prevents).
    hold_per_run_s: float = 50e-6
    hold_max_s: float = 0.05
    # Runs queued behind one hold. The host can only queue so much work ahead of the GPU before a
    # launch call blocks (a few thousand stream operations); once the GPU drains a longer queue, a
    # kernel shorter than the host's enqueue time again waits for the host. 100 runs = 300 stream
    # operations (flush, launch, two events... per run) stays well inside that.
    batch_size: int = 100

    def __post_init__(self) -> None:
        for name in ("warmup_ms", "rep_ms", "hold_per_run_s", "hold_max_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise InputError(f"must be a finite number >= 0, got {v!r}", option=name)
        if self.rep_ms == 0 and self.repeats is None:
            raise InputError("must be > 0 unless a repeat count is given, got 0", option="rep_ms")
        for name in ("min_repeats", "max_repeats", "estimate_runs", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{name} must be an integer >= 1, got {v!r}")
        if self.max_repeats < self.min_repeats:
            raise InputError(f"max_repeats ({self.max_repeats}) must be >= min_repeats ({self.min_repeats})")
        if self.repeats is not None and (
            isinstance(self.repeats, bool) or not isinstance(self.repeats, int) or not 1 <= self.repeats <= 100_000
        ):
            raise InputError(f"must be an integer from 1 to 100000, got {self.repeats!r}", option="repeats")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TimingResult:
    """Raw samples (seconds, one per measured run) and how they were taken."""

    samples_s: tuple[float, ...]
    estimate_s: float
    n_warmup: int
    n_repeat: int
    l2_flush_bytes: int
    options: TimingOptions
    # host seconds to queue one run (the flush, two event records and the call), the slowest
    # batch's; the hold per run the measured batches got; and the batches where the GPU may have
    # reached a run before the host had queued all of it (that run may include GPU time spent
    # waiting for the host; the module docstring has the test)
    host_s_per_run: float = 0.0
    hold_per_run_s: float = 0.0
    batches_host_behind: int = 0
    # batches dropped and measured again, held longer, because their runs may have included host
    # waits (the samples are the second attempt's)
    batches_retried: int = 0

    def to_dict(self) -> dict:
        """The ``timing`` record stored beside the samples (the samples themselves go elsewhere)."""
        return {
            "method": "cuda-events",
            "estimate_s": self.estimate_s,
            "n_warmup": self.n_warmup,
            "n_repeat": self.n_repeat,
            "l2_flush": "read" if self.l2_flush_bytes else "off",
            "l2_flush_bytes": self.l2_flush_bytes,
            "options": self.options.to_dict(),
            "host_s_per_run": self.host_s_per_run,
            "hold_per_run_s": self.hold_per_run_s,
            "batches_host_behind": self.batches_host_behind,
            "batches_retried": self.batches_retried,
        }


def repeat_counts(estimate_s: float, options: TimingOptions) -> tuple[int, int]:
    """(warm-up runs, measured runs) from the budgets and one run's estimated time."""
    est_ms = max(estimate_s * 1e3, 1e-6)
    n_warmup = max(1, math.ceil(options.warmup_ms / est_ms)) if options.warmup_ms > 0 else 0
    if options.repeats is not None:
        n_repeat = options.repeats
    else:
        n_repeat = min(options.max_repeats, max(options.min_repeats, math.ceil(options.rep_ms / est_ms)))
    return n_warmup, n_repeat


# Hold each run this many times the host's measured time to queue one: Python's pace varies from
# batch to batch (garbage collection, CPU clocks), and holding too long costs only wall time.
HOST_MARGIN = 2.0


@dataclass
class _Batches:
    samples: list
    host_s_per_run: float = 0.0  # the slowest batch's
    behind: int = 0  # batches where the GPU may have waited for the host inside an event pair
    retried: int = 0  # batches measured again, held longer, after the GPU may have waited
    hold_per_run_s: float = 0.0  # the hold per run the last batch got


@dataclass
class _Batch:
    samples: list
    host_s_per_run: float
    behind: bool


def _one_batch(fn: Callable[[], Any], backend: TimerBackend, count: int, flush: bool,
               hold_s: float, clock: Callable[[], float]) -> _Batch:
    """Hold the GPU for ``hold_s``, queue ``count`` runs (flush, start event, fn, end event),
    synchronize, read the events; and whether the GPU may have reached some run before the host
    had queued all of it (the module docstring has the test)."""
    pairs = [(backend.event(), backend.event()) for _ in range(count)]
    t0 = clock()  # before the hold is queued: the hold cannot start earlier on the GPU
    backend.hold(hold_s)
    queued = []  # host seconds from t0 until run i's end event was queued
    for start, end in pairs:
        if flush:
            backend.flush_l2()
        start.record()
        fn()
        end.record()
        queued.append(clock() - t0)
    backend.synchronize()
    first_start = pairs[0][0]
    # the GPU reaches run i's start no earlier than the hold plus its own time since run 0's
    behind = any(q > hold_s + (backend.elapsed_s(first_start, start) if i else 0.0)
                 for i, ((start, _), q) in enumerate(zip(pairs, queued)))
    return _Batch([backend.elapsed_s(start, end) for start, end in pairs], queued[-1] / count,
                  behind)


def _timed_runs(fn: Callable[[], Any], backend: TimerBackend, n: int, flush: bool,
                options: TimingOptions, hold_per_run_s: float,
                clock: Callable[[], float]) -> _Batches:
    """n runs, each between its own event pair and flushed before, in batches: hold the GPU, queue
    the batch, synchronize. Events are read only after the synchronize that follows them. A batch
    holds at most ``hold_max_s``, so a slow host gets shorter batches. A batch whose runs may
    include host waits (the host slowed after the hold was sized: a garbage collection, a progress
    display's refresh taking the GIL) is dropped and measured again once, held ``HOST_MARGIN``
    times the pace it showed, and later batches keep that hold; a batch still behind after that is
    kept and counted (``behind``). No hold (``hold_per_run_s`` 0) is never lengthened."""
    out = _Batches([], hold_per_run_s=hold_per_run_s)
    done = 0
    while done < n:
        for attempt in range(2):
            per_batch = options.batch_size
            if out.hold_per_run_s > 0:
                per_batch = max(1, min(per_batch, int(options.hold_max_s / out.hold_per_run_s)))
            count = min(per_batch, n - done)
            batch = _one_batch(fn, backend, count, flush,
                               min(options.hold_max_s, count * out.hold_per_run_s), clock)
            out.host_s_per_run = max(out.host_s_per_run, batch.host_s_per_run)
            if not batch.behind or attempt == 1 or out.hold_per_run_s <= 0:
                break
            out.retried += 1
            out.hold_per_run_s = max(out.hold_per_run_s, HOST_MARGIN * batch.host_s_per_run)
        out.samples.extend(batch.samples)
        out.behind += batch.behind
        done += count
    return out


def time_fn(
    fn: Callable[[], Any],
    backend: TimerBackend,
    options: TimingOptions = TimingOptions(),
    on_phase: Optional[Callable[[str], None]] = None,
    clock: Callable[[], float] = time.perf_counter,
) -> TimingResult:
    """Time ``fn`` (which only launches GPU work) by the rules in this module's docstring;
    ``clock`` is the host's (seconds), replaceable in tests."""
    flush = options.flush_l2 and backend.l2_flush_bytes > 0

    def phase(name: str) -> None:
        if on_phase is not None:
            on_phase(name)

    phase("first run")
    fn()
    backend.synchronize()

    phase("estimate")
    est = _timed_runs(fn, backend, options.estimate_runs, flush, options, options.hold_per_run_s,
                      clock)
    estimate_s = statistics.median(est.samples)
    n_warmup, n_repeat = repeat_counts(estimate_s, options)
    hold_per_run_s = 0.0
    if options.hold_per_run_s > 0:  # 0: the caller asked for no hold at all
        hold_per_run_s = max(options.hold_per_run_s, HOST_MARGIN * est.host_s_per_run)

    phase("warm-up")
    for _ in range(n_warmup):
        if flush:
            backend.flush_l2()
        fn()
    backend.synchronize()

    phase("measure")
    runs = _timed_runs(fn, backend, n_repeat, flush, options, hold_per_run_s, clock)
    hold_per_run_s = runs.hold_per_run_s
    return TimingResult(
        samples_s=tuple(runs.samples),
        estimate_s=estimate_s,
        n_warmup=n_warmup,
        n_repeat=n_repeat,
        l2_flush_bytes=backend.l2_flush_bytes if flush else 0,
        options=options,
        host_s_per_run=runs.host_s_per_run,
        hold_per_run_s=hold_per_run_s,
        batches_host_behind=runs.behind,
        batches_retried=runs.retried,
    )


# --------------------------------------------------------------------------------------------
# The real backend (CuPy). Imported lazily so this module loads on machines without a GPU.

_SOURCE = r"""
extern "C" __global__ void gemmlab_l2_flush(const float4* __restrict__ buf, unsigned long long n,
                                            float* __restrict__ sink) {
    float acc = 0.0f;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        float4 v = __ldcg(buf + i);  // through L2, not L1: the point is to fill L2
        acc += v.x + v.y + v.z + v.w;
    }
    // The buffer is zero, so this store never happens; the compiler cannot know that, so the loads stay.
    if (acc != 0.0f) sink[0] = acc;
}

// One thread spins on the global nanosecond timer: the stream is busy while the host queues work.
extern "C" __global__ void gemmlab_hold(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}
"""


class CupyBackend:
    """CUDA events and a read-based L2 flush on the current CuPy device and stream."""

    def __init__(self, flush_l2: bool = True) -> None:
        import cupy

        self._cupy = cupy
        dev = cupy.cuda.Device()
        rt = cupy.cuda.runtime
        self.l2_bytes = int(rt.deviceGetAttribute(rt.cudaDevAttrL2CacheSize, dev.id))
        self.sm_count = int(rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount, dev.id))
        self.l2_flush_bytes = 0
        self._module = cupy.RawModule(code=_SOURCE)
        self._hold = self._module.get_function("gemmlab_hold")
        if flush_l2 and self.l2_bytes > 0:
            n_vec = (2 * self.l2_bytes + 15) // 16  # float4 elements: twice the L2 size
            self._buf = cupy.zeros(n_vec * 4, dtype=cupy.float32)
            self._sink = cupy.zeros(1, dtype=cupy.float32)
            self._n_vec = n_vec
            self._kernel = self._module.get_function("gemmlab_l2_flush")
            self.l2_flush_bytes = n_vec * 16

    def event(self) -> Any:
        ev = self._cupy.cuda.Event()
        return _CupyEvent(ev)

    def elapsed_s(self, start: "_CupyEvent", end: "_CupyEvent") -> float:
        return self._cupy.cuda.get_elapsed_time(start.event, end.event) / 1e3

    def flush_l2(self) -> None:
        if not self.l2_flush_bytes:
            return
        import numpy as np

        self._kernel((self.sm_count * 4,), (256,), (self._buf, np.uint64(self._n_vec), self._sink))

    def hold(self, seconds: float) -> None:
        import numpy as np

        if seconds > 0:
            self._hold((1,), (1,), (np.uint64(int(seconds * 1e9)),))

    def synchronize(self) -> None:
        self._cupy.cuda.get_current_stream().synchronize()


class _CupyEvent:
    def __init__(self, event: Any) -> None:
        self.event = event

    def record(self) -> None:
        self.event.record()
