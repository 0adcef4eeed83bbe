"""Hot source lines, rendered: table rows for the terminal and CSV, and an HTML fragment of the
kernel's source with the hot lines highlighted.

The table shows every number whole (``67.8%``, ``249,158``) and the line's code whole, whitespace
collapsed; the terminal folds the code column, never a number. The HTML fragment is one
``<section class="hotlines">`` with its own ``<style>`` (scoped to that class, in the colours of
``report.html``) and no script: the source files holding the top lines, each line shaded by its share
of the samples, the top lines annotated with their stall reasons and their SASS in a ``<details>``.
Every text from the report (paths, code, SASS, names) goes through ``e`` (``html.escape``).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from typing import Iterable, Optional, Sequence

from rich.table import Table
from rich.text import Text

from gemmlab.analysis.hot_lines import (
    HotLine,
    HotLines,
    StallShare,
    stall_label,
)
from gemmlab.profile.source_lines import LaunchLines, SourceLine

COLUMNS = ("rank", "line", "share", "samples", "top stalls", "source")
CSV_COLUMNS = ("id", "kernel", *COLUMNS)
FULL_FILE_LINES = 200  # a file up to this long is shown whole; a longer one as windows around its hot lines
CONTEXT_LINES = 6  # lines shown above and below each hot line in a long file
SASS_ROWS = 40  # instructions listed in a hot line's details (most samples first); the rest are counted


def e(text: object) -> str:
    """Escape for HTML text and attribute values, as ``report.html.e`` (not imported: that module
    loads matplotlib, ~0.4 s, for its plots, and the terminal path of ``analyze`` comes here)."""
    return html.escape(str(text), quote=True)


def pct(share: float) -> str:
    return f"{100 * share:.1f}%"


def stalls_text(stalls: Sequence[StallShare]) -> str:
    """``not selected 31.9%, short scoreboard 26.7%, wait 10.6%``."""
    return ", ".join(f"{s.label} {pct(s.share)}" for s in stalls)


def code_text(text: Optional[str]) -> str:
    """The line's code, whitespace collapsed, whole; "–" when the report has no text for it."""
    s = " ".join((text or "").split())
    return s or "–"


def line_names(hot: HotLines) -> dict[str, str]:
    """Each file's name in a table: its base name, or its path where two files share a base name."""
    base = Counter(f.rsplit("/", 1)[-1] for f in hot.files)
    return {f: f if base[f.rsplit("/", 1)[-1]] > 1 else f.rsplit("/", 1)[-1] for f in hot.files}


def rows(hot: HotLines) -> list[list[str]]:
    """One row per ranked line: rank, ``file:line``, share, samples, top stalls, code."""
    names = line_names(hot)
    return [[str(ln.rank), f"{names.get(ln.file, ln.file)}:{ln.line}", pct(ln.share), f"{ln.samples:,}",
             stalls_text(ln.top_stalls), code_text(ln.text)] for ln in hot.lines]


def csv_rows(hots: Iterable[HotLines]) -> list[list[str]]:
    """``rows`` of several launches under CSV_COLUMNS; a launch without lines is one row with its note."""
    out = []
    for h in hots:
        if h.no_line_info:
            out.append([str(h.launch_id), h.name, "", "", "", "", "", h.no_line_info])
        out += [[str(h.launch_id), h.name, *r] for r in rows(h)]
    return out


def title(hot: HotLines) -> str:
    if hot.ranked_by == "samples":
        return f"Hot source lines (share of the kernel's {hot.total_samples:,} warp samples)"
    return (f"Hot source lines (share of the kernel's {hot.total_executed:,} executed warp instructions; "
            "the report has no warp samples)")


def rich_table(hot: HotLines) -> Table:
    """The ranked lines as a rich table for the terminal: numbers never fold, the code does."""
    t = Table(title=Text(title(hot), style="table.title"), title_justify="left", expand=False)
    body = rows(hot)
    for j, c in enumerate(COLUMNS):
        if c == "source":
            t.add_column(c, overflow="fold", min_width=20)
        elif c == "top stalls":
            t.add_column(c, overflow="fold", min_width=max([len(w) for r in body for w in r[j].split()] + [len(c)]))
        else:
            t.add_column(c, no_wrap=True, justify="right" if c in ("rank", "share", "samples") else "left")
    for r in body:
        t.add_row(*(Text(v) for v in r))
    return t


def note(hot: HotLines) -> Optional[str]:
    """The one line a launch without lines gets instead of the table (None when it has lines)."""
    return f"Hot source lines: {hot.no_line_info}" if hot.no_line_info else None


# --- HTML ------------------------------------------------------------------------------------------------

