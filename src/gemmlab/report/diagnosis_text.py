"""Rich rendering of diagnoses for the terminal: one panel and a few tables per kernel."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gemmlab.analysis.context import fmt
from gemmlab.analysis.evidence import Diagnosis, Evidence, Finding
from gemmlab.analysis.hot_lines import HotLines, finding_line
from gemmlab.analysis.overview import Overview
from gemmlab.report import hot_lines as hot_render

CONF_STYLE = {"high": "bold green", "medium": "bold yellow", "low": "bold red"}


def value_text(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return fmt(v, 4)
    return str(v)


def impact_text(f: Finding) -> str:
    if f.impact <= 0 and "not estimated" in f.impact_basis:
        return "n/e"
    return f"{100 * f.impact:.1f}%"


def evidence_table(evidence: Sequence[Evidence], title: str = "Evidence") -> Table:
    t = Table(title=title, title_justify="left", show_lines=False, expand=True)
    t.add_column("metric", overflow="fold", ratio=3)
    t.add_column("value", justify="right", ratio=2)
    t.add_column("unit", ratio=1)
    t.add_column("compared with", overflow="fold", ratio=3)
    t.add_column("why it matters", overflow="fold", ratio=5)
    for e in evidence:
        name = e.metric if e.source != "ncu-rule" else f"{e.metric} ({e.ncu_name})"
        t.add_row(name, value_text(e.value), e.unit, e.compared_with, e.why)
    return t


def findings_table(findings: Sequence[Finding]) -> Table:
    t = Table(title="Secondary findings (ranked by estimated impact; impact = share of run time)",
              title_justify="left", expand=True)
    t.add_column("#", justify="right")
    t.add_column("category", no_wrap=True)
    t.add_column("impact", justify="right")
    t.add_column("conf.")
    t.add_column("limit")
    t.add_column("summary", overflow="fold", ratio=1, min_width=30)
    for i, f in enumerate(findings, 1):
        t.add_row(str(i), f.category.value, impact_text(f), Text(f.confidence.value, CONF_STYLE[f.confidence.value]),
                  "yes" if f.at_limit else "no", f.summary)
    return t


def render_diagnosis(d: Diagnosis, console: Console, group_note: str = "", hot: Optional[HotLines] = None) -> None:
    """One kernel's card; with ``hot`` (its hot source lines, from an .ncu-rep), the line that carries the
    primary finding's evidence in the panel and the ranked lines after the card."""
    p = d.primary
    if group_note:
        console.print(Text(group_note, style="dim"))
    head = Text()
    head.append(f"#{d.kernel_id} {d.name}", style="bold")
    head.append("  →  ")
    head.append(p.category.value, style="bold cyan")
    head.append("  ")
    head.append(f"{p.confidence.value} confidence", style=CONF_STYLE[p.confidence.value])
    lines = [Text(p.summary)]
    where = finding_line(d, hot) if hot is not None else None
    if where:
        lines.append(Text(f"Source line: {where}"))
    imp = f"Impact ≈ {impact_text(p)} of run time ({p.impact_basis})" if impact_text(p) != "n/e" \
        else f"Impact: {p.impact_basis}"
    lines.append(Text(f"{imp}. "
                      f"At limit: {'yes — the unit is near peak doing necessary work; access-pattern fixes will not help' if p.at_limit else 'no'}."))
    if p.ncu_estimate is not None:
        lines.append(Text(f"Nsight Compute's own estimate ({p.ncu_rule}): {fmt(p.ncu_estimate)}% speedup."))
    lines.append(Text(f"Speed of Light: {d.triage.get('summary', '')}", style="dim"))
    if d.ladder is not None:
        lines.append(Text(f"Next rung of the GEMM ladder: {d.ladder.rung} — {d.ladder.action}", style="bold"))
    console.print(Panel(Group(*lines), title=head, title_align="left"))
    if p.evidence:
        console.print(evidence_table(p.evidence, "Evidence for the primary finding"))
    if d.findings:
        console.print(findings_table(d.findings))
    if d.missing_evidence:
        t = Table(title="Missing evidence (would confirm or change the verdict)", title_justify="left", expand=True)
        t.add_column("metric", overflow="fold", ratio=2)
        t.add_column("ncu name", overflow="fold", ratio=4)
        t.add_column("section", overflow="fold", ratio=2)
        t.add_column("why", overflow="fold", ratio=4, min_width=20)
        for m in d.missing_evidence:
            t.add_row(m.metric, m.ncu_names[0], m.section or "(--metrics)", m.why)
        console.print(t)
    label = "Collect it with" if d.collect_purpose == "missing-evidence" else "Nothing is missing; re-measure after a change with"
    console.print(Text(f"{label}:", style="bold"))
    console.print(Text("  " + d.collect_command), soft_wrap=True)
    if d.collect_profile:
        console.print(Text("  or, the same collection the easy way:", style="dim"))
        console.print(Text("  " + d.collect_profile), soft_wrap=True)
    console.print(Text(f"  ({d.collect_note})", style="dim"))
    if d.recommendations:
        console.print(Text("Recommendations:", style="bold"))
        for i, r in enumerate(d.recommendations, 1):
            console.print(f"  {i}. {r}", highlight=False, markup=False)
    if hot is not None:
        note = hot_render.note(hot)
        if note:
            console.print(Text(note, style="dim"), soft_wrap=True)  # one line, however wide
        else:
            console.print(hot_render.rich_table(hot), crop=False)
    console.print()


def render(diagnoses: Sequence[Diagnosis], source: str, console: Console, note: str = "",
           overview: Optional[Overview] = None, top: int = 0, hot: Optional[Mapping[int, HotLines]] = None) -> None:
    """Every diagnosis in order; with an ``overview``, the overview first and then the cards of its top
    ``top`` groups (``top <= 0``: every group), one card per group (its longest launch). ``hot``: the hot
    source lines of launches by id (an .ncu-rep's), shown in their cards."""
    hot = hot or {}
    title = f"gemmlab analyze — {source}"
    console.print(Text(title, style="bold underline"))
    if note:
        console.print(Text(note, style="italic"))
    console.print(Text(f"{len(diagnoses)} kernel launch(es), each diagnosed on its own.", style="dim"))
    console.print()
    if overview is None:
        for d in diagnoses:
            render_diagnosis(d, console, hot=hot.get(d.kernel_id))
        return
    from gemmlab.report import overview as ov_render

    for part in ov_render.rich_tables(overview, top, console.width):
        console.print(part)
    console.print()
    for g in overview.top(top):
        render_diagnosis(g.representative, console, ov_render.group_note(g), hot.get(g.representative.kernel_id))
    rest = ov_render.rest_note(overview, top)
    if rest:
        console.print(Text(rest, style="italic"))
