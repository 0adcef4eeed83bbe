"""The ladder table and the "What actually mattered" ranking as cells and Markdown (the analysis is
``gemmlab.analysis.mattered``); shared by ``ladder --profile``, ``lesson --profile`` and the report."""

from __future__ import annotations

from typing import Sequence

from gemmlab.analysis.mattered import Change, LadderRow
from gemmlab.bench.stats import FASTER


def _fmt_time(s: float) -> str:
    return f"{s * 1e3:.4f} ms"


def render_markdown(rows: Sequence[LadderRow], changes: Sequence[Change]) -> str:
    lines = ["| Version | Time | GFLOP/s | Speedup vs previous | Profiler signal | Main bottleneck |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        sp = "–" if r.speedup_vs_previous is None else f"{r.speedup_vs_previous:.2f}x"
        gf = "–" if r.gflops is None else f"{r.gflops:.1f}"
        lines.append(f"| {r.version} | {_fmt_time(r.time_s)} | {gf} | {sp} | {r.signal or '–'} | "
                     f"{r.bottleneck or '–'} |")
    lines += ["", "What actually mattered", "",
              "| Rank | Optimization | Impact | Why it mattered |", "| --- | --- | --- | --- |"]
    for c in changes:
        lines.append(f"| {c.rank} | {c.optimization} | {_impact(c)} | {c.why} |")
    return "\n".join(lines) + "\n"


MATTERED_COLUMNS = ["Rank", "Optimization", "Impact", "Why it mattered"]


def mattered_rows(changes: Sequence[Change]) -> list[list]:
    """The "What actually mattered" table's rows (shared by `ladder --profile` and `lesson --profile`)."""
    return [[c.rank, c.optimization, _impact(c), c.why] for c in changes]


def _impact(c: Change) -> str:
    """The speed-up, marked when the change did not make the kernel faster ("slower", "same")."""
    verdict = c.effect.verdict
    return f"{c.speedup:.2f}x" + ("" if verdict == FASTER else f" ({verdict})")
