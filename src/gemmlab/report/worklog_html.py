"""Your kernel's worklog as one self-contained HTML page (``gemmlab history NAME --html FILE``).

The seed articles' worklog, written from your own edits: the versions table (Version | Time |
GFLOP/s | Speed-up | % of cuBLAS | what the profiler showed | top hot line), GFLOP/s per version
against cuBLAS, "What actually mattered" ranked, then each version: its measured effect, the
profiler's diagnosis and hot lines, its runs, and its source diff from the version before. Same CSS
and escaping as the ladder report (``report.html``): inline styles, the plot as a data URI, no
scripts, no network; every text that came from a run or a source file goes through ``e``.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Optional, Sequence

from gemmlab import __version__
from gemmlab.analysis.versions import History, Step, Version, basename, shape_text
from gemmlab.report import worklog as W
from gemmlab.report.html import CSS
from gemmlab.report.html import e as _escape


def e(text: object) -> str:
    """Escape for HTML; a missing value shows as '–'."""
    return _escape("–" if text is None else text)


EXTRA_CSS = """
pre.diff { white-space:pre; word-break:normal; overflow-x:auto; line-height:1.35; }
pre.diff .add { background:#e6ffed; color:#1a7f37; display:block; }
pre.diff .del { background:#ffebe9; color:#b42318; display:block; }
pre.diff .hunk { color:#6f42c1; display:block; }
pre.diff .file { color:var(--muted); font-weight:600; display:block; }
pre.diff .ctx { display:block; }
table.versions td:first-child { white-space:nowrap; }
pre.source { white-space:pre; word-break:normal; overflow-x:auto; }
.verdict-faster { color:#1a7f37; font-weight:600; } .verdict-slower { color:var(--bad); font-weight:600; }
.verdict-same, .verdict-none { color:var(--muted); font-weight:600; }
"""

# The seed articles' columns; when, which runs and the shape are on each version's card below.
COLUMNS = ("Version", "Time (ms)", "GFLOP/s", "Speed-up vs previous", "% of cuBLAS", "What the profiler showed",
           "Top hot line", "Placement")
NUMERIC = frozenset({1, 2, 4})  # right-aligned


def _diff_line(line: str) -> str:
    if line.startswith(("+++", "---")):
        cls = "file"
    elif line.startswith("@@"):
        cls = "hunk"
    elif line.startswith("+"):
        cls = "add"
    elif line.startswith("-"):
        cls = "del"
    else:
        cls = "ctx"
    return f'<span class="{cls}">{e(line) or " "}</span>'


def diff_html(lines: Sequence[str]) -> str:
    """A unified diff, escaped, one coloured block per line (added green, removed red)."""
    return '<pre class="diff">' + "".join(_diff_line(s) for s in lines) + "</pre>"


def _table(columns: Sequence[str], rows: Sequence[Sequence[object]], cls: str,
           numeric: frozenset[int] = frozenset()) -> list[str]:
    out = [f'<table class="{cls}"><thead><tr>' + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f'<td class="num">{e(c)}</td>' if i in numeric else f"<td>{e(c)}</td>"
                                    for i, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return out


def _versions_table(h: History) -> list[str]:
    shapes = {W.shape_cell(v) for v in h.versions}
    out = ['<table class="ladder versions"><thead><tr>' + "".join(f"<th>{e(c)}</th>" for c in COLUMNS)
           + "</tr></thead><tbody>"]
    for v in h.versions:
        run = v.latest
        g, pct = run.row.gflops, run.pct_of_cublas
        cells = [f"{run.row.median_s * 1e3:.4f}", None if g is None else f"{g:,.1f}", W.speedup_cell(h.step_into(v)),
                 None if pct is None else f"{pct:.1f}%", v.diagnosis_text or "not profiled", v.top_hot_line,
                 v.placement]
        label = f'<a href="#{e(v.label)}">{e(W.version_label(v))}</a> <span class="conf">{e(v.short)}'
        label += (f"<br>{e(W.shape_cell(v))}" if len(shapes) > 1 else "") + "</span>"
        tds = [f"<td>{label}</td>"] + [f'<td class="num">{e(c)}</td>' if i in NUMERIC else f"<td>{e(c)}</td>"
                                       for i, c in enumerate(cells, start=1)]
        cls = ' class="wrong"' if run.correct is False else ""
        out.append(f"<tr{cls}>" + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    where = f" All at M,N,K = {next(iter(shapes))}." if len(shapes) == 1 else ""
    out.append(f'<p class="source">{e(W.VERSIONS_CAPTION + where)}</p>')
    return out


def _plot(h: History) -> list[str]:
    from gemmlab.report.plots import data_uri, png_bytes

    png = png_bytes(gflops_figure(h))
    return [(f'<figure id="plot-gflops"><img src="{data_uri(png)}" alt="GFLOP/s per version of {e(h.name)}">'
             "<figcaption><strong>GFLOP/s per version.</strong> Bars: each version's latest run, from its median "
             "time, labelled with % of cuBLAS; grey dashes: cuBLAS in the same run; red: the run failed its "
             "correctness check.</figcaption></figure>")]


def _effect(s: Optional[Step]) -> str:
    if s is None:
        return "<p>The first version: the baseline the edits are measured from.</p>"
    if s.change is None:
        return (f'<p>Edit {e(s.edit)}: <span class="verdict-none">not compared</span>: {e(s.why_not)}.</p>')
    eff = s.change.effect
    base = s.before_run
    against = f" (against run {e(base.run_id)} of {e(s.before.label)})" if base is not None and base.run_id else ""
    return (f'<p>Edit {e(s.edit)}: <span class="verdict-{e(eff.verdict)}">{e(eff.text)}</span>{against}; '
            f"{e(eff.why)}. Why: {e(s.change.why)}.</p>")


def _profile(v: Version) -> list[str]:
    if not v.profile:
        return ['<p class="conf">Not profiled.</p>']
    d = v.diagnosis
    out = []
    if v.category:
        conf = f'<span class="conf">confidence: {e(d.get("confidence"))}</span>' if d.get("confidence") else ""
        out.append(f'<p><span class="badge">{e(v.category)}</span>{conf}</p>')
        if d.get("summary"):
            out.append(f"<p>{e(d['summary'])}</p>")
    if v.finding_line:
        out.append(f"<p><strong>Finding:</strong> {e(v.finding_line)}</p>")
    if v.hot_lines:
        rows = [[(f"{basename(h.file)}:" if h.file and basename(h.file) != basename(v.file) else "")
                 + ("?" if h.line is None else str(h.line)), h.source, None if h.share is None else f"{100 * h.share:.1f}%",
                 ", ".join(r + ("" if s is None else f" {100 * s:.0f}%") for r, s in h.stalls) or None]
                for h in v.hot_lines]
        out.append("<p><strong>Hot lines</strong> (share of the kernel's samples)</p>")
        out += _table(("Line", "Source", "Share", "Top stalls"), rows, "hot-lines", frozenset({2}))
    report = v.profile.get("report")
    if report:
        out.append(f'<p class="conf">From {e(report)}.</p>')
    return out


def _runs(v: Version) -> list[str]:
    rows = []
    for r in v.runs:
        g, pct = r.row.gflops, r.pct_of_cublas
        check = "not checked" if r.correct is None else ("ok" if r.correct else f"WRONG: {r.row.check.reason}")
        rows.append([r.run_id, W.when(r.created_utc), r.gpu, f"{shape_text(r.shape)} {r.dtype}",
                     {True: "flushed", False: "not flushed", None: "not recorded"}[r.flush_l2],
                     f"{r.row.median_s * 1e3:.4f}", None if g is None else f"{g:,.1f}",
                     None if pct is None else f"{pct:.1f}%", check])
    out = [f"<details><summary>Runs of this version ({len(v.runs)}; the table shows the latest)</summary>"]
    out += _table(("Run", "When (UTC)", "GPU", "Shape", "L2", "Time (ms)", "GFLOP/s", "% of cuBLAS", "Check"), rows,
                  "runs", frozenset({5, 6, 7}))
    out.append("</details>")
    return out


def _source(h: History, v: Version) -> list[str]:
    s = h.step_into(v)
    if s is None:
        if v.source is None:
            return ['<p class="conf">Source not recorded.</p>']
        n = len(v.source.splitlines())
        return [f'<details><summary>Source ({n} lines)</summary><pre class="source"><code>{e(v.source)}</code></pre>'
                + "</details>"]
    if not s.diff:
        return [f'<p class="conf">Source diff from {e(s.before.label)}: {e(s.lines_changed)}.</p>']
    return [f"<details open><summary>Source diff from {e(s.before.label)} ({e(s.lines_changed)} lines)</summary>",
            diff_html(s.diff), "</details>"]


def _version(h: History, v: Version) -> list[str]:
    run = v.latest
    g, pct = run.row.gflops, run.pct_of_cublas
    where = f"{v.file}" + (f" ({v.function})" if v.function else "")
    out = [f'<article class="card" id="{e(v.label)}">',
           f"<h3>{e(W.version_label(v))} · {e(v.short)} · {e(W.when(run.created_utc))}</h3>",
           (f'<p class="stats">{run.row.median_s * 1e3:.4f} ms · {e("–" if g is None else f"{g:,.1f}")} GFLOP/s · '
            f'{e("–" if pct is None else f"{pct:.1f}%")} of cuBLAS · {e(W.shape_cell(v))} on {e(run.gpu)} · '
            f"{len(v.runs)} run{'s' * (len(v.runs) != 1)} · {e(where)}</p>")]
    out.append(_effect(h.step_into(v)))
    if v.placement:
        out.append(f"<p><strong>On the ladder:</strong> {e(v.placement)}</p>")
    out += _profile(v)
    out += _runs(v)
    out += _source(h, v)
    out.append("</article>")
    return out


def render(h: History, *, source: str = "", generated_utc: Optional[str] = None, with_plot: bool = True) -> str:
    """The worklog page of one kernel's history; ``source``: where its runs were read from."""
    if not h.versions:
        raise ValueError(f"{h.name}: no versions to write a worklog of")
    when = generated_utc or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    title = f"Worklog: {h.name}"
    first, last = h.versions[0], h.versions[-1]
    files = list(dict.fromkeys(v.file for v in h.versions if v.file))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">', f"<title>{e(title)}</title>",
           f"<style>{CSS}{EXTRA_CSS}</style></head><body><main>", f"<header><h1>{e(title)}</h1>", '<dl class="meta">',
           (f"<dt>Versions</dt><dd>{len(h.versions)} ({h.n_runs} runs), {e(W.when(first.runs[0].created_utc))} to "
            f"{e(W.when(last.latest.created_utc))}</dd>"),
           f"<dt>File</dt><dd>{e(', '.join(files) or 'not recorded')}</dd>",
           f"<dt>GPU</dt><dd>{e(', '.join(h.gpus))}</dd>"]
    best = max((v for v in h.versions if v.latest.correct is not False and v.latest.row.gflops),
               key=lambda v: v.latest.row.gflops, default=None)
    if best is not None:
        pct = best.latest.pct_of_cublas
        out.append(f"<dt>Fastest</dt><dd>{e(best.label)}: {best.latest.row.gflops:,.1f} GFLOP/s"
                   f"{'' if pct is None else f', {pct:.1f}% of cuBLAS'} at {e(W.shape_cell(best))}</dd>")
    out.append("</dl>")
    if source:
        out.append(f'<p class="source" id="data-source">Data source: {e(source)}</p>')
    out.append("</header>")
    out.append('<section id="versions"><h2>Versions</h2>')
    out += _versions_table(h)
    if with_plot:
        out += _plot(h)
    out.append("</section>")
    out.append('<section id="mattered"><h2>What actually mattered</h2>')
    if h.steps:
        out += _table(W.MATTERED_COLUMNS, W.mattered_table(h), "mattered")
        out.append(f'<p class="source">{e(W.MATTERED_CAPTION)}</p>')
    else:
        out.append('<p class="conf">One version so far: edit the source and run it again to see what an edit did.</p>')
    out.append("</section>")
    out.append('<section id="edits"><h2>Each version</h2><div class="cards">')
    for v in h.versions:
        out += _version(h, v)
    out.append("</div></section>")
    out.append(f"<footer>Generated by gemmlab {e(__version__)} on {e(when)}.</footer></main></body></html>")
    return "\n".join(out) + "\n"


def gflops_figure(h: History):
    """Bars of GFLOP/s per version (its latest run), labelled with % of cuBLAS; cuBLAS of the same
    run as grey dashes; a version that failed its check in red. Versions at another shape say so."""
    # through report.plots, whose import sets matplotlib's headless backend
    from gemmlab.report import plots

    plt, ticker = plots.plt, plots.matplotlib.ticker

    vs = h.versions
    n = len(vs)
    fig, ax = plt.subplots(figsize=(min(11.0, max(6.0, 0.8 * n + 2.5)), 4.4))
    x = list(range(n))
    heights = [v.latest.row.gflops or 0.0 for v in vs]
    bars = ax.bar(x, heights, width=0.65, zorder=2,
                  color=[plots.COLOR_FAILED if v.latest.correct is False else plots.COLOR_KERNEL for v in vs])
    refs = [r.gflops if (r := v.latest.reference) is not None and r.gflops else float("nan") for v in vs]
    finite = [r for r in refs if not math.isnan(r)]
    if finite:
        ax.plot(x, refs, linestyle="none", marker="_", markersize=28, markeredgewidth=2, color=plots.COLOR_REFERENCE,
                zorder=3, label="cuBLAS (same run)")
        ax.legend(loc="upper left", fontsize=8, frameon=False)
    for bar, g, v in zip(bars, heights, vs):
        pct = v.latest.pct_of_cublas
        text = f"{g:,.0f}" + ("" if pct is None else f"\n{pct:.1f}%") + ("\nWRONG" if v.latest.correct is False else "")
        ax.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8)
    shapes = {(v.latest.shape, v.latest.dtype) for v in vs}
    ticks = [f"{v.label}\n{v.short}" + (f"\n{W.shape_cell(v)}" if len(shapes) > 1 else "") for v in vs]
    ax.set_xticks(x, ticks, fontsize=8)
    ax.set_ylim(0, max(heights + finite + [1.0]) * 1.25)  # room for the labels above the tallest bar
    ax.set_ylabel("GFLOP/s (median time)")
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:,.0f}"))
    only = next(iter(shapes)) if len(shapes) == 1 else None
    ax.set_title(f"{h.name} on {', '.join(h.gpus)}: GFLOP/s per version"
                 + (f", M,N,K={','.join(map(str, only[0]))} {only[1]}" if only else ""), fontsize=11)
    ax.grid(axis="y", color="#dddddd", zorder=0)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
