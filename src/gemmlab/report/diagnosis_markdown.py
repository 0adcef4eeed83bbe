"""Markdown rendering of diagnoses (``gemmlab analyze --markdown``), e.g. for a PR comment or a report."""

from __future__ import annotations

from typing import Optional, Sequence

from gemmlab.analysis.evidence import Diagnosis, Evidence, Finding
from gemmlab.analysis.overview import Overview
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


def render_diagnosis(d: Diagnosis, group_note: str = "") -> str:
    p = d.primary
    lines = [f"## #{d.kernel_id} `{d.name}` — `{p.category.value}` ({p.confidence.value} confidence)", ""]
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
    lines += ["", f"{label}:", "", "```bash", d.collect_command]
    lines += ["# or, the same collection the easy way:", d.collect_profile] if d.collect_profile else []
    lines += ["```", "", f"_{d.collect_note}_", ""]
    if d.recommendations:
        lines += ["### Recommendations", ""] + [f"{i}. {r}" for i, r in enumerate(d.recommendations, 1)] + [""]
    return "\n".join(lines)


def render(diagnoses: Sequence[Diagnosis], source: str, note: str = "", overview: Optional[Overview] = None,
           top: int = 0) -> str:
    """Every diagnosis in order; with an ``overview``, the overview first and then one card for each of
    its top ``top`` groups (``top <= 0``: every group)."""
    head = [f"# gemmlab analyze — `{source}`", ""]
    if note:
        head += [f"_{note}_", ""]
    head += [f"{len(diagnoses)} kernel launch(es), each diagnosed on its own.", "", ""]
    if overview is None:
        return "\n".join(head) + "\n".join(render_diagnosis(d) for d in diagnoses)
    from gemmlab.report import overview as ov_render

    cards = [render_diagnosis(g.representative, ov_render.group_note(g)) for g in overview.top(top)]
    rest = ov_render.rest_note(overview, top)
    return ("\n".join(head) + ov_render.markdown(overview, top) + "\n" + "\n".join(cards)
            + (f"\n_{rest}_\n" if rest else ""))
