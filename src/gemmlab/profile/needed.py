"""Which of a report's metrics gemmlab reads: the ones an ``.ncu-rep`` decode keeps by default.

A ``--set full`` result holds ~2,230 metrics; the analyzer, roofline, occupancy check, diff and
reports read a few hundred of them. Decoding only those (``ncu_rep.read_rep(path)``) cuts the
per-metric cost of ncu_report (``IMetric.unit()`` alone is ~60 µs a metric the first time),
of moving the records from the reading process, and of caching them. ``metrics="all"`` (or
``GEMMLAB_NCU_REP_METRICS=all``) decodes everything, as a CSV export would hold.

What is kept:

- every name in the short-name table (``metrics.METRICS``, fallbacks included) and the details-page
  labels' names (``metrics.LABELS``);
- whole families read by name outside that table: ``launch__*``, ``device__*``, ``profiler__*``
  (occupancy, waves, roofline's device name, replay passes) and the per-op instruction counts of
  the roofline (``smsp__sass_thread_inst_executed_op_*``);
- the raw names below that code outside ``gemmlab.profile.metrics`` reads directly.

tests/test_ncu_rep_needed.py checks that every metric-name string in gemmlab's source is kept,
that every metric the analysis touches on the fixture reports is kept, and that the diagnosis of
the fixture reports is the same from the kept metrics as from all of them: a new ``launch.number(
"some__metric")`` outside the table fails there until it is added here (or to the table).
"""

from __future__ import annotations

import functools
from typing import Optional

KEEP_PREFIXES = (
    "launch__",
    "device__",
    "profiler__",
    "smsp__sass_thread_inst_executed_op_",
)

# Raw ncu names read outside the short-name table (analysis/roofline.py, analysis/occupancy.py, ...).
RAW_READS = (
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "sm__maximum_warps_per_active_cycle_pct",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "smsp__cycles_elapsed.avg",
    "smsp__cycles_elapsed.avg.per_second",
    "dram__bytes.sum",
    "dram__bytes.sum.per_second",
    "dram__bytes.sum.peak_sustained",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__cycles_elapsed.avg.per_second",
)

ALL = "all"
NEEDED = "needed"


@functools.lru_cache(maxsize=1)
def needed_names() -> frozenset[str]:
    from gemmlab.profile.metrics import LABELS, METRICS

    names = set(RAW_READS)
    for d in METRICS.values():
        names.update(d.names)
    names.update(LABELS.values())
    return frozenset(names)


def is_needed(name: str) -> bool:
    return name.startswith(KEEP_PREFIXES) or name in needed_names()


def selection(metrics: Optional[str] = None) -> str:
    """``"needed"`` or ``"all"``: the argument if given, else ``GEMMLAB_NCU_REP_METRICS``, else needed."""
    import os

    choice = (metrics or os.environ.get("GEMMLAB_NCU_REP_METRICS") or NEEDED).strip().lower()
    if choice not in (ALL, NEEDED):
        from gemmlab.errors import UserError

        raise UserError(f"metric selection {choice!r}: expected 'needed' or 'all' (GEMMLAB_NCU_REP_METRICS)")
    return choice
