"""A measurement is an object, not a float; and "did this change help?" has one answer.

``Measurement`` keeps every raw sample in seconds, unrounded, with the ``BenchSpec`` it belongs to;
the median, quartiles, IQR, min and mean are computed when asked for. The headline time is the
median: it ignores the occasional run that a clock change or another process slowed down, which the
mean does not.

``effect(a, b)`` is the one judgement of a change from ``a`` to ``b`` that every part of gemmlab uses
(the ladder's steps, "what actually mattered", ``compare``, ``diff``, the lessons' verdicts):
faster, slower, or the same within noise, with the speed-up, the range the two runs' spreads allow,
and the basis of the verdict. Like nvbench's robust compare (``nvbench_compare_robust.py``), it
reads an interval of each side's samples rather than the medians alone, and it declares a change
only when the intervals are apart by more than a minimum relative gap; unlike nvbench, whose gap is
0.5% between builds of one kernel under one clock, the minimum here is ``MIN_EFFECT`` (3%), because
the runs it compares are different kernels timed one after the other.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from gemmlab.bench.spec import BenchSpec

# A measurement is flagged noisy when IQR/median exceeds 5%. With warm clocks, L2 flushed and a
# quiet GPU, kernel times of 0.1 ms and longer repeat to within about 1% (IQR/median); a spread
# above 5% means something moved during the run (clock or power capping, another process on the
# GPU, launch gaps longer than the kernel). The steps the first article's sweep compares are 1-6%
# apart (block shape 1.01x, sync cleanup 1.06x), so a wider spread than that cannot rank them.
# (torch.utils.benchmark warns at 10% for CPU timings, which are noisier.)
NOISE_IQR_FRACTION = 0.05


def quantile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0..1), linear interpolation between order statistics (numpy's default)."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile q must be within [0, 1], got {q}")
    return float(np.quantile(np.asarray(samples, dtype=np.float64), q))


def gflops(flops: int, seconds: float) -> float:
    """GFLOP/s = FLOPs / t / 1e9 (for GEMM, FLOPs = 2·M·N·K)."""
    if seconds <= 0 or not math.isfinite(seconds):
        return math.nan
    return flops / seconds / 1e9


@dataclass(frozen=True)
class Measurement:
    """Raw per-run times (seconds) of one configuration, with statistics on demand."""

    spec: BenchSpec
    samples_s: tuple[float, ...]
    # How the samples were taken (warm-up count, repeats, L2 flush bytes, ...): stored, not used here.
    timing: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        samples = tuple(float(s) for s in self.samples_s)
        if not samples:
            raise ValueError(f"a Measurement of {self.spec.kernel} needs at least one sample")
        bad = [s for s in samples if not (math.isfinite(s) and s > 0)]
        if bad:
            raise ValueError(f"samples must be finite positive seconds; {self.spec.kernel} has {bad[:3]}")
        object.__setattr__(self, "samples_s", samples)
        object.__setattr__(self, "timing", dict(self.timing))

    # --- order statistics -------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.samples_s)

    def quantile(self, q: float) -> float:
        return quantile(self.samples_s, q)

    @property
    def median(self) -> float:
        return self.quantile(0.5)

    @property
    def q1(self) -> float:
        return self.quantile(0.25)

    @property
    def q3(self) -> float:
        return self.quantile(0.75)

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def min(self) -> float:
        return min(self.samples_s)

    @property
    def max(self) -> float:
        return max(self.samples_s)

    @property
    def mean(self) -> float:
        return float(np.mean(np.asarray(self.samples_s, dtype=np.float64)))

    # --- noise ------------------------------------------------------------------------------
    @property
    def relative_iqr(self) -> float:
        """IQR / median: the spread as a fraction of the headline time."""
        return self.iqr / self.median

    @property
    def noisy(self) -> bool:
        """True when IQR/median > NOISE_IQR_FRACTION (see the constant for why 5%)."""
        return self.relative_iqr > NOISE_IQR_FRACTION

    # --- throughput -------------------------------------------------------------------------
    @property
    def gflops(self) -> float:
        """2·M·N·K / median time / 1e9."""
        return gflops(self.spec.flops, self.median)

    def to_dict(self) -> dict:
        """Everything, raw samples included, unrounded; statistics are derived copies."""
        return {
            "spec": self.spec.to_dict(),
            "samples_s": list(self.samples_s),
            "n": self.n,
            "median_s": self.median,
            "q1_s": self.q1,
            "q3_s": self.q3,
            "iqr_s": self.iqr,
            "min_s": self.min,
            "max_s": self.max,
            "mean_s": self.mean,
            "relative_iqr": self.relative_iqr,
            "noisy": self.noisy,
            "noise_bound": NOISE_IQR_FRACTION,
            "gflops": self.gflops,
            "timing": dict(self.timing),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Measurement":
        return cls(BenchSpec.from_dict(d["spec"]), tuple(d["samples_s"]), d.get("timing") or {})


FASTER, SLOWER, SAME = "faster", "slower", "same"

# A change smaller than 3% is "the same" even when the two runs' interquartile ranges are apart: two
# kernels timed one after the other see 1-2% of clock and thermal drift between them (warm-clock
# runs of >= 0.1 ms repeat to within about 1%, NOISE_IQR_FRACTION's note; at the 700 W cap the H100's
# SM clock moves between 1350 and 1500 MHz), and the fourth seed article calls its 1% change
# "essentially no difference".
MIN_EFFECT = 0.03
SAME_MEANS = f"the interquartile ranges overlap or the change is under {MIN_EFFECT:.0%}"  # for captions


@dataclass(frozen=True)
class Effect:
    """The change from a "before" to an "after" measurement."""

    verdict: str  # FASTER, SLOWER or SAME: what "after" is compared with "before"
    speedup: float  # before median / after median (> 1: after is faster)
    low: Optional[float]  # the speed-up the two interquartile ranges allow, lowest and highest
    high: Optional[float]  # (None when a side has no spread, e.g. a published median)
    basis: str  # "samples" (interquartile ranges of raw samples) or "medians" (no spread known)
    noisy: bool  # either side flagged noisy (IQR/median > NOISE_IQR_FRACTION)
    why: str  # the reason for the verdict, in a few words

    @property
    def text(self) -> str:
        """One phrase: "faster: 2.10x (2.05-2.15x)"."""
        spread = f" ({self.low:.2f}-{self.high:.2f}x)" if self.low is not None else ""
        noisy = ", noisy timing" if self.noisy else ""
        return f"{self.verdict}: {self.speedup:.2f}x{spread}{noisy}"

    def to_dict(self) -> dict:
        return {**asdict(self), "text": self.text}


def speedup(before: Any, after: Any) -> float:
    """Before's median time / after's median time (> 1: after is faster). Takes ``Measurement``s,
    anything with a ``median`` in seconds, or plain seconds."""
    return _median(before) / _median(after)


def _median(x: Any) -> float:
    m = x if isinstance(x, (int, float)) else getattr(x, "median", x)
    if isinstance(m, bool) or not isinstance(m, (int, float)) or not m > 0 or not math.isfinite(m):
        raise ValueError(f"a median time must be a finite positive number of seconds, got {m!r}")
    return float(m)


def _change(s: float) -> float:
    """The size of a speed-up either way: 1.05x faster and 1.05x slower are both 5% (so a verdict
    and its reverse always agree)."""
    return max(s, 1.0 / s) - 1.0


def _by_size(s: float, min_effect: float) -> str:
    if _change(s) < min_effect:
        return SAME
    return FASTER if s > 1.0 else SLOWER


def effect(before: Any, after: Any, min_effect: float = MIN_EFFECT) -> Effect:
    """Faster, slower or the same within noise, from ``before`` to ``after``.

    With raw samples on both sides (``Measurement``s): "same" when the interquartile ranges overlap
    (the order of the medians is not established) or the speed-up is within ``min_effect`` of 1;
    otherwise faster or slower. With a median alone on either side (plain seconds, e.g. an article's
    published figure) only the size of the change decides, and ``basis`` says so."""
    s = speedup(before, after)
    noisy = bool(getattr(before, "noisy", False) or getattr(after, "noisy", False))
    if not (_has_spread(before) and _has_spread(after)):
        v = _by_size(s, min_effect)
        why = ("the medians differ by less than the minimum effect" if v == SAME else
               "by the medians alone: no spread is known")
        return Effect(v, s, None, None, "medians", noisy, why)
    low, high = before.q1 / after.q3, before.q3 / after.q1
    if before.q1 <= after.q3 and after.q1 <= before.q3:
        return Effect(SAME, s, low, high, "samples", noisy, "the interquartile ranges overlap")
    if _change(s) < min_effect:
        return Effect(SAME, s, low, high, "samples", noisy,
                      f"a {_change(s):.1%} change, under the {min_effect:.0%} drift between two timed kernels")
    v = FASTER if s > 1.0 else SLOWER
    return Effect(v, s, low, high, "samples", noisy, "the interquartile ranges are apart")


def _has_spread(x: Any) -> bool:
    return isinstance(x, Measurement) and x.n >= 2
