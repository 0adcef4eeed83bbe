"""Rich rendering of diagnoses for the terminal: one panel and a few tables per kernel.

Laid out for the console's width without cutting anything a reader copies or compares: numbers,
units, metric, section and kernel names are never folded (``report.fit``: a table that cannot hold
them whole turns into blocks), card titles and commands are whole lines, and prose wraps at spaces.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from gemmlab.analysis.context import fmt
from gemmlab.analysis.evidence import Diagnosis, Evidence, Finding
from gemmlab.analysis.hot_lines import HotLines, finding_line
from gemmlab.analysis.kernel_names import identity
from gemmlab.analysis.overview import Group as OvGroup
from gemmlab.analysis.overview import Overview, dim3_text
from gemmlab.report import fit
from gemmlab.report import hot_lines as hot_render
from gemmlab.report.commands import Commands

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


EVIDENCE_COLUMNS = (fit.Col("metric", fit.NAME), fit.Col("value", fit.NUMBER, "right"), fit.Col("unit", fit.NAME),
                    fit.Col("compared with", fit.PROSE, weight=3), fit.Col("why it matters", fit.PROSE, weight=5))
FINDING_COLUMNS = (fit.Col("#", fit.NUMBER, "right"), fit.Col("category", fit.NAME),
                   fit.Col("impact", fit.NUMBER, "right"), fit.Col("conf.", fit.LABEL), fit.Col("limit", fit.LABEL),
                   fit.Col("summary", fit.PROSE))
MISSING_COLUMNS = (fit.Col("metric", fit.NAME), fit.Col("ncu name", fit.NAME), fit.Col("section", fit.NAME),
                   fit.Col("why", fit.PROSE))


def evidence_rows(evidence: Sequence[Evidence]) -> list[tuple[str, ...]]:
    return [(e.metric if e.source != "ncu-rule" else f"{e.metric} ({e.ncu_name})", value_text(e.value), e.unit,
             e.compared_with, e.why) for e in evidence]


MERGED_EVIDENCE = EVIDENCE_COLUMNS[:3] + (fit.Col("compared with · why it matters", fit.PROSE),)


def _block(title: str, cols, body, width: int, min_prose: int = fit.MIN_PROSE) -> list:
    """A table that fits ``width`` (numbers, units and names whole), else the rows as blocks."""
    t = fit.table(cols, body, width, title, min_prose=min_prose)
    if t is not None:
        return [t]
    return [Text(title, style="table.title")] + fit.stacked(cols, body, width)


def evidence_table(evidence: Sequence[Evidence], title: str = "Evidence", width: int = 120) -> list:
    """Five columns where the prose gets room; on a narrow console "compared with" and "why it matters"
    share one column; narrower still, each row is a block."""
    body = evidence_rows(evidence)
    t = fit.table(EVIDENCE_COLUMNS, body, width, title, min_prose=24)
    if t is not None:
        return [t]
    merged = [r[:3] + ("; ".join(x for x in (r[3] if r[3] not in ("", "—") else "", r[4]) if x),) for r in body]
    return _block(title, MERGED_EVIDENCE, merged, width, min_prose=24)


def findings_table(findings: Sequence[Finding], width: int = 120) -> list:
    body = [(str(i), f.category.value, impact_text(f), f.confidence.value, "yes" if f.at_limit else "no", f.summary)
            for i, f in enumerate(findings, 1)]
    return _block("Secondary findings (ranked by estimated impact; impact = share of run time)", FINDING_COLUMNS,
                  body, width)


def missing_table(d: Diagnosis, width: int = 120) -> list:
    body = [(m.metric, m.ncu_names[0], m.section or "(--metrics)", m.why) for m in d.missing_evidence]
    return _block("Missing evidence (would confirm or change the verdict)", MISSING_COLUMNS, body, width)


def _print(console: Console, parts: Sequence) -> None:
    for p in parts:
        if isinstance(p, Text):
            console.print(p, soft_wrap=True)  # a line of names: whole, however wide
        else:
            console.print(p)


def _prose(console: Console, text: str, style: str = "", indent: int = 0) -> None:
    """A paragraph wrapped at spaces (a long word after ``_``, ``.`` or ``/``), never cut."""
    for line in fit.wrap(text, max(20, console.width - indent)):
        console.print(Text(" " * indent + line, style=style), soft_wrap=True)


def title_line(d: Diagnosis) -> Text:
    """``── #55 scatter_gather: reduce_add  →  atomic_contention  medium confidence``: never cut."""
    p = d.primary
    head = Text("── ")
    head.append(f"#{d.kernel_id} {identity(d.demangled, d.name)}", style="bold")
    head.append("  →  ")
    head.append(p.category.value, style="bold cyan")
    head.append("  ")
    head.append(f"{p.confidence.value} confidence", style=CONF_STYLE[p.confidence.value])
    return head


