"""Timing two or more kernels in interleaved rounds, and what the rounds say about the comparison.

At 8192³ BF16 an H100 sits at its 700 W cap and its SM clock drifts between 1350 and 1500 MHz, so timing
every rung first and cuBLAS last compares different clocks. Instead each round times every side, and the
order reverses from one round to the next (A B … R, then R … B A): each side is timed once early and once
late. A side's samples are the union of its rounds.

Per round, a kernel's ratio to the reference is the reference's median over the kernel's (above 1: faster
than the reference), next to the SM clocks each side saw. When the kernel beats the reference in the
rounds where one of them came first and loses in the rounds where it came second, the verdict depends on
the order (on the clock each side happened to get): ``order_flip`` flags it, and no single ratio should
be quoted for it without that caveat.
"""

from __future__ import annotations

from statistics import median
from typing import Any, Callable, Optional, Sequence

from gemmlab.bench.stats import Measurement

ROUNDS = 2  # interleaved rounds per side: A B B A


def order(n: int, round_index: int) -> list[int]:
    """The sides' order in one round: as given in even rounds, reversed in odd ones."""
    return list(range(n)) if round_index % 2 == 0 else list(reversed(range(n)))


def interleaved(sides: Sequence[Callable[[], Any]], bench_time: Callable[[int, Callable[[], Any]], tuple],
                rounds: int = ROUNDS) -> list[list[tuple]]:
    """Time each side ``rounds`` times in the order A B B A (A B B A ... for more rounds): per side,
    the list of what ``bench_time(index, run)`` returned."""
    results: list[list[tuple]] = [[] for _ in sides]
    for r in range(rounds):
        for i in order(len(sides), r):
            results[i].append(bench_time(i, sides[i]))
    return results


def merge(parts: Sequence[tuple[Measurement, dict]]) -> tuple[Measurement, dict]:
    """One measurement of a side from its rounds: every sample, and the clocks of each round."""
    first, clocks = parts[0]
    samples = tuple(s for m, _ in parts for s in m.samples_s)
    timing = {**first.timing, "rounds": len(parts), "round_medians_s": [m.median for m, _ in parts]}
    seen = [c for _, c in parts]
    before = [c.get("sm_mhz_before") for c in seen if c.get("sm_mhz_before")]
    after = [c.get("sm_mhz_after") for c in seen if c.get("sm_mhz_after")]
    merged = {**clocks, "rounds": seen}
    if before:
        merged["sm_mhz_before"] = min(before)
    if after:
        merged["sm_mhz_after"] = max(after)
    return Measurement(first.spec, samples, timing), merged


def compare(kernel: Sequence[tuple[Measurement, dict]], reference: Sequence[tuple[Measurement, dict]],
            kernel_first: Sequence[bool]) -> dict:
    """Per-round ratios of a kernel to the reference (reference median / kernel median), the clocks each
    side saw, and whether the verdict (faster or slower than the reference) flips with the order."""
    rounds = []
    for (m, c), (rm, rc), first in zip(kernel, reference, kernel_first):
        rounds.append({"ratio": rm.median / m.median if m.median > 0 else None, "kernel_first": bool(first),
                       "kernel_s": m.median, "reference_s": rm.median,
                       "kernel_sm_mhz": _clock(c), "reference_sm_mhz": _clock(rc)})
    ratios = [r["ratio"] for r in rounds if r["ratio"] is not None]
    early = [r["ratio"] for r in rounds if r["ratio"] is not None and r["kernel_first"]]
    late = [r["ratio"] for r in rounds if r["ratio"] is not None and not r["kernel_first"]]
    flip = bool(early and late) and ((min(early) >= 1.0 > max(late)) or (min(late) >= 1.0 > max(early)))
    return {"rounds": rounds, "ratio_median": median(ratios) if ratios else None,
            "ratio_min": min(ratios) if ratios else None, "ratio_max": max(ratios) if ratios else None,
            "order_flip": flip}


def _clock(c: dict) -> Optional[list]:
    b, a = c.get("sm_mhz_before"), c.get("sm_mhz_after")
    return None if b is None and a is None else [b, a]
