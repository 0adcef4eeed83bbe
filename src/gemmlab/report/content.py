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
    ("CUDA runtime", ("cuda_runtime", "cuda", "cuda_version")),
    ("Compute capability", ("compute_capability", "cc")),
    ("SMs", ("sm_count",)),
    ("Max SM clock (MHz)", ("sm_clock_max_mhz", "sm_clock_attr_mhz")),
    ("FP32 peak (TFLOP/s)", ("fp32_peak_tflops",)),
    ("cuBLAS", ("cublas_math_mode",)),
    ("CuPy", ("cupy",)),
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
    bottleneck: str | None = None  # from ladder --profile, when it ran
    signal: str | None = None


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
    ncu_name: str  # the raw Nsight Compute name (or formula) behind ``metric``; "" when the same
    value: str
    unit: str
    compared_with: str
    why: str


@dataclass(frozen=True)
class Finding:
    category: str
    confidence: str
    summary: str
    at_limit: bool | None
    impact: str  # "35% of the time (basis)" or ""
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
    collect_note: str = ""  # what the command's placeholders mean, what to run after it
    collect_profile: str = ""  # the same collection through `gemmlab profile` ("" when it has none)
    diagnosis_source: str = ""  # the capture this diagnosis was made from


OVERVIEW_COLUMNS = ("#", "kernel", "launches", "total time", "share", "primary (launches agreeing)", "conf.",
                    "at limit", "a fix could win")
CATEGORY_COLUMNS = ("primary category", "at limit", "launches", "GPU time", "share")
OVERVIEW_ROWS = 15  # groups shown in the report; the JSON and `gemmlab analyze --all` have every one


@dataclass(frozen=True)
class OverviewView:
    """One diagnosed program's GPU time by kernel group (``gemmlab analyze``'s overview), as table text."""

    source: str
    summary: str
    rows: tuple[tuple[str, ...], ...]
    categories: tuple[tuple[str, ...], ...]
    more: int  # groups not shown


def _time(ns: Any) -> str:
    if not isinstance(ns, (int, float)):
        return "–"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:,.3g} {unit}"
    return f"{ns:,.0f} ns"


def _share(v: Any) -> str:
    return "–" if not isinstance(v, (int, float)) else f"{100 * v:.1f}%"


def overview_views(diagnoses: Mapping[str, Any] | None) -> tuple[OverviewView, ...]:
    out = []
    for ov in (diagnoses or {}).get("overviews") or []:
        groups = ov.get("kernel_groups") or []
        rows = []
        for g in groups[:OVERVIEW_ROWS]:
            fix = g.get("fix_could_win_share")
            rows.append((str(g.get("rank", "")), str(g.get("name") or "?"), str(g.get("launches", "")),
                         _time(g.get("time_ns")), _share(g.get("share")),
                         f"{g.get('primary_category')} ({g.get('agree')}/{g.get('launches')})",
                         str(g.get("confidence", "")), "yes" if g.get("at_limit") else "no",
                         "not estimated" if fix is None else f"{_time(g.get('fix_could_win_ns'))} ({_share(fix)})"))
        cats = tuple((str(c.get("category")), "yes" if c.get("at_limit") else "no", str(c.get("launches", "")),
                      _time(c.get("time_ns")), _share(c.get("share"))) for c in ov.get("by_category") or [])
        out.append(OverviewView(str(ov.get("source") or ""), str(ov.get("summary") or ""), tuple(rows), cats,
                                max(0, len(groups) - OVERVIEW_ROWS)))
    return tuple(out)


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
    overviews: tuple[OverviewView, ...] = ()  # where each diagnosed program's GPU time goes


def _fmt_value(v: Any) -> str:
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


