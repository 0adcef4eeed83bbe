"""The report as one self-contained HTML page: inline CSS, plots as data URIs, no scripts, no network.

Every piece of text that came from a run, a diagnosis or the environment goes through
``html.escape``; nothing else is interpolated into markup.
"""

from __future__ import annotations

import html
from datetime import datetime, timezone

from gemmlab import __version__
from gemmlab.report import content, plots
from gemmlab.report.content import CANDIDATE_COLUMNS, MATTERED_COLUMNS, Card, Finding, Report, Section

CSS = """
:root { --ink:#1d2430; --muted:#5b6472; --line:#d9dee5; --accent:#3b6ea8; --bad:#c0392b; --warn:#fff4d6; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
       color:var(--ink); background:#f6f7f9; }
main { max-width:1120px; margin:0 auto; padding:24px 28px 48px; background:#fff; }
h1 { font-size:22px; margin:0 0 8px; } h2 { font-size:18px; margin:32px 0 10px; border-bottom:1px solid var(--line);
     padding-bottom:4px; } h3 { font-size:15px; margin:0 0 6px; }
.meta { display:grid; grid-template-columns:max-content 1fr; gap:2px 16px; margin:8px 0 0; }
.meta dt { color:var(--muted); } .meta dd { margin:0; font-family:ui-monospace,Menlo,Consolas,monospace;
     font-size:13px; word-break:break-all; }
.banner { background:var(--warn); border:1px solid #e6c66a; padding:8px 12px; margin:14px 0; border-radius:4px; }
.source { color:var(--muted); font-size:12.5px; margin:6px 0 0; }
table { border-collapse:collapse; margin:6px 0 10px; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:4px 10px; text-align:left; vertical-align:top; }
th { background:#f0f2f5; font-weight:600; }
td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
tr.reference td { color:var(--muted); font-style:italic; }
tr.wrong td { color:var(--bad); }
figure { margin:16px 0; } figure img { max-width:100%; height:auto; border:1px solid var(--line); }
figcaption { color:var(--muted); font-size:12.5px; margin-top:4px; }
.notes li { color:var(--muted); }
.cards { display:grid; grid-template-columns:1fr; gap:14px; margin-bottom:14px; }
.cards.plain { grid-template-columns:repeat(auto-fill,minmax(340px,1fr)); gap:10px; }
.cards.plain .card { padding:8px 12px; } .cards.plain .card p { margin:2px 0; }
.card table { width:100%; table-layout:fixed; font-size:12.5px; } .card td, .card th { overflow-wrap:anywhere; }
.card th:nth-child(1) { width:30%; } .card th:nth-child(2) { width:13%; } .card th:nth-child(3) { width:9%; }
.card th:nth-child(4) { width:20%; }
.ncu { display:block; color:var(--muted); font-size:11px; }
.card { border:1px solid var(--line); border-radius:6px; padding:12px 14px; background:#fcfcfd; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600;
         background:#e4ecf6; color:var(--accent); margin-right:6px; }
.badge.limit { background:#fde8e6; color:var(--bad); }
.conf { color:var(--muted); font-size:12.5px; }
.stats { color:var(--muted); font-size:12.5px; margin:2px 0 8px; }
pre { background:#f0f2f5; padding:8px 10px; overflow-x:auto; font-size:12px; border-radius:4px; white-space:pre-wrap;
      word-break:break-all; }
details summary { cursor:pointer; color:var(--muted); }
section.run > h3 { margin-top:18px; }
footer { color:var(--muted); font-size:12px; margin-top:36px; border-top:1px solid var(--line); padding-top:8px; }
"""


def e(text: object) -> str:
    """Escape for HTML text and attribute values."""
    return html.escape(str(text), quote=True)


