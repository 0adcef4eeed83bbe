"""The timing loop against a seeded fake GPU clock: what is timed, how often, in what order."""

from __future__ import annotations

import math
import random

import pytest

from gemmlab.bench.timer import TimingOptions, repeat_counts, time_fn
from gemmlab.errors import InputError


class FakeEvent:
    def __init__(self, gpu: "FakeGPU") -> None:
        self.gpu = gpu
        self.t_ns = None
        self.seq = None

    def record(self) -> None:
        self.t_ns = self.gpu.t_ns
        self.seq = self.gpu.n_recorded
        self.gpu.n_recorded += 1
        self.gpu.log.append("record")


class FakeGPU:
    """A GPU timeline in integer nanoseconds. Each kernel run lasts a seeded random time; a flush
    lasts FLUSH_NS, far longer than any run, so a sample that contained it would be obvious."""

    FLUSH_NS = 10_000_000

    def __init__(self, seed: int = 0, mean_ns: int = 1_000_000, spread_ns: int = 20_000, flush_bytes: int = 100 << 20):
        self.rng = random.Random(seed)
        self.mean_ns, self.spread_ns = mean_ns, spread_ns
        self.t_ns = 0
        self.l2_flush_bytes = flush_bytes
        self.n_recorded = 0
        self.synced_upto = 0
        self.log: list[str] = []
        self.run_ns: list[int] = []  # duration of every kernel run, in order
        self.holds: list[float] = []

    # the kernel
    def fn(self) -> None:
        d = self.mean_ns + self.rng.randint(-self.spread_ns, self.spread_ns)
        self.run_ns.append(d)
        self.t_ns += d
        self.log.append("run")

    # TimerBackend
    def event(self) -> FakeEvent:
        return FakeEvent(self)

    def flush_l2(self) -> None:
        self.t_ns += self.FLUSH_NS
        self.log.append("flush")

    def hold(self, seconds: float) -> None:
        self.t_ns += round(seconds * 1e9)
        self.holds.append(seconds)
        self.log.append("hold")

    def synchronize(self) -> None:
        self.synced_upto = self.n_recorded
        self.log.append("sync")

    def elapsed_s(self, start: FakeEvent, end: FakeEvent) -> float:
        # reading an event the host has not synchronized past is a bug in the loop
        assert start.seq is not None and end.seq is not None, "event never recorded"
        assert end.seq < self.synced_upto, "event read before synchronize"
        return (end.t_ns - start.t_ns) / 1e9


def test_samples_are_exactly_the_measured_kernel_runs():
    gpu = FakeGPU(seed=1)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=5, rep_ms=20))
    est_ms = res.estimate_s * 1e3
    assert 0.98 < est_ms < 1.02
    # 1 first run + 5 estimate runs + ceil(5 ms / est) warm-up + ceil(20 ms / est) measured
    assert (res.n_warmup, res.n_repeat) == (math.ceil(5 / est_ms), math.ceil(20 / est_ms))
    assert res.n_warmup in (5, 6) and res.n_repeat in (20, 21)
    assert len(gpu.run_ns) == 1 + 5 + res.n_warmup + res.n_repeat
    assert res.samples_s == tuple(d / 1e9 for d in gpu.run_ns[-res.n_repeat :])
    # no sample contains a flush (10 ms) — each is one ~1 ms run
    assert max(res.samples_s) < 1.03e-3 and min(res.samples_s) > 0.97e-3


def test_estimate_is_the_median_of_the_estimate_runs():
    gpu = FakeGPU(seed=2)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=5, rep_ms=20, estimate_runs=5))
    est_runs = sorted(gpu.run_ns[1:6])
    assert res.estimate_s == est_runs[2] / 1e9


def test_each_measured_run_is_flush_then_start_run_end():
    gpu = FakeGPU(seed=3)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=2, rep_ms=4))
    log = gpu.log
    # first run then sync; estimate: hold, 5 x (flush, record, run, record), sync
    assert log[:2] == ["run", "sync"]
    assert log[2] == "hold"
    assert log[3:23] == ["flush", "record", "run", "record"] * 5
    assert log[23] == "sync"
    # warm-up: flush + run each (2 ms / ~1 ms -> 2 or 3), then sync
    w = 2 * res.n_warmup
    assert log[24 : 24 + w] == ["flush", "run"] * res.n_warmup
    assert log[24 + w] == "sync"
    # measured runs (min_repeats = 10 > the 4 ms budget) after a hold, then exactly one sync at the end
    assert res.n_repeat == 10
    assert log[25 + w] == "hold"
    assert log[26 + w : -1] == ["flush", "record", "run", "record"] * 10
    assert log[-1] == "sync"


