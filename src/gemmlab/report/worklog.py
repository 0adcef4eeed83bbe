"""Your kernel's worklog as cells: the versions table and "What actually mattered", shared by the
terminal (``gemmlab history NAME``, its ``--csv``) and the HTML page (``report.worklog_html``).

The seed articles' tables (Version | Time | GFLOP/s | Speed-up | % of cuBLAS | what the profiler
showed), filled from the user's own edits (``analysis.versions``). Numbers are formatted here only;
the history keeps them unrounded.
"""

from __future__ import annotations

from typing import Optional, Sequence

from gemmlab.analysis.versions import History, Step, Version, shape_text
from gemmlab.bench.stats import SAME_MEANS
from gemmlab.report.mattered import mattered_rows
from gemmlab.store import UserKernel

KERNEL_COLUMNS = ("Kernel", "Versions", "Runs", "First run (UTC)", "Latest run (UTC)")
VERSION_COLUMNS = ("Version", "When (UTC)", "Source", "Shape", "Runs", "Time (ms)", "GFLOP/s", "% of cuBLAS",
                   "Speed-up vs previous", "What the profiler showed", "Top hot line", "Placement")
MATTERED_COLUMNS = ("Rank", "Edit", "Impact", "Lines changed", "Why it mattered")

VERSIONS_CAPTION = ("A version is one text of the source file (re-runs of it are the same version; its row is its "
                    "latest run). Time: median of the timed runs; GFLOP/s = 2·M·N·K / median; % of cuBLAS: cuBLAS "
                    "measured in the same run; speed-up: previous version's median / this one's, judged from both "
                    "runs' samples, and only between runs of the same shape, types, GPU and L2 flushing.")
MATTERED_CAPTION = f"Ranked by speed-up, a slower edit last; same: {SAME_MEANS} (it did not matter)."


def when(utc: str) -> str:
    """``2025-03-01T10:00:00+00:00`` as ``2025-03-01 10:00:00``."""
    return utc.replace("T", " ").removesuffix("+00:00") if utc else "unknown"


def kernel_rows(kernels: Sequence[UserKernel]) -> list[list]:
    return [[k.name, k.versions, k.runs, when(k.first_utc), when(k.last_utc)] for k in kernels]


def speedup_cell(s: Optional[Step]) -> str:
    """``2.10x faster``; ``first version``; ``not compared`` (why: the ranking's table says)."""
    if s is None:
        return "first version"
    e = s.effect
    if e is None:
        return "not compared"
    return f"{e.speedup:.2f}x {e.verdict}" + (" (noisy timing)" if e.noisy else "")


def version_label(v: Version) -> str:
    return v.label + (" WRONG" if v.latest.correct is False else "")


def shape_cell(v: Version) -> str:
    return f"{shape_text(v.latest.shape)} {v.latest.dtype}"


def version_row(h: History, v: Version) -> list:
    run = v.latest
    g, pct = run.row.gflops, run.pct_of_cublas
    return [version_label(v), when(run.created_utc), v.short, shape_cell(v), len(v.runs),
            f"{run.row.median_s * 1e3:.4f}", None if g is None else f"{g:,.1f}",
            None if pct is None else f"{pct:.1f}%", speedup_cell(h.step_into(v)),
            v.diagnosis_text or "not profiled", v.top_hot_line, v.placement]


def version_rows(h: History) -> list[list]:
    return [version_row(h, v) for v in h.versions]


def _step_of(h: History, after: str) -> Step:
    return next(s for s in h.steps if s.after.label == after)


def mattered_table(h: History) -> list[list]:
    """The edits: those that changed the time ranked (``report.mattered``'s cells), then those
    within noise (they did not matter, no rank), then those that could not be compared."""
    out = []
    for c, cells in zip(h.mattered, mattered_rows(h.mattered)):
        rank, edit, impact, why = cells
        out.append([rank, edit, impact, _step_of(h, c.after).lines_changed, why])
    for c, cells in zip(h.within_noise, mattered_rows(h.within_noise)):
        _, edit, impact, why = cells
        out.append(["–", edit, impact, _step_of(h, c.after).lines_changed, f"did not matter (within noise); {why}"])
    for s in h.not_compared:
        out.append(["–", s.edit, "not compared", s.lines_changed, s.why_not])
    return out


def title(h: History) -> str:
    return f"{h.name}: {len(h.versions)} version{'s' * (len(h.versions) != 1)}, {h.n_runs} run{'s' * (h.n_runs != 1)}"
