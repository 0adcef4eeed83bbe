"""What a report says, independent of how it is written out: tables, figures, one card per kernel.

``build(view)`` turns a ``RunView`` into a ``Report``; ``html.render`` and ``markdown.render`` only
format it, so the two outputs always carry the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gemmlab.report import plots
from gemmlab.report.model import KernelResult, RunView, speedups

# env keys shown in the header, with the names different collectors use for them
HEADER_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Driver", ("driver", "driver_version")),
    ("CUDA", ("cuda", "cuda_version", "cuda_runtime", "runtime_version")),
    ("Compute capability", ("cc", "compute_capability")),
    ("CuPy", ("cupy", "cupy_version")),
    ("SM clock", ("sm_clock_mhz", "clock_mhz")),
)


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


@dataclass(frozen=True)
class LadderTable:
    shape: tuple[int, int, int]
    rows: tuple[LadderRow, ...]

    @property
    def title(self) -> str:
        M, N, K = self.shape
        return f"Ladder at M,N,K = {M},{N},{K}"


@dataclass(frozen=True)
class Plot:
    key: str  # a file-name-safe identifier (the Markdown report's PNG name)
    title: str
    caption: str
    png: bytes


@dataclass(frozen=True)
class EvidenceRow:
    metric: str
    value: str
    unit: str
    note: str


@dataclass(frozen=True)
class Finding:
    category: str
    confidence: str
    summary: str
    at_limit: bool | None
    evidence: tuple[EvidenceRow, ...]


@dataclass(frozen=True)
class Card:
    """One kernel: its measurement (if in the run) and the analyzer's diagnosis (if attached)."""

    name: str
    result: LadderRow | None
    primary: Finding | None
    findings: tuple[Finding, ...]
    missing: tuple[tuple[str, str], ...]  # (metric, why)
    collect_command: str
    recommendations: tuple[str, ...]
    diagnosed: bool


@dataclass(frozen=True)
class Report:
    title: str
    gpu: str
    header: tuple[tuple[str, str], ...]  # (label, value) for the page header
    source: str
    data_note: str
    ladders: tuple[LadderTable, ...]
    plots: tuple[Plot, ...]
    notes: tuple[str, ...]  # what was left out and why
    cards: tuple[Card, ...]
    env: tuple[tuple[str, str], ...]
    diagnosis_source: str = ""


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    if v is None:
        return "–"
    return str(v)