def test_the_gpu_is_held_while_the_runs_are_queued():
    """50 µs per run, at most 50 ms: the host queues every run before the GPU reaches the first."""
    gpu = FakeGPU(seed=9)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=1, rep_ms=30))
    assert gpu.holds[0] == pytest.approx(5 * 50e-6)  # the estimate runs
    assert gpu.holds[1] == pytest.approx(res.n_repeat * 50e-6)
    gpu = FakeGPU(seed=9, mean_ns=10_000, spread_ns=100)  # 10 µs kernel: 1000 runs
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=1, rep_ms=100))
    assert res.n_repeat == 1000 and len(gpu.holds) == 1 + 10  # 10 batches of 100
    gpu = FakeGPU(seed=9, mean_ns=10_000, spread_ns=100)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=1, repeats=2000, batch_size=2000))
    assert gpu.holds[1] == 0.05  # capped
    assert max(res.samples_s) < 10.2e-6  # the hold is never inside a sample


def test_long_measurements_are_queued_in_held_batches():
    gpu = FakeGPU(seed=10, mean_ns=10_000, spread_ns=100)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=0, repeats=250, batch_size=100))
    assert res.samples_s == tuple(d / 1e9 for d in gpu.run_ns[-250:])
    second_hold = [i for i, e in enumerate(gpu.log) if e == "hold"][1]  # the first is the estimate's
    measured = gpu.log[second_hold:]
    run = ["flush", "record", "run", "record"]
    assert measured == ["hold", *run * 100, "sync", "hold", *run * 100, "sync", "hold", *run * 50, "sync"]
    assert gpu.holds[1:] == [pytest.approx(100 * 50e-6), pytest.approx(100 * 50e-6), pytest.approx(50 * 50e-6)]


def test_budget_converts_to_counts_for_slow_and_fast_kernels():
    opts = TimingOptions(warmup_ms=25, rep_ms=200, min_repeats=10, max_repeats=1000)
    assert repeat_counts(35e-3, opts) == (1, 10)  # a 35 ms naive kernel: one warm-up, min 10 runs
    assert repeat_counts(0.35e-3, opts) == (72, 572)  # ceil(25/0.35), ceil(200/0.35)
    assert repeat_counts(5e-6, opts) == (5000, 1000)  # capped at max_repeats
    assert repeat_counts(1e-3, TimingOptions(repeats=7)) == (25, 7)  # a fixed count replaces rep_ms
    assert repeat_counts(1e-3, TimingOptions(warmup_ms=0, repeats=3)) == (0, 3)


def test_fixed_repeats_and_no_flush():
    gpu = FakeGPU(seed=4)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=0, repeats=3, flush_l2=False))
    assert res.n_repeat == 3 and res.n_warmup == 0
    assert "flush" not in gpu.log
    assert res.l2_flush_bytes == 0
    assert res.to_dict()["l2_flush"] == "off"


def test_a_backend_without_flush_buffer_is_not_flushed():
    gpu = FakeGPU(seed=5, flush_bytes=0)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=1, repeats=2))
    assert "flush" not in gpu.log and res.l2_flush_bytes == 0


def test_timing_record_says_how_samples_were_taken():
    gpu = FakeGPU(seed=6)
    res = time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=1, repeats=4))
    d = res.to_dict()
    assert d["method"] == "cuda-events"
    assert d["l2_flush"] == "read" and d["l2_flush_bytes"] == 100 << 20
    assert d["n_repeat"] == 4 and d["options"]["repeats"] == 4


def test_seeded_fake_is_reproducible():
    a, b = FakeGPU(seed=7), FakeGPU(seed=7)
    opts = TimingOptions(warmup_ms=3, rep_ms=12)
    assert time_fn(a.fn, a, opts).samples_s == time_fn(b.fn, b, opts).samples_s


def test_phases_are_reported_in_order():
    gpu = FakeGPU(seed=8)
    seen: list[str] = []
    time_fn(gpu.fn, gpu, TimingOptions(warmup_ms=1, repeats=2), on_phase=seen.append)
    assert seen == ["first run", "estimate", "warm-up", "measure"]


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"warmup_ms": -1}, "warmup_ms must be a finite number >= 0, got -1"),
        ({"rep_ms": math.inf}, "rep_ms must be a finite number >= 0, got inf"),
        ({"rep_ms": 0}, "rep_ms must be > 0 unless a repeat count is given"),
        ({"repeats": 0}, "repeats must be an integer from 1 to 100000, got 0"),
        ({"min_repeats": 20, "max_repeats": 10}, "max_repeats (10) must be >= min_repeats (20)"),
    ],
)
def test_options_validation(kwargs, words):
    with pytest.raises(InputError) as e:
        TimingOptions(**kwargs)
    assert words in str(e.value)