CSS = """
.hotlines { --hl-line:var(--line,#d9dee5); --hl-muted:var(--muted,#5b6472); margin:10px 0 16px; }
.hotlines h3 { font-size:15px; margin:0 0 6px; } .hotlines h4 { font-size:13.5px; margin:14px 0 4px; }
.hotlines h4 .origin { color:var(--hl-muted); font-weight:normal; font-size:12px; }
.hotlines p.hl-note { color:var(--hl-muted); font-size:12.5px; margin:4px 0; }
.hotlines p.hl-finding { margin:4px 0 8px; }
.hotlines table { border-collapse:collapse; font-size:12.5px; margin:4px 0 8px; }
.hotlines th, .hotlines td { border-bottom:1px solid var(--hl-line); padding:2px 8px; text-align:left;
  vertical-align:top; }
.hotlines th { background:#f0f2f5; font-weight:600; }
.hotlines td.num { text-align:right; font-variant-numeric:tabular-nums; white-space:nowrap; }
.hotlines table.hl-src { width:100%; table-layout:fixed; }
.hotlines table.hl-src td { border-bottom:none; padding:0 8px; }
.hotlines table.hl-src col.ln { width:4.5em; } .hotlines table.hl-src col.share { width:5.5em; }
.hotlines table.hl-src td.ln { color:var(--hl-muted); text-align:right; font-variant-numeric:tabular-nums; }
.hotlines table.hl-src td.code { font-family:ui-monospace,Menlo,Consolas,monospace; font-size:12px;
  white-space:pre-wrap; overflow-wrap:anywhere; }
.hotlines tr.hl-top td { font-weight:600; } .hotlines tr.hl-top td.ln { color:var(--bad,#c0392b); }
.hotlines tr.hl-ann td { background:#fafbfc; border-bottom:1px solid var(--hl-line); padding:2px 8px 6px; }
.hotlines tr.hl-gap td { color:var(--hl-muted); text-align:center; }
.hotlines code, .hotlines td.sass { font-family:ui-monospace,Menlo,Consolas,monospace; font-size:12px; }
.hotlines details summary { cursor:pointer; color:var(--hl-muted); }
"""
_HEAT = "192,57,43"  # report.html's --bad colour, as rgb for a transparent shade
_ANCHOR = re.compile(r"[^A-Za-z0-9]+")


def anchor(prefix: str, file: str, line: int) -> str:
    return f"{prefix}-{_ANCHOR.sub('-', file).strip('-').lower()}-{line}"


def html_fragment(launch: LaunchLines, hot: HotLines, finding: Optional[str] = None,
                  heading: Optional[str] = None, anchor_prefix: Optional[str] = None) -> str:
    """The launch's hot lines as a self-contained HTML fragment (a ``<section>`` with its own style).

    ``finding``: a sentence to lead with (``analysis.hot_lines.finding_line``); ``heading``: its ``<h3>``
    (default: the kernel's name and id); ``anchor_prefix`` keeps the ids of several launches on one
    page apart (default ``hl<id>``)."""
    prefix = anchor_prefix or f"hl{hot.launch_id}"
    heading = heading if heading is not None else f"Hot source lines — {hot.name} (#{hot.launch_id})"
    out = [f'<section class="hotlines" id="{e(prefix)}"><style>{CSS}</style>']
    if heading:
        out.append(f"<h3>{e(heading)}</h3>")
    if hot.no_line_info:
        out.append(f'<p class="hl-note">{e(hot.no_line_info)}</p></section>')
        return "\n".join(out)
    if finding:
        out.append(f'<p class="hl-finding">{e(finding)}</p>')
    out.append(f'<p class="hl-note">{e(title(hot))}.</p>')
    out += _top_table(hot, prefix)
    top = {(ln.file, ln.line): ln for ln in hot.lines}
    for f in hot.files:
        if any(k[0] == f for k in top):
            out += _file(launch, hot, f, top, prefix)
    out.append("</section>")
    return "\n".join(out)


def _top_table(hot: HotLines, prefix: str) -> list[str]:
    names = line_names(hot)
    out = [_head("hl-top", ("rank", "line", "share", "samples", "top stalls", "excess global sectors",
                             "excess shared wavefronts", "source"))]
    for ln in hot.lines:
        out.append(
            f'<tr><td class="num">{ln.rank}</td>'
            f'<td><a href="#{e(anchor(prefix, ln.file, ln.line))}">{e(names.get(ln.file, ln.file))}:{ln.line}</a></td>'
            f'<td class="num">{e(pct(ln.share))}</td><td class="num">{ln.samples:,}</td>'
            f"<td>{_stalls_html(ln.top_stalls)}</td><td class=\"num\">{ln.global_excess:,}</td>"
            f'<td class="num">{ln.shared_excess:,}</td><td><code>{e(code_text(ln.text))}</code></td></tr>')
    out.append("</tbody></table>")
    return out


def _head(cls: str, columns: Sequence[str]) -> str:
    """A table's opening tag, header row and ``<tbody>``."""
    return f'<table class="{cls}"><thead><tr>' + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr></thead><tbody>"