def _ladder_tables(sec: Section) -> list[str]:
    out = []
    for t in sec.ladders:
        out.append(f"<h3>{e(t.title)}</h3>")
        out.append('<table class="ladder"><thead><tr>')
        out += [f"<th>{e(c)}</th>" for c in t.columns]
        out.append("</tr></thead><tbody>")
        for row in t.rows:
            cls = "reference" if row.reference else ("wrong" if row.correct is False else "")
            cells = t.cells(row)
            tds = [f'<td><a href="#{e(row.anchor)}">{e(cells[0])}</a></td>']
            tds += [f'<td class="num">{e(c)}</td>' if i in t.numeric else f"<td>{e(c)}</td>"
                    for i, c in enumerate(cells[1:], start=1)]
            out.append(f'<tr class="{cls}">' + "".join(tds) + "</tr>")
        out.append("</tbody></table>")
        if t.reference_note:
            out.append(f'<p class="source">cuBLAS row: {e(t.reference_note)}</p>')
    out.append(f'<p class="source">{e(sec.caption)}</p>')
    if sec.mattered:
        out.append("<h3>What actually mattered</h3>")
        out += _table(MATTERED_COLUMNS, sec.mattered, "mattered")
    return out


def _section(sec: Section) -> list[str]:
    """One run's ladder: its heading and lines, tables, ranking, then its figures and notes."""
    sid = "ladder" + (f"-{sec.key}" if sec.key else "")
    out = [f'<section id="{e(sid)}" class="run"><h2>{e(sec.title)}</h2><dl class="meta">']
    out += [f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in sec.meta]
    out.append("</dl>")
    out += _ladder_tables(sec)
    out.append(f'<div id="plots{"-" + e(sec.key) if sec.key else ""}" class="plots">')
    for p in sec.plots:
        out.append(
            f'<figure id="plot-{e(p.key)}"><img src="{plots.data_uri(p.png)}" alt="{e(p.title)}">'
            f"<figcaption><strong>{e(p.title)}.</strong> {e(p.caption)}</figcaption></figure>"
        )
    if sec.notes:
        out.append('<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in sec.notes) + "</ul>")
    out.append("</div></section>")
    return out


def _evidence(f: Finding) -> list[str]:
    if not f.evidence:
        return ['<p class="conf">No evidence listed.</p>']
    out = ['<table class="evidence"><thead><tr><th>Metric</th><th>Value</th><th>Unit</th><th>Compared with</th>'
           "<th>Why it matters</th></tr></thead><tbody>"]
    for ev in f.evidence:
        ncu = f'<span class="ncu">{e(ev.ncu_name)}</span>' if ev.ncu_name else ""
        out.append(
            f'<tr><td><code>{e(ev.metric)}</code>{ncu}</td><td class="num">{e(ev.value)}</td><td>{e(ev.unit)}</td>'
            f"<td>{e(ev.compared_with)}</td><td>{e(ev.why)}</td></tr>"
        )
    out.append("</tbody></table>")
    return out


def _finding_head(f: Finding) -> str:
    limit = '<span class="badge limit">at limit</span>' if f.at_limit else ""
    impact = f" · {e(f.impact)}" if f.impact else ""
    return (f'<span class="badge">{e(f.category)}</span>{limit}<span class="conf">confidence: {e(f.confidence)}'
            f"{impact}</span>")


def _card(c: Card) -> list[str]:
    out = [f'<article class="card" id="{e(c.anchor)}">', f"<h3>{e(c.name)}</h3>"]
    if c.result is not None:
        out.append(f'<p class="stats">{e(c.stats)}</p>')
    else:
        out.append('<p class="stats">Diagnosed but not measured in this run.</p>')
    if c.candidates:
        out.append(f"<details><summary>cuBLAS candidates timed ({len(c.candidates)}); the fastest is the "
                   "reference</summary>")
        out += _table(CANDIDATE_COLUMNS, c.candidates, "candidates")
        out.append("</details>")
    if not c.diagnosed:
        out.append('<p class="conf">No diagnosis attached.</p>')
        out.append("</article>")
        return out
    if c.primary is not None:
        out.append(f"<p>{_finding_head(c.primary)}</p>")
        if c.primary.summary:
            out.append(f"<p>{e(c.primary.summary)}</p>")
        out += _evidence(c.primary)
    else:
        out.append('<p class="conf">The analyzer named no primary bottleneck.</p>')
    if c.findings:
        out.append(f"<details><summary>Other findings ({len(c.findings)})</summary>")
        for f in c.findings:
            out.append(f"<p>{_finding_head(f)} {e(f.summary)}</p>")
            out += _evidence(f)
        out.append("</details>")
    if c.missing:
        out.append("<p><strong>Missing evidence</strong> (lowers confidence):</p><ul>")
        out += [f"<li><code>{e(m)}</code>: {e(why)}</li>" for m, why in c.missing]
        out.append("</ul>")
    if c.recommendations:
        out.append("<p><strong>What to try</strong></p><ul>")
        out += [f"<li>{e(t)}</li>" for t in c.recommendations]
        out.append("</ul>")
    if c.collect_command:
        out.append(f"<p><strong>Collect the evidence</strong></p><pre><code>{e(c.collect_command)}</code></pre>")
        if c.collect_profile:
            out.append(f"<p>or, the same collection the easy way:</p><pre><code>{e(c.collect_profile)}</code></pre>")
        if c.collect_note:
            out.append(f'<p class="conf">{e(c.collect_note)}</p>')
    if c.diagnosis_source:
        out.append(f'<p class="conf">Diagnosed from {e(c.diagnosis_source)}.</p>')
    out.append("</article>")
    return out


def _table(columns, rows, cls: str) -> list[str]:
    out = [f'<table class="{cls}"><thead><tr>' + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr></thead><tbody>"]
    out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>" for r in rows]
    out.append("</tbody></table>")
    return out


def _overviews(rep: Report) -> list[str]:
    """Where each diagnosed program's GPU time goes: its kernel groups ranked by time, and by category."""
    out = ['<section id="overview"><h2>Where the GPU time goes</h2>']
    for ov in rep.overviews:
        out.append(f'<p class="source">{e(ov.source)}</p><p class="summary">{e(ov.summary)}</p>')
        out += _table(content.OVERVIEW_COLUMNS, ov.rows, "overview")
        if ov.more:
            out.append(f'<p class="conf">{ov.more} more group(s) in <code>gemmlab analyze --all</code> and the JSON.</p>')
        out += _table(content.CATEGORY_COLUMNS, ov.categories, "by-category")
    out.append("</section>")
    return out


def render(rep: Report, generated_utc: str | None = None) -> str:
    """The page as one string."""
    when = generated_utc or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(rep.title)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        f'<header><h1>{e(rep.title)}</h1><dl class="meta">',
    ]
    out += [f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rep.header]
    out.append("</dl>")
    if rep.data_note:
        out.append(f'<div class="banner" id="data-note"><strong>Data:</strong> {e(rep.data_note)}</div>')
    out.append(f'<p class="source" id="data-source">Data source: {e(rep.source or "not recorded")}')
    if rep.diagnosis_source:
        out.append(f" · diagnoses from {e(rep.diagnosis_source)}")
    out.append("</p></header>")

    for sec in rep.sections:
        out += _section(sec)

    if rep.overviews:
        out += _overviews(rep)

    out.append('<section id="kernels"><h2>Kernels</h2>')
    n_plain = sum(1 for c in rep.cards if not c.diagnosed)
    if n_plain:
        out.append(
            f'<p class="conf">{n_plain} of {len(rep.cards)} kernels have no diagnosis: profile them '
            "(<code>gemmlab profile RUNG</code> or <code>gemmlab ladder --profile</code>) and pass the export or its "
            "<code>gemmlab analyze --json</code> output with <code>--diagnosis</code>.</p>"
        )
    # diagnosed kernels full width; the undiagnosed ones (a stats line each) in a compact grid
    out.append('<div class="cards">')
    for c in rep.cards:
        if c.diagnosed:
            out += _card(c)
    out.append('</div><div class="cards plain">')
    for c in rep.cards:
        if not c.diagnosed:
            out += _card(c)
    out.append("</div></section>")

    if rep.envs:
        out.append('<section id="environment"><h2>Environment</h2>')
        for heading, rows in rep.envs:
            label = "Recorded with the run" if len(rep.envs) == 1 else f"Recorded with the {heading}"
            out.append(f"<details open><summary>{e(label)}</summary>")
            out.append('<table class="env"><tbody>')
            out += [f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows]
            out.append("</tbody></table></details>")
        out.append("</section>")

    out.append(f"<footer>Generated by gemmlab {e(__version__)} on {e(when)}.</footer>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"
