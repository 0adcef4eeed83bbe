"""A measurement is an object, not a float.

``Measurement`` keeps every raw sample in seconds, unrounded, with the ``BenchSpec`` it belongs to;
the median, quartiles, IQR, min and mean are computed when asked for. The headline time is the
median: it ignores the occasional run that a clock change or another process slowed down, which the
mean does not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

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


def distinguishable(a: Measurement, b: Measurement) -> bool:
    """Whether two medians differ by more than the runs' spread: their IQR ranges do not overlap.

    A speedup smaller than the spread of the two runs is noise, whatever the ratio of medians says.
    """
    return a.q3 < b.q1 or b.q3 < a.q1
