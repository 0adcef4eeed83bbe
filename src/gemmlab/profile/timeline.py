"""Per-kernel time summary, the shape of Nsight Systems' ``cuda_gpu_kern_sum``.

Pure functions over kernel events (name, duration). The same ``SummaryRow`` carries what the
nsys importer reads from ``nsys stats`` CSV, so a timeline measured here (through CUPTI) and one
imported from nsys print the same table.

Statistics follow nsys: Time (%) is the kernel's share of all kernel time, Med is the median
(mean of the two middle values for an even count), StdDev is the sample standard deviation
(n − 1 in the denominator; 0 for a single instance, as nsys prints it).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Iterable, Optional, Sequence


@dataclass(frozen=True)
class KernelEvent:
    """One kernel execution seen by a tracer. Durations in ns."""

    name: str
    duration_ns: float
    start_ns: Optional[float] = None


@dataclass(frozen=True)
class SummaryRow:
    """One row of a summary report: an item (kernel, API call, memory operation) and its stats.

    Times are in ``unit`` (``ns`` for time reports, ``byte`` for the memory-size report).
    ``med``/``stddev``/``time_pct`` are None where the source did not give them (old nsys reports
    have no median).
    """

    name: str
    instances: int
    total: float
    avg: float
    med: Optional[float]
    min: float
    max: float
    stddev: Optional[float]
    time_pct: Optional[float]
    unit: str = "ns"

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(events: Iterable[KernelEvent]) -> list[SummaryRow]:
    """Group events by kernel name; rows sorted by total time, largest first (nsys's order)."""
    by_name: dict[str, list[float]] = defaultdict(list)
    for e in events:
        if not (e.duration_ns >= 0 and math.isfinite(e.duration_ns)):
            raise ValueError(f"kernel {e.name!r}: duration {e.duration_ns!r} ns is not a finite, non-negative time")
        by_name[e.name].append(float(e.duration_ns))
    grand = sum(sum(v) for v in by_name.values())
    rows = [_row(name, durs, grand) for name, durs in by_name.items()]
    rows.sort(key=lambda r: (-r.total, r.name))
    return rows


def _row(name: str, durs: Sequence[float], grand_total: float) -> SummaryRow:
    total = sum(durs)
    n = len(durs)
    return SummaryRow(
        name=name,
        instances=n,
        total=total,
        avg=total / n,
        med=statistics.median(durs),
        min=min(durs),
        max=max(durs),
        stddev=statistics.stdev(durs) if n > 1 else 0.0,
        time_pct=100.0 * total / grand_total if grand_total > 0 else None,
        unit="ns",
    )
