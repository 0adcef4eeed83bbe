"""The pieces of a report section, and how a ladder table's cells are written.

One ``Section`` per run (one ladder): its own tables, figures, "What actually mattered" ranking
and notes. The HTML and Markdown writers use ``LadderTable.columns`` / ``cells`` so both carry the
same numbers; nothing here rounds a stored value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gemmlab.report.ladders import Ladder, ladder_of

LADDER_COLUMNS = ("Version", "Time (ms)", "IQR (ms)", "GFLOP/s", "Speedup vs previous", "% of cuBLAS", "Correct")
PROFILE_COLUMNS = ("Profiler signal", "Main bottleneck")  # added when the run was profiled
MATTERED_COLUMNS = ("Rank", "Optimization", "Impact", "Why it mattered")
CANDIDATE_COLUMNS = ("Candidate", "Median (ms)", "TFLOP/s", "Kernel", "Note")


@dataclass(frozen=True)
class LadderRow:
    name: str
    time_ms: float
    iqr_ms: float | None
    n_samples: int
    gflops: float
    speedup: float | None  # vs the previous rung; None for the first
    pct_of_cublas: float | None
    correct: bool | None
    rel_err: float | None
    reference: bool = False
    bottleneck: str | None = None  # from ladder --profile, when it ran
    signal: str | None = None
    pct_of_peak: float | None = None
    anchor: str = ""  # the id of this kernel's card


@dataclass(frozen=True)
class LadderTable:
    shape: tuple[int, int, int]
    rows: tuple[LadderRow, ...]
    ladder: Ladder = ladder_of("fp32")
    kind: str = "ladder"  # the command that measured it: ladder, bench, sweep
    reference_note: str = ""  # what the cuBLAS row is, when the run says (the BF16 best-of winner)

    @property
    def title(self) -> str:
        M, N, K = self.shape
        name = self.ladder.title if self.kind == "ladder" else self.ladder.title.replace(" ladder", "") + f" {self.kind}"
        return f"{name} at M,N,K = {M},{N},{K}"

    @property
    def profiled(self) -> bool:
        return any(r.bottleneck or r.signal for r in self.rows)

    @property
    def shows_peak(self) -> bool:
        """The BF16 ladder's % of peak is per row (each at the clock its run saw), so it gets a column;
        the SGEMM ladder's is one constant (the header's peak) times GFLOP/s."""
        return self.ladder.dtype != "fp32" and any(r.pct_of_peak is not None for r in self.rows)

    @property
    def columns(self) -> tuple[str, ...]:
        cols = list(LADDER_COLUMNS)
        cols[3] = self.ladder.rate_unit
        if self.shows_peak:
            cols.insert(6, self.ladder.peak_column)
        return tuple(cols) + (PROFILE_COLUMNS if self.profiled else ())

    @property
    def numeric(self) -> range:
        """Indices of the right-aligned (number) columns."""
        return range(1, 7 if self.shows_peak else 6)

    def cells(self, row: LadderRow) -> list[str]:
        """One row as text, in ``columns`` order."""
        out = [
            row.name,
            fmt_ms(row.time_ms),
            fmt_ms(row.iqr_ms),
            fmt_rate(row.gflops, self.ladder),
            "reference" if row.reference else fmt_speedup(row.speedup),
            fmt_pct(row.pct_of_cublas),
        ]
        if self.shows_peak:
            out.append(fmt_pct(row.pct_of_peak))
        out.append(fmt_check(row))
        if self.profiled:
            out += [row.signal or "–", row.bottleneck or "–"]
        return out


@dataclass(frozen=True)
class Plot:
    key: str  # a file-name-safe identifier (the Markdown report's PNG name)
    title: str
    caption: str
    png: bytes


@dataclass(frozen=True)
class Section:
    """One run's ladder: never mixed with another run's in a table, a chart or a speedup chain."""

    key: str  # file-name-safe, unique in the report: "" for the first SGEMM section (as before), "bf16", ...
    title: str  # "SGEMM ladder", "BF16 tensor-core ladder"
    meta: tuple[tuple[str, str], ...]  # (label, value): run, date, command, peak, reference
    ladders: tuple[LadderTable, ...]
    plots: tuple[Plot, ...]
    notes: tuple[str, ...]  # what was left out and why
    mattered: tuple[tuple[str, ...], ...] = ()  # ladder --profile's ranking, as MATTERED_COLUMNS rows
    caption: str = ""  # how the table's numbers were made


def fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if v is None:
        return "–"
    return str(v)


def fmt_ms(v: float | None) -> str:
    return "–" if v is None else f"{v:,.3f}"


def fmt_speedup(v: float | None) -> str:
    return "baseline" if v is None else f"{v:.2f}x"


def fmt_pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}%"


def fmt_gflops(v: float) -> str:
    return f"{v:,.1f}"


def fmt_rate(gflops: float, ladder: Ladder) -> str:
    """GFLOP/s for the SGEMM ladder, TFLOP/s for the tensor-core one."""
    return f"{gflops * 1e9 / ladder.rate_scale:,.1f}"


def fmt_check(row: LadderRow) -> str:
    if row.correct is None:
        return "not checked"
    err = "" if row.rel_err is None else f" (rel err {fmt_value(row.rel_err)})"
    return ("ok" if row.correct else "WRONG") + err