class SlowHost:
    """A host clock that advances ``per_call_s`` every time the timed function is called (and a
    little for everything else), so the loop's own pace measurement can be checked."""

    def __init__(self, per_call_s: float) -> None:
        self.t = 0.0
        self.per_call_s = per_call_s

    def __call__(self) -> float:
        return self.t

    def wrap(self, fn):
        def call():
            self.t += self.per_call_s
            fn()
        return call


def test_the_hold_follows_the_hosts_measured_pace():
    # the host needs 300 us to queue a run: each run holds 2 x that, not the default 50 us
    gpu, host = FakeGPU(seed=4, mean_ns=20_000, spread_ns=1_000), SlowHost(300e-6)
    opts = TimingOptions(warmup_ms=1, rep_ms=10, min_repeats=150, batch_size=100)
    res = time_fn(host.wrap(gpu.fn), gpu, opts, clock=host)
    assert res.host_s_per_run == pytest.approx(300e-6)
    assert res.hold_per_run_s == pytest.approx(600e-6)
    # the estimate's batch, held at the default pace (50 us a run), falls behind the host's 300 us
    # and is measured again held 2 x 300 us a run; the measured batches keep that hold
    assert gpu.holds[0] == pytest.approx(opts.estimate_runs * opts.hold_per_run_s)
    assert gpu.holds[1] == pytest.approx(opts.estimate_runs * 600e-6)
    measured_holds = gpu.holds[2:]
    # batches shrink so that no hold passes hold_max_s: 50 ms / 600 us = 83 runs a batch
    assert all(h <= opts.hold_max_s + 1e-12 for h in measured_holds)
    assert measured_holds[0] == pytest.approx(83 * 600e-6)
    assert sum(round(h / 600e-6) for h in measured_holds) == res.n_repeat
    # (the estimate's second attempt is not a measured batch)
    assert res.batches_host_behind == 0 and res.batches_retried == 0
    d = res.to_dict()
    assert d["host_s_per_run"] == pytest.approx(300e-6) and d["batches_host_behind"] == 0


def test_a_fast_host_keeps_the_default_hold_and_a_host_slowing_down_is_held_longer():
    gpu, host = FakeGPU(seed=5, mean_ns=20_000, spread_ns=1_000), SlowHost(10e-6)
    res = time_fn(host.wrap(gpu.fn), gpu, TimingOptions(warmup_ms=1, rep_ms=5), clock=host)
    assert res.hold_per_run_s == TimingOptions().hold_per_run_s and res.batches_host_behind == 0
    # the host slows 20x after the estimate, to 200 us a run against the GPU's 20 us (no flush):
    # the GPU works through the hold and the runs ahead of the host and then waits for it
    gpu, host = FakeGPU(seed=6, mean_ns=20_000, spread_ns=1_000, flush_bytes=0), SlowHost(10e-6)
    calls = {"n": 0}

    def slowing():
        calls["n"] += 1
        if calls["n"] > 6:  # past the first run and the five estimate runs
            host.per_call_s = 200e-6

    wrapped = host.wrap(gpu.fn)
    res = time_fn(lambda: (slowing(), wrapped()), gpu, TimingOptions(warmup_ms=1, rep_ms=5),
                  clock=host)
    # the first measured batch falls behind, is dropped and measured again held 2 x 200 us a run,
    # and the later batches keep that hold: none is left behind
    assert res.batches_retried == 1 and res.batches_host_behind == 0
    assert res.host_s_per_run == pytest.approx(200e-6) and res.hold_per_run_s == pytest.approx(400e-6)
    assert len(res.samples_s) == res.n_repeat  # the dropped batch's runs are not among them


def test_a_zero_hold_stays_off_whatever_the_hosts_pace():
    # hold_per_run_s=0 is the caller's way to see what the hold prevents: the pace must not revive it
    gpu, host = FakeGPU(seed=7, mean_ns=20_000, spread_ns=1_000), SlowHost(300e-6)
    res = time_fn(host.wrap(gpu.fn), gpu, TimingOptions(warmup_ms=1, rep_ms=5, hold_per_run_s=0),
                  clock=host)
    assert res.hold_per_run_s == 0.0 and all(h == 0 for h in gpu.holds)
    assert res.batches_host_behind >= 1  # with no hold the host is behind by definition