def _env_value(env: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for k in keys:
        if env.get(k) not in (None, ""):
            return _fmt_value(env[k])
    return None


def ladder_rows(view: RunView, shape: tuple[int, int, int]) -> list[LadderRow]:
    """The ladder at ``shape`` in rung order, then the reference; speedup is vs the previous rung
    (not for a sweep, whose variants are alternatives rather than steps)."""
    ladder = view.ladder(shape)
    steps = speedups(ladder) if view.kind != "sweep" else [None] * len(ladder)
    rows = []
    for r, s in zip(ladder, steps):
        rows.append(_row(view, r, s))
    ref = view.reference(shape)
    if ref is not None:
        rows.append(_row(view, ref, None, reference=True))
    return rows


def _row(view: RunView, r: KernelResult, speedup: float | None, reference: bool = False) -> LadderRow:
    note = view.profile.get(r.name)
    return LadderRow(
        bottleneck=None if note is None else (note.bottleneck or (f"not profiled: {note.error}" if note.error else None)),
        signal=None if note is None else note.signal,
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
            ev.append(EvidenceRow(str(e), "", "", "", "", ""))
            continue
        metric = str(e.get("metric", ""))
        ncu = str(e.get("ncu_name") or "")
        ev.append(
            EvidenceRow(
                metric=metric,
                ncu_name="" if ncu == metric else ncu,
                value=_fmt_value(e.get("value")),
                unit=str(e.get("unit") or ""),
                compared_with=str(e.get("compared_with") or ""),
                why=str(e.get("why") or ""),
            )
        )
    at_limit = d.get("at_limit")
    impact = d.get("impact")
    impact_text = ""
    if isinstance(impact, (int, float)) and not isinstance(impact, bool) and impact > 0:
        impact_text = f"about {100 * impact:.0f}% of the time"
        if d.get("impact_basis"):
            impact_text += f" ({d['impact_basis']})"
    return Finding(
        category=str(d.get("category", "unknown")),
        confidence=_fmt_value(d.get("confidence")),
        summary=str(d.get("summary") or ""),
        at_limit=at_limit if isinstance(at_limit, bool) else None,
        impact=impact_text,
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
        collect_note=str(diag.get("collect_note") or ""),
        collect_profile=str(diag.get("collect_profile") or ""),
        diagnosis_source=str(diag.get("source") or ""),
    )


def _safe_key(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()[:60] or "plot"


def _roofline_plots(view: RunView) -> list[Plot]:
    """One roofline per shape: analytic GEMM counts (2·M·N·K FLOP, compulsory DRAM bytes) and the
    measured median time, against the run's ceilings."""
    from gemmlab.analysis.roofline import place, point_from_gemm

    c = view.ceilings
    out = []
    for shape in view.shapes:
        M, N, K = shape
        rows = [r for r in view.ladder(shape) if r.correct is not False]
        ref = view.reference(shape)
        rows += [ref] if ref is not None else []
        if not rows:
            continue
        placements = [place(point_from_gemm(r.name, *r.shape, r.median_s, beta_nonzero=r.beta != 0), c) for r in rows]
        out.append(
            Plot(
                key=f"roofline-{M}x{N}x{K}",
                title=f"FP32 roofline, M,N,K={M},{N},{K}",
                caption=f"Ceilings: {c.source} ({c.detail}). Points: 2·M·N·K FLOP over the median time; bytes are the "
                "compulsory DRAM traffic (each matrix crosses DRAM once), so every kernel of one shape shares one "
                "intensity, an upper bound: a kernel that re-reads its inputs from DRAM sits further left. "
                "For measured bytes use `gemmlab roofline --from-capture`.",
                png=plots.png_bytes(plots.roofline_figure(placements, c, f"{view.gpu}: roofline at {M}x{N}x{K}")),
            )
        )
    return out


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
            where = ", ".join(f"{k}={v}" for k, v in best[0].items()) + f" at {best[1]:,.0f} GFLOP/s" if best else "none"
            figs.append(
                Plot(
                    key="sweep-" + _safe_key(g.title),
                    title=g.title,
                    caption="GFLOP/s from the median time of each correct configuration (a variant that failed "
                    f"its check is left blank); best (outlined): {where}.",
                    png=plots.png_bytes(plots.sweep_figure(g)),
                )
            )
        if view.sweep and not plots.sweep_grids(view.sweep):
            notes.append("Sweep heatmap omitted: no parameter varies across the sweep points.")
        if view.ceilings is None:
            notes.append(
                f"Roofline omitted: no ceilings for {view.gpu} (not in gemmlab's spec table and not measured; "
                "run `gemmlab ceilings --measure` on it)."
            )
        else:
            figs += _roofline_plots(view)
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
            r = next(x for x in view.results if x.name == row.name and x.shape == t.shape)
            cards.append(_card(row.name, row, view.diagnosis_for(r)))
    diag_source = ""
    if view.diagnoses:
        diag_source = str(view.diagnoses.get("source") or "")
        used = {id(view.diagnosis_for(r)) for r in view.results}
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
        overviews=overview_views(view.diagnoses),
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
PROFILE_COLUMNS = ("Profiler signal", "Main bottleneck")  # added when the run was profiled


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


def has_profile(table: "LadderTable") -> bool:
    return any(r.bottleneck or r.signal for r in table.rows)


def profile_cells(row: LadderRow) -> list[str]:
    return [row.signal or "–", row.bottleneck or "–"]

