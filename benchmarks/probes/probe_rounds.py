"""What the timing probes share: the fp8 dispatch plan and cuBLASLt at its best on the same
operands, sides timed in interleaved rounds (the order reversed every round), and the printed
and JSON record of each side's per-round medians."""

from __future__ import annotations

import json
import statistics
from typing import Any, Callable, Sequence


def fp8_pair(M: int, N: int, K: int) -> list[tuple[str, Callable[[], None]]]:
    """The fp8 dispatch plan and cuBLASLt at its best, as (label, call) on one set of random
    e4m3 operands (B given N x K)."""
    import cupy

    from gemmlab.bench.cublas_best import best_fp8
    from gemmlab.kernels import registry
    from gemmlab.numerics import fp8 as conv
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

    rng = cupy.random.default_rng(M + N + K)
    a = conv.to_bits(rng.random((M, K), dtype=cupy.float32) - 0.5)
    b = conv.to_bits(rng.random((N, K), dtype=cupy.float32) - 0.5)
    c = cupy.zeros((M, N), dtype=cupy.uint16)
    ours = TcDispatchedGemm(registry.get("dispatch_fp8"), M, N, K)
    ref = best_fp8(M, N, K)
    return [(f"fp8 {M}x{N}x{K} {ours.plan.name}", lambda: ours(a, b, c, 1.0, 0.0)),
            (f"fp8 {M}x{N}x{K} cuBLASLt", lambda: ref(a, b, c, 1.0, 0.0))]


def interleaved(labels: Sequence[str], rounds: int, measure: Callable[[int], Any]) -> dict:
    """``measure(i)`` for every side i in each round, the order reversed every other round:
    {label: [one result per round]}."""
    got: dict[str, list] = {label: [] for label in labels}
    order = list(range(len(labels)))
    for r in range(rounds):
        for i in (order if r % 2 == 0 else order[::-1]):
            got[labels[i]].append(measure(i))
    return got


def harness_medians(sides: Sequence[tuple[str, Callable[[], None]]], rounds: int,
                    rep_ms: float = 8.0) -> dict:
    """Each side's harness median (``bench.timer.time_fn``: events, L2 flushed before every
    run) per round: {label: [seconds per round]}."""
    from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn

    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=2.0, rep_ms=rep_ms)
    return interleaved([s[0] for s in sides], rounds,
                       lambda i: statistics.median(time_fn(sides[i][1], backend, opts).samples_s))


def report(device: str, times: dict, json_path: str | None, width: int = 45) -> None:
    """Print each side's median over the rounds and the rounds themselves; write them as JSON."""
    print(f"{device}: harness medians, {len(next(iter(times.values())))} interleaved rounds")
    rec = []
    for label, rounds in times.items():
        t = statistics.median(rounds)
        spread = " / ".join(f"{x * 1e6:.2f}" for x in rounds)
        print(f"  {label:{width}s} {t * 1e6:7.2f} us   (rounds {spread})")
        rec.append({"label": label, "median_s": t, "rounds_s": rounds})
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"device": device, "sides": rec}, f, indent=1)