def _stalls_html(stalls: Sequence[StallShare]) -> str:
    return ", ".join(f'<span title="{e(s.meaning)}">{e(s.label)} {e(pct(s.share))}</span>'
                     for s in stalls)


def _origin(launch: LaunchLines, f: str) -> str:
    return {"embedded": "embedded in the report", "given": "as compiled",
            "disk": "read from disk: it may have changed since the profile"}.get(
        launch.source_origin.get(f, ""), "text not in the report: profile with ncu --import-source yes")


def _file(launch: LaunchLines, hot: HotLines, f: str, top: dict, prefix: str) -> list[str]:
    lines = {ln.line: ln for ln in launch.lines if ln.file == f}
    whole = hot.total_samples if hot.ranked_by == "samples" else hot.total_executed
    weight = (lambda ln: ln.samples) if hot.ranked_by == "samples" else (lambda ln: ln.executed)
    text = launch.sources.get(f)
    src = text.splitlines() if text is not None else []
    if src and len(src) <= FULL_FILE_LINES:
        shown: list[int] = list(range(1, len(src) + 1))
    elif src:
        keep = set()
        for (tf, n) in top:
            if tf == f:
                keep.update(range(max(1, n - CONTEXT_LINES), min(len(src), n + CONTEXT_LINES) + 1))
        shown = sorted(keep)
    else:  # no text: the lines the report names, in order
        shown = sorted(lines)
    out = [f'<h4><code>{e(f)}</code> <span class="origin">({e(_origin(launch, f))})</span></h4>',
           '<table class="hl-src"><colgroup><col class="ln"><col class="share"><col></colgroup><tbody>']
    last = None
    for n in shown:
        if last is not None and n != last + 1:
            out.append('<tr class="hl-gap"><td></td><td></td><td>⋮</td></tr>')
        last = n
        ln = lines.get(n)
        share = weight(ln) / whole if ln is not None and whole else 0.0
        code = src[n - 1] if src and n <= len(src) else (ln.text if ln is not None and ln.text is not None else "")
        hot_line = top.get((f, n))
        cls = ' class="hl-top"' if hot_line is not None else ""
        ident = f' id="{e(anchor(prefix, f, n))}"' if hot_line is not None else ""
        shade = f' style="background:rgba({_HEAT},{min(0.55, 0.08 + share):.2f})"' if share > 0 else ""
        share_cell = e(pct(share)) if share > 0 else ""
        out.append(f'<tr{cls}{ident}><td class="ln">{n}</td><td class="num"{shade}>{share_cell}</td>'
                   f'<td class="code">{e(code)}</td></tr>')
        if hot_line is not None:
            out.append(_annotation(hot_line, lines[n]))
    out.append("</tbody></table>")
    return out


def _annotation(h: HotLine, ln: SourceLine) -> str:
    parts = [f"#{h.rank}: {pct(h.share)} of the samples ({h.samples:,}), {h.executed:,} warp instructions"]
    if ln.global_excess:
        parts.append(f"{ln.global_excess:,} excess global sectors of {ln.global_sectors:,}")
    if ln.shared_excess:
        parts.append(f"{ln.shared_excess:,} excess shared wavefronts of {ln.shared_wavefronts:,}")
    body = [f"<div>{e('; '.join(parts))}</div>"]
    if h.stalls:
        body.append(f"<div>Stalls: {_stalls_html(h.stalls[:5])}</div>")
    body += _sass(ln)
    return f'<tr class="hl-ann"><td></td><td></td><td>{"".join(body)}</td></tr>'


def _sass(ln: SourceLine) -> list[str]:
    ins = sorted(ln.instructions, key=lambda i: (-i.samples, -i.executed, i.pc))
    if not ins:
        return []
    out = [f"<details><summary>SASS: {len(ins):,} instruction(s) on this line</summary>",
           _head("hl-sass", ("address", "samples", "share of the line", "top stall", "executed", "instruction"))]
    for i in ins[:SASS_ROWS]:
        reason = max(i.stalls, key=lambda r: (i.stalls[r], r)) if i.stalls else None
        stall = f"{stall_label(reason)} {pct(i.stalls[reason] / i.samples)}" if reason and i.samples else ""
        share = pct(i.samples / ln.samples) if ln.samples else ""
        out.append(f'<tr><td><code>0x{i.pc:x}</code></td><td class="num">{i.samples:,}</td>'
                   f'<td class="num">{e(share)}</td><td>{e(stall)}</td><td class="num">{i.executed:,}</td>'
                   f'<td class="sass">{e(i.sass)}</td></tr>')
    out.append("</tbody></table>")
    rest = ins[SASS_ROWS:]
    if rest:
        out.append(f'<p class="hl-note">… and {len(rest):,} more instruction(s) with '
                   f"{sum(i.samples for i in rest):,} samples.</p>")
    out.append("</details>")
    return out
