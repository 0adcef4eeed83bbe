"""What a report says, independent of how it is written out: sections, tables, figures, one card per kernel.

``build(views)`` turns one ``RunView`` (or several runs of one GPU) into a ``Report``: one section per
run (``gemmlab.report.section``), so an SGEMM run and a BF16 run never share a table, a chart or a
"speedup vs previous" chain. ``html.render`` and ``markdown.render`` only format it, so the two
outputs always carry the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from gemmlab.errors import InputError
from gemmlab.report.model import RunView
from gemmlab.report.parts import (  # noqa: F401  (re-exported: the writers and tests read them here)
    CANDIDATE_COLUMNS,
    LADDER_COLUMNS,
    MATTERED_COLUMNS,
    PROFILE_COLUMNS,
    LadderRow,
    LadderTable,
    Plot,
    Section,
    fmt_check,
    fmt_gflops,
    fmt_ms,
    fmt_pct,
    fmt_speedup,
    fmt_value,
)
from gemmlab.report.section import build_section, candidate_rows, card_anchor, card_stats, envs, section_keys

# env keys shown in the page header (machine facts; each run's peak and cuBLAS are in its section),
# with the names different collectors use for them
HEADER_KEYS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Driver", ("driver", "driver_version")),
    ("CUDA runtime", ("cuda_runtime", "cuda", "cuda_version")),
    ("Compute capability", ("compute_capability", "cc")),
    ("SMs", ("sm_count",)),
    ("Max SM clock (MHz)", ("sm_clock_max_mhz", "sm_clock_attr_mhz")),
    ("CuPy", ("cupy",)),
)


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
    anchor: str = ""  # the card's id (the ladder table links to it)
    stats: str = ""  # the measurement in one line ("" when not measured in the run)
    candidates: tuple[tuple[str, ...], ...] = ()  # the BF16 reference's timed candidates (CANDIDATE_COLUMNS)


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
            kernel = str(g.get("identity") or g.get("name") or "?")  # the short identity, where the JSON has it
            rows.append((str(g.get("rank", "")), kernel, str(g.get("launches", "")),
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
    header: tuple[tuple[str, str], ...]  # (label, value) for the page header: the machine
    source: str
    data_note: str
    sections: tuple[Section, ...]  # one per run: its ladder
    cards: tuple[Card, ...]
    envs: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (heading, rows) per run
    diagnosis_source: str = ""
    overviews: tuple[OverviewView, ...] = ()  # where each diagnosed program's GPU time goes

    @property
    def ladders(self) -> tuple[LadderTable, ...]:
        return tuple(t for s in self.sections for t in s.ladders)

    @property
    def plots(self) -> tuple[Plot, ...]:
        return tuple(p for s in self.sections for p in s.plots)

    @property
    def notes(self) -> tuple[str, ...]:
        out: list[str] = []
        for s in self.sections:
            out += [n for n in s.notes if n not in out]
        return tuple(out)


def _env_value(env: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for k in keys:
        if env.get(k) not in (None, ""):
            return fmt_value(env[k])
    return None


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
                value=fmt_value(e.get("value")),
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
        confidence=fmt_value(d.get("confidence")),
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
        return "; ".join(f"{k}: {v:.4g}" if isinstance(v, float) else f"{k}: {v}" for k, v in item.items())
    return str(item)


def _card(name: str, row: LadderRow | None, diag: Mapping[str, Any] | None, *, anchor: str = "", stats: str = "",
          candidates: tuple[tuple[str, ...], ...] = ()) -> Card:
    anchor = anchor or card_anchor("", name)
    if diag is None:
        return Card(name, row, None, (), (), "", (), diagnosed=False, anchor=anchor, stats=stats, candidates=candidates)
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
        anchor=anchor,
        stats=stats,
        candidates=candidates,
    )


def _cards(views: Sequence[RunView], sections: Sequence[Section]) -> list[Card]:
    """One card per kernel of each run (a section's cards follow its order), then any diagnosed
    kernel no run contains."""
    cards = []
    counts: dict[str, int] = {}
    for sec in sections:
        for name in {row.name for t in sec.ladders for row in t.rows}:
            counts[name] = counts.get(name, 0) + 1
    for view, sec in zip(views, sections):
        named = set()
        ladder = view.ladder_kind
        where = sec.title + (f", run {view.run_id}" if view.run_id else "")
        for t in sec.ladders:
            for row in t.rows:
                if row.name in named:
                    continue
                named.add(row.name)
                r = next(x for x in view.results if x.name == row.name and x.shape == t.shape)
                title = row.name if counts[row.name] == 1 else f"{row.name} ({where})"  # "cublas" in two sections
                cards.append(_card(title, row, view.diagnosis_for(r), anchor=row.anchor, stats=card_stats(row, ladder),
                                   candidates=candidate_rows(r) if r.reference else ()))
    used = {id(v.diagnosis_for(r)) for v in views for r in v.results}
    seen = set()
    for view in views:
        for k in (view.diagnoses or {}).get("kernels", []):
            if id(k) not in used and id(k) not in seen:
                seen.add(id(k))
                cards.append(_card(str(k.get("name") or k.get("id") or "?"), None, k))
    return cards


def build(views: RunView | Sequence[RunView], with_plots: bool = True) -> Report:
    """Everything the report shows, computed once: one section per run, in the order given."""
    views = [views] if isinstance(views, RunView) else list(views)
    if not views:
        raise InputError("report: no run to show")
    gpus = sorted({v.gpu for v in views})
    if len(gpus) > 1:
        raise InputError(f"report: the runs are from {' and '.join(gpus)}; a report shows one GPU "
                         "(put two GPUs side by side with `gemmlab compare`)")
    first = views[0]
    header = [("GPU", first.gpu)]
    for label, keys in HEADER_KEYS:
        v = _env_value(first.env, keys)
        if v is not None:
            header.append((label, v))
    sections = [build_section(v, k, with_plots) for v, k in zip(views, section_keys(views))]
    diag_source = "; ".join(dict.fromkeys(str(v.diagnoses.get("source") or "") for v in views if v.diagnoses)) or ""
    overviews: list[OverviewView] = []
    for v in views:
        for ov in overview_views(v.diagnoses):
            if ov not in overviews:
                overviews.append(ov)
    return Report(
        title=f"gemmlab report: {first.gpu}",
        gpu=first.gpu,
        header=tuple(header),
        source="; ".join(dict.fromkeys(v.source for v in views if v.source)),
        data_note=" ".join(dict.fromkeys(v.data_note for v in views if v.data_note)),
        sections=tuple(sections),
        cards=tuple(_cards(views, sections)),
        envs=envs(views),
        diagnosis_source=diag_source,
        overviews=tuple(overviews),
    )
