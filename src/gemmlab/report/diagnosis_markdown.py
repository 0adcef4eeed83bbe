"""Markdown rendering of diagnoses (``gemmlab analyze --markdown``), e.g. for a PR comment or a report."""

from __future__ import annotations

from typing import Optional, Sequence

from gemmlab.analysis.evidence import Diagnosis, Evidence, Finding
from gemmlab.analysis.kernel_names import identity
from gemmlab.analysis.overview import Group, Overview, dim3_text
from gemmlab.report.commands import Commands
from gemmlab.report.diagnosis_text import impact_text, value_text


def cell(text: object) -> str:
    """A table cell: pipes escaped, newlines flattened."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _evidence(evidence: Sequence[Evidence]) -> list[str]:
    out = ["| metric | value | unit | compared with | why it matters |", "| --- | ---: | --- | --- | --- |"]
    for e in evidence:
        name = e.metric if e.source != "ncu-rule" else f"{e.metric} ({e.ncu_name})"
        out.append(f"| `{cell(name)}` | {cell(value_text(e.value))} | {cell(e.unit)} | {cell(e.compared_with)} | "
                   f"{cell(e.why)} |")
    return out


def _findings(findings: Sequence[Finding]) -> list[str]:
    out = ["| # | category | impact | confidence | at limit | summary |", "| ---: | --- | ---: | --- | --- | --- |"]
    for i, f in enumerate(findings, 1):
        out.append(f"| {i} | `{f.category.value}` | {impact_text(f)} | {f.confidence.value} | "
                   f"{'yes' if f.at_limit else 'no'} | {cell(f.summary)} |")
    return out


def render_diagnosis(d: Diagnosis, group_note: str = "", commands: Optional[Commands] = None, verbose: bool = False,
                     group: Optional[Group] = None) -> str:
    """One card; its kernel named by its short identity, the function name (and grid and block) below."""
    p = d.primary
    commands = commands if commands is not None else Commands()
    short = identity(d.demangled, d.name)
    lines = [f"## #{d.kernel_id} `{short}` — `{p.category.value}` ({p.confidence.value} confidence)", ""]
    where = [f"function `{d.name}`"] if d.name and d.name != short else []
    if group is not None:
        where.append(f"grid {dim3_text(group.grid)}, block {dim3_text(group.block)}")
    lines += [", ".join(where), ""] if where else []
    lines += [f"_{group_note}_", ""] if group_note else []
    lines += [p.summary, "",
             (f"- **Impact:** ≈ {impact_text(p)} of run time ({p.impact_basis})" if impact_text(p) != "n/e"
              else f"- **Impact:** {p.impact_basis}"),
             f"- **At limit:** {'yes' if p.at_limit else 'no'}",
             f"- **Speed of Light:** {d.triage.get('summary', '')}"]
    if p.ncu_estimate is not None:
        lines.append(f"- **Nsight Compute's estimate ({p.ncu_rule}):** {p.ncu_estimate:.1f}% speedup")
    if d.ladder is not None:
        lines.append(f"- **Next rung (GEMM ladder):** `{d.ladder.rung}` — {d.ladder.action}")
    lines.append("")
    if p.evidence:
        lines += ["### Evidence", ""] + _evidence(p.evidence) + [""]
    if d.findings:
        lines += ["### Secondary findings (ranked by estimated impact)", ""] + _findings(d.findings) + [""]
    lines += ["### Missing evidence", ""]
    if d.missing_evidence:
        lines += ["| metric | ncu name | section | why |", "| --- | --- | --- | --- |"]
        for m in d.missing_evidence:
            lines.append(f"| `{m.metric}` | `{m.ncu_names[0]}` | {m.section or '(--metrics)'} | {cell(m.why)} |")
    else:
        lines.append("None: every metric the rules use is present.")
    label = "Collect it with" if d.collect_purpose == "missing-evidence" else "Re-measure after a change with"
    lines += ["", f"{label}:", "", "```bash"]
    for text, line in commands.card(d, verbose):
        lines += ([f"# {text}"] if text else []) + [line]
    lines += ["```", "", f"_{d.collect_note}_", ""]
    if d.recommendations:
        lines += ["### Recommendations", ""] + [f"{i}. {r}" for i, r in enumerate(d.recommendations, 1)] + [""]
    return "\n".join(lines)


def footer(commands: Commands, verbose: bool = False) -> str:
    """The long ncu collection, once per report ("" when no card needs it)."""
    lines = commands.footer(verbose)
    if not lines:
        return ""
    out = ["## Collection commands", ""]
    for text, line in lines:
        out += [text, "", "```bash", line, "```", ""]
    return "\n".join(out)


def render(diagnoses: Sequence[Diagnosis], source: str, note: str = "", overview: Optional[Overview] = None,
           top: int = 0, verbose: bool = False) -> str:
    """Every diagnosis in order; with an ``overview``, the overview first and then one card for each of
    its top ``top`` groups (``top <= 0``: every group). The long ncu metric list comes once, at the end."""
    commands = Commands()
    head = [f"# gemmlab analyze — `{source}`", ""]
    if note:
        head += [f"_{note}_", ""]
    head += [f"{len(diagnoses)} kernel launch(es), each diagnosed on its own.", "", ""]
    if overview is None:
        cards = [render_diagnosis(d, commands=commands, verbose=verbose) for d in diagnoses]
        tail = footer(commands, verbose)
        return "\n".join(head) + "\n".join(cards) + ("\n" + tail if tail else "")
    from gemmlab.report import overview as ov_render

    cards = [render_diagnosis(g.representative, ov_render.group_note(g), commands, verbose, g)
             for g in overview.top(top)]
    rest = ov_render.rest_note(overview, top)
    tail = footer(commands, verbose)
    return ("\n".join(head) + ov_render.markdown(overview, top) + "\n" + "\n".join(cards)
            + (f"\n_{rest}_\n" if rest else "") + ("\n" + tail if tail else ""))