def render_diagnosis(d: Diagnosis, console: Console, group_note: str = "", hot: Optional[HotLines] = None,
                     commands: Optional[Commands] = None, verbose: bool = False,
                     group: Optional[OvGroup] = None) -> None:
    """One kernel's card; with ``hot`` (its hot source lines, from an .ncu-rep), the line that carries the
    primary finding's evidence in the panel and the ranked lines after the card. ``commands`` collects the
    report's long metric lists (printed once by ``render``); ``verbose``: every card's full ncu command."""
    p = d.primary
    commands = commands if commands is not None else Commands()
    width = console.width
    console.print(title_line(d), soft_wrap=True)
    where_from = [d.name] if d.name and d.name != identity(d.demangled, d.name) else []
    if group is not None:
        where_from.append(f"grid {dim3_text(group.grid)}, block {dim3_text(group.block)}")
    if where_from:  # the function name as ncu prints it, whole; grid and block beside it when they fit
        joined = "   " + " · ".join(where_from)
        for line in ([joined] if len(joined) <= width else ["   " + w for w in where_from]):
            console.print(Text(line, style="dim"), soft_wrap=True)
    if group_note:
        _prose(console, group_note, "dim")
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
    console.print(Panel(Group(*lines)))
    if p.evidence:
        _print(console, evidence_table(p.evidence, "Evidence for the primary finding", width))
    if d.findings:
        _print(console, findings_table(d.findings, width))
    if d.missing_evidence:
        _print(console, missing_table(d, width))
    label = "Collect it with" if d.collect_purpose == "missing-evidence" else "Nothing is missing; re-measure after a change with"
    console.print(Text(f"{label}:", style="bold"))
    for text, line in commands.card(d, verbose):
        if text:
            console.print(Text("  " + text, style="dim"))
        console.print(Text("  " + line), soft_wrap=True)  # one line, never broken: copy it whole
    _prose(console, f"({d.collect_note})", "dim", indent=2)
    if d.recommendations:
        console.print(Text("Recommendations:", style="bold"))
        for i, r in enumerate(d.recommendations, 1):
            _prose(console, f"{i}. {r}", indent=2)
    if hot is not None:
        note = hot_render.note(hot)
        if note:
            _prose(console, note, "dim")
        else:
            console.print(hot_render.rich_table(hot), crop=False)
    console.print()


def render_footer(commands: Commands, console: Console, verbose: bool = False) -> None:
    """The long ncu collection, once per report (see ``Commands``)."""
    lines = commands.footer(verbose)
    if not lines:
        return
    console.print(Text("Collection commands (the long metric list, once)", style="bold underline"))
    for text, line in lines:
        _prose(console, text, "dim")
        console.print(Text("  " + line), soft_wrap=True)
    console.print()


def render(diagnoses: Sequence[Diagnosis], source: str, console: Console, note: str = "",
           overview: Optional[Overview] = None, top: int = 0, hot: Optional[Mapping[int, HotLines]] = None,
           verbose: bool = False) -> None:
    """Every diagnosis in order; with an ``overview``, the overview first and then the cards of its top
    ``top`` groups (``top <= 0``: every group), one card per group (its longest launch). ``hot``: the hot
    source lines of launches by id (an .ncu-rep's), shown in their cards. The long ncu metric list is
    printed once, after the cards (every card's with ``verbose``)."""
    hot = hot or {}
    commands = Commands()
    title = f"gemmlab analyze — {source}"
    console.print(Text(title, style="bold underline"), soft_wrap=True)
    if note:
        _prose(console, note, "italic")
    console.print(Text(f"{len(diagnoses)} kernel launch(es), each diagnosed on its own.", style="dim"))
    console.print()
    if overview is None:
        for d in diagnoses:
            render_diagnosis(d, console, hot=hot.get(d.kernel_id), commands=commands, verbose=verbose)
        render_footer(commands, console, verbose)
        return
    from gemmlab.report import overview as ov_render

    for part in ov_render.rich_tables(overview, top, console.width):
        console.print(part, soft_wrap=isinstance(part, Text))
    console.print()
    for g in overview.top(top):
        render_diagnosis(g.representative, console, ov_render.group_note(g), hot.get(g.representative.kernel_id),
                         commands, verbose, g)
    rest = ov_render.rest_note(overview, top)
    if rest:
        _prose(console, rest, "italic")
        console.print()
    render_footer(commands, console, verbose)