class AsyncGPU:
    """A GPU that runs asynchronously behind a host with its own clock (seconds): every call
    costs the host ``cost[op]`` seconds and queues an operation that starts when both the GPU is
    free and the host has queued it; an event takes the GPU time at which it is reached. So the
    GPU waits for a slow host, and a wait between a start event and its kernel lands in the
    sample - what the timer's hold exists to prevent and ``batches_host_behind`` must report."""

    def __init__(self, kernel_s: float, flush_s: float, cost: dict) -> None:
        self.kernel_s, self.flush_s, self.cost = kernel_s, flush_s, dict(cost)
        self.host = 0.0
        self.gpu_free = 0.0
        self.l2_flush_bytes = 1 << 20 if flush_s > 0 else 0

    def __call__(self) -> float:  # the host clock
        return self.host

    def _queue(self, op: str, duration: float) -> float:
        self.host += self.cost[op]
        start = max(self.gpu_free, self.host)
        self.gpu_free = start + duration
        return start

    def fn(self) -> None:
        self._queue("fn", self.kernel_s)

    def event(self):
        gpu = self

        class Ev:
            t = None

            def record(self) -> None:
                self.t = gpu._queue("record", 0.0)
        return Ev()

    def hold(self, seconds: float) -> None:
        self._queue("hold", seconds)

    def flush_l2(self) -> None:
        self._queue("flush", self.flush_s)

    def synchronize(self) -> None:
        self.host = max(self.host, self.gpu_free)

    def elapsed_s(self, a, b) -> float:
        return b.t - a.t


def _slowing_after_estimate(gpu: AsyncGPU, fn_cost: float):
    calls = {"n": 0}

    def fn():
        calls["n"] += 1
        if calls["n"] > 6:  # past the first run and the five estimate runs
            gpu.cost["fn"] = fn_cost
        gpu.fn()
    return fn


def test_host_behind_counts_only_batches_where_the_gpu_could_reach_a_run_before_the_host_queued_it():
    cost = {"fn": 20e-6, "record": 2e-6, "hold": 5e-6, "flush": 5e-6}
    opts = TimingOptions(warmup_ms=0.5, rep_ms=4, batch_size=100)
    # a 5 us kernel behind a 35 us flush; the host slows from 29 to 80 us a run after the estimate,
    # past its hold (60 us a run, 6 ms for a batch of 100), but the GPU's own 40 us of flush and
    # kernel a run keep it ahead (run 99 starts at >= 6 + 4 ms, queued by 8 ms): the old test
    # (whole queueing time > hold) counted such batches; none waited
    gpu = AsyncGPU(5e-6, 35e-6, cost)
    res = time_fn(_slowing_after_estimate(gpu, 71e-6), gpu, opts, clock=gpu)
    assert res.host_s_per_run > res.hold_per_run_s  # the queueing did outlast the hold
    assert res.batches_host_behind == 0
    assert all(x == pytest.approx(5e-6) for x in res.samples_s)  # and no sample holds a wait
    # the host slows to 304 us a run: the GPU drains the hold and the backlog and then waits for
    # the host inside event pairs. That batch is dropped and measured again, held 2 x 304 us a
    # run, as are the later batches: every sample is the kernel's
    gpu = AsyncGPU(5e-6, 35e-6, cost)
    res = time_fn(_slowing_after_estimate(gpu, 295e-6), gpu, opts, clock=gpu)
    assert res.batches_retried == 1 and res.batches_host_behind == 0
    assert all(x == pytest.approx(5e-6) for x in res.samples_s)
    # a host that keeps slowing outruns even the longer hold: the samples hold host waits, and
    # the batches that were still behind when measured again are counted
    gpu = AsyncGPU(5e-6, 35e-6, cost)
    calls = {"n": 0}

    def slowing_further():
        calls["n"] += 1
        if calls["n"] > 6:
            gpu.cost["fn"] = 20e-6 * 1.02 ** min(calls["n"], 400)
        gpu.fn()
    res = time_fn(slowing_further, gpu, opts, clock=gpu)
    assert max(res.samples_s) > 100e-6
    assert res.batches_host_behind >= 1 and res.batches_retried >= res.batches_host_behind
    # a steady host never is
    gpu = AsyncGPU(5e-6, 35e-6, cost)
    res = time_fn(gpu.fn, gpu, opts, clock=gpu)
    assert res.batches_host_behind == 0 and all(x == pytest.approx(5e-6) for x in res.samples_s)