def _env_value(env: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for k in keys:
        if env.get(k) not in (None, ""):
            return _fmt_value(env[k])
    return None


def ladder_rows(view: RunView, shape: tuple[int, int, int]) -> list[LadderRow]:
    """The ladder at ``shape`` in rung order, then the reference; speedup is vs the previous rung."""
    ladder = view.ladder(shape)
    rows = []
    for r, s in zip(ladder, speedups(ladder)):
        rows.append(_row(view, r, s))
    ref = view.reference(shape)
    if ref is not None:
        rows.append(_row(view, ref, None, reference=True))
    return rows


def _row(view: RunView, r: KernelResult, speedup: float | None, reference: bool = False) -> LadderRow:
    return LadderRow(
        name=r.name,
        time_ms=r.median_s * 1e3,
        iqr_ms=None if r.iqr_s is None else r.iqr_s * 1e3,
        n_samples=len(r.samples_s),
        gflops=r.gflops,
        speedup=speedup,
        pct_of_cublas=100.0 if reference else view.pct_of_reference(r),
        correct=r.correct,
        rel_err=r.rel_err,
        reference=reference,
    )


def _finding(d: Mapping[str, Any] | None) -> Finding | None:
    if not isinstance(d, Mapping):
        return None
    ev = []
    for e in d.get("evidence") or []:
        if not isinstance(e, Mapping):
            ev.append(EvidenceRow(str(e), "", "", ""))
            continue
        extra = {k: v for k, v in e.items() if k not in ("metric", "value", "unit")}
        ev.append(
            EvidenceRow(
                metric=str(e.get("metric", "")),
                value=_fmt_value(e.get("value")),
                unit=str(e.get("unit") or ""),
                note="; ".join(f"{k}: {_fmt_value(v)}" for k, v in extra.items()),
            )
        )
    at_limit = d.get("at_limit")
    return Finding(
        category=str(d.get("category", "unknown")),
        confidence=_fmt_value(d.get("confidence")),
        summary=str(d.get("summary") or ""),
        at_limit=at_limit if isinstance(at_limit, bool) else None,
        evidence=tuple(ev),
    )


def _text(item: Any) -> str:
    if isinstance(item, Mapping):
        for k in ("text", "summary", "action", "title"):
            if item.get(k):
                return str(item[k])
        return "; ".join(f"{k}: {_fmt_value(v)}" for k, v in item.items())
    return str(item)


def _card(name: str, row: LadderRow | None, diag: Mapping[str, Any] | None) -> Card:
    if diag is None:
        return Card(name, row, None, (), (), "", (), diagnosed=False)
    findings = tuple(f for f in (_finding(x) for x in diag.get("findings") or []) if f is not None)
    missing = tuple(
        (str(m.get("metric", "")), str(m.get("why", ""))) if isinstance(m, Mapping) else (str(m), "")
        for m in diag.get("missing_evidence") or []
    )
    return Card(
        name=name,
        result=row,
        primary=_finding(diag.get("primary")),
        findings=findings,
        missing=missing,
        collect_command=str(diag.get("collect_command") or ""),
        recommendations=tuple(_text(r) for r in diag.get("recommendations") or []),
        diagnosed=True,
    )


def _safe_key(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()[:60] or "plot"


def _roofline_ceilings(view: RunView) -> tuple[list[plots.Ceiling], list[plots.Ceiling]] | None:
    """FP32 and DRAM ceilings from the run's environment, when it recorded them."""
    peak = view.env.get("peak_fp32_gflops")
    bw = view.env.get("dram_gbs")
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (peak, bw))
    if not ok:
        return None
    return [plots.Ceiling("FP32 peak", float(peak))], [plots.Ceiling("DRAM", float(bw))]


def _compulsory_ai(M: int, N: int, K: int) -> float:
    """FLOP per byte if each FP32 matrix crossed DRAM exactly once (A, B read; C written).

    This is the best a GEMM of this shape can do; a real kernel moves more bytes, so its point
    sits at this AI only as an upper bound on its intensity.
    """
    return 2 * M * N * K / (4 * (M * K + K * N + M * N))


def build(view: RunView, with_plots: bool = True) -> Report:
    """Everything the report shows, computed once."""
    header = [("GPU", view.gpu)]
    for label, keys in HEADER_KEYS:
        v = _env_value(view.env, keys)
        if v is not None:
            header.append((label, v))
    header.append(("Date (UTC)", view.created_utc or "unknown"))
    header.append(("Command", view.command or "unknown"))
    if view.run_id:
        header.append(("Run", view.run_id))

    ladders = tuple(LadderTable(s, tuple(ladder_rows(view, s))) for s in view.shapes)
    notes: list[str] = []
    figs: list[Plot] = []
    if with_plots:
        for t in ladders:
            M, N, K = t.shape
            kernels = view.ladder(t.shape)
            ref = view.reference(t.shape)
            if kernels:
                pct = [view.pct_of_reference(r) for r in kernels]
                figs.append(
                    Plot(
                        key=f"ladder-{M}x{N}x{K}",
                        title=f"GFLOP/s per rung, M,N,K={M},{N},{K}",
                        caption="Bars: GFLOP/s from the median time; labels: GFLOP/s and % of "
                        + (f"{ref.name} (dashed line)." if ref else "cuBLAS (no reference in this run)."),
                        png=plots.png_bytes(plots.ladder_figure(kernels, ref, pct, f"{view.gpu}: {t.title}")),
                    )
                )
            results = [r for r in view.results if r.shape == t.shape]
            if any(r.samples_s for r in results):
                ordered = kernels + ([ref] if ref else [])
                figs.append(
                    Plot(
                        key=f"timing-{M}x{N}x{K}",
                        title=f"Timing distribution, M,N,K={M},{N},{K}",
                        caption="Every timed run. Left: ms (box = quartiles, line = median; log axis when "
                        "medians differ by more than 10x). Right: the same runs as % from each kernel's median.",
                        png=plots.png_bytes(plots.timing_figure(ordered, f"{view.gpu}: time per run")),
                    )
                )
            else:
                notes.append(f"Timing distribution at M,N,K={M},{N},{K} omitted: the run kept no raw samples.")
        for g in plots.sweep_grids(view.sweep):
            best = g.best()
            where = f"{g.y_param}={best[0]}" + (f", {g.x_param}={best[1]}" if g.x_param else "") if best else ""
            figs.append(
                Plot(
                    key="sweep-" + _safe_key(g.title),
                    title=g.title,
                    caption=f"GFLOP/s from the median time of each configuration; best (outlined): {where}"
                    + (f" at {best[2]:,.0f} GFLOP/s." if best else "."),
                    png=plots.png_bytes(plots.sweep_figure(g)),
                )
            )
        if view.sweep and not plots.sweep_grids(view.sweep):
            notes.append("Sweep heatmap omitted: no parameter varies across the sweep points.")
        ceilings = _roofline_ceilings(view)
        if ceilings is None:
            notes.append(
                f"Roofline omitted: the run does not record an FP32 peak and DRAM bandwidth for {view.gpu} "
                "(env keys peak_fp32_gflops, dram_gbs)."
            )
        else:
            pts = [
                plots.RooflinePoint(f"{r.name} ({r.M}x{r.N}x{r.K})", _compulsory_ai(*r.shape), r.gflops)
                for r in view.results
            ]
            figs.append(
                Plot(
                    key="roofline",
                    title="Roofline",
                    caption="Arithmetic intensity from compulsory DRAM traffic (each matrix read or written "
                    "once), an upper bound: real kernels move more bytes and sit further left.",
                    png=plots.png_bytes(plots.roofline_figure(pts, *ceilings, f"{view.gpu}: roofline")),
                )
            )
    else:
        notes.append("Plots omitted (--no-plots).")

    # one card per kernel in the run, then any diagnosed kernel the run does not contain
    cards = []
    named = set()
    for t in ladders:
        for row in t.rows:
            if row.name in named:
                continue
            named.add(row.name)
            cards.append(_card(row.name, row, view.diagnosis_for(row.name)))
    diag_source = ""
    if view.diagnoses:
        diag_source = str(view.diagnoses.get("source") or "")
        used = {id(view.diagnosis_for(n)) for n in named}
        for k in view.diagnoses.get("kernels", []):
            if id(k) not in used:
                cards.append(_card(str(k.get("name") or k.get("id") or "?"), None, k))
    env = tuple((str(k), _fmt_value(v)) for k, v in sorted(view.env.items()))
    return Report(
        title=f"gemmlab report: {view.gpu}",
        gpu=view.gpu,
        header=tuple(header),
        source=view.source,
        data_note=view.data_note,
        ladders=ladders,
        plots=tuple(figs),
        notes=tuple(notes),
        cards=tuple(cards),
        env=env,
        diagnosis_source=diag_source,
    )


def fmt_ms(v: float | None) -> str:
    return "–" if v is None else f"{v:,.3f}"


def fmt_speedup(v: float | None) -> str:
    return "baseline" if v is None else f"{v:.2f}x"


def fmt_pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}%"


def fmt_gflops(v: float) -> str:
    return f"{v:,.1f}"


def fmt_check(row: LadderRow) -> str:
    if row.correct is None:
        return "not checked"
    err = "" if row.rel_err is None else f" (rel err {_fmt_value(row.rel_err)})"
    return ("ok" if row.correct else "WRONG") + err


LADDER_COLUMNS = ("Version", "Time (ms)", "IQR (ms)", "GFLOP/s", "Speedup vs previous", "% of cuBLAS", "Correct")


def ladder_cells(row: LadderRow) -> list[str]:
    """One table row as text, in LADDER_COLUMNS order (shared by the HTML and Markdown tables)."""
    return [
        row.name,
        fmt_ms(row.time_ms),
        fmt_ms(row.iqr_ms),
        fmt_gflops(row.gflops),
        "reference" if row.reference else fmt_speedup(row.speedup),
        fmt_pct(row.pct_of_cublas),
        fmt_check(row),
    ]

