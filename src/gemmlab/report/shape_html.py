"""A shapes run (``gemmlab shapes``) as one self-contained HTML page: the heat map, the map as a
table coloured the same way, the per-class summary, the worst shapes and the misses. Same CSS and
escaping as the ladder report; no scripts, no network.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from gemmlab import __version__
from gemmlab.bench.results import RunRecord
from gemmlab.report.html import CSS
from gemmlab.report.html import e as _escape
from gemmlab.shapes import shapemap as S

def e(text: object) -> str:
    """Escape for HTML; a missing value shows as '?' rather than 'None'."""
    return _escape("?" if text is None else text)


EXTRA_CSS = """
table.shapemap td.pct { text-align:right; font-variant-numeric:tabular-nums; font-weight:600; }
table.shapemap td.verdict-WRONG, table.shapemap td.verdict-below-floor { color:var(--bad); font-weight:600; }
"""


def _rows_html(smap: S.ShapeMap) -> list[str]:
    out = ['<table class="shapemap"><thead><tr>' + "".join(f"<th>{e(c)}</th>" for c in S.COLUMNS) + "</tr></thead><tbody>"]
    for p, cells in zip(smap.points, S.table_rows(smap, with_grid=True)):
        tds = []
        for i, c in enumerate(cells):
            if i == 6:
                from gemmlab.report.shape_plots import color_of

                tds.append(f'<td class="pct" style="background:{color_of(smap, p.pct)}">{e(c)}</td>')
            elif i == 8:
                tds.append(f'<td class="verdict-{e(c.replace(" ", "-"))}">{e(c)}</td>')
            else:
                tds.append(f"<td>{e(c)}</td>")
        out.append(f'<tr id="shape-{e(p.shape.name)}">' + "".join(tds) + "</tr>")
    out.append("</tbody></table>")
    return out


def _class_table(smap: S.ShapeMap) -> list[str]:
    out = ['<table class="classes"><thead><tr><th>Class</th><th>What it means</th><th>Shapes</th>'
           "<th>Lowest % of cuBLAS</th><th>Median</th><th>Meet their goal</th></tr></thead><tbody>"]
    for c in smap.class_summary():
        out.append(f"<tr><td>{e(c['class'])}</td><td>{e(S.CLASS_HELP.get(c['class'], ''))}</td><td>{c['n']}</td>"
                   f"<td>{e(S.pct_text(c['min_pct']))}</td><td>{e(S.pct_text(c['median_pct']))}</td>"
                   f"<td>{c['meets']} of {c['n']}</td></tr>")
    out.append("</tbody></table>")
    return out


def render(record: RunRecord, *, with_plots: bool = True, note: str = "",
           generated_utc: Optional[str] = None, source: str = "") -> str:
    """The page for one shapes run (fresh, stored, or read from ``gemmlab shapes --out`` JSON)."""
    smap = S.from_record(record)
    if not smap.points:
        raise ValueError("the shapes run has no measured shape")
    meta = record.meta
    title = f"gemmlab shape map: {meta.get('rung') or smap.rung} vs {smap.reference} on {record.gpu}"
    when = generated_utc or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    g = smap.goals
    env = record.env
    ceiling = meta.get("ceiling") or {}
    timing = ((meta.get("options") or {}).get("timing")) or {}
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">', f"<title>{e(title)}</title>",
           f"<style>{CSS}{EXTRA_CSS}</style></head><body><main>", f"<header><h1>{e(title)}</h1>",
           '<dl class="meta">',
           f"<dt>Grid</dt><dd>{e(meta.get('grid'))} ({len(smap.points)} shapes)</dd>",
           f"<dt>Run</dt><dd>{e(record.run_id or '')} {e(record.created_utc)}</dd>",
           f"<dt>cuBLAS</dt><dd>{e(env.get('cublas_math_mode') or '')}</dd>",
           f"<dt>Timing</dt><dd>warm-up {e(timing.get('warmup_ms'))} ms, {e(timing.get('rep_ms'))} ms of runs per kernel and shape"
           f"{', L2 flushed' if timing.get('flush_l2', True) else ', L2 not flushed'}</dd>",
           f"<dt>Software</dt><dd>CUDA runtime {e(env.get('cuda_runtime'))}, driver {e(env.get('driver') or env.get('cuda_driver_api'))}, "
           f"CuPy {e(env.get('cupy'))}, gemmlab {e(env.get('gemmlab'))}</dd>"]
    if ceiling.get("copy_bytes_per_s"):
        out.append(f"<dt>Copy ceiling</dt><dd>{ceiling['copy_bytes_per_s'] / 1e9:,.0f} GB/s ({e(ceiling.get('source'))})</dd>")
    out.append("</dl>")
    out.append(f'<p class="source">Every shape checked (fresh random inputs, NaN-poisoned output and guard, float64 '
               f"reference) and timed by the ladder's harness; {e(smap.reference)} timed in the same process, in "
               f"interleaved rounds. % of cuBLAS = cuBLAS median / rung median. Goal: {g.target_pct:g}% of cuBLAS, none "
               f"below {g.floor_pct:g}%; {'skinny' if smap.dtype == 'fp32' else 'decode'} shapes (M or N ≤ "
               f"{S.SKINNY_BY_DTYPE[smap.dtype]}) meet theirs at {g.skinny_pct:g}% of cuBLAS or {g.skinny_copy_pct:g}% of "
               f"the DRAM copy ceiling (bandwidth counts A and B read once, C written once).</p>")
    if source:
        out.append(f'<p class="source">From {e(source)}</p>')
    if note:
        out.append(f'<div class="banner" id="data-note"><strong>Data:</strong> {e(note)}</div>')
    out.append("</header>")
    out.append('<h2 id="summary">Summary</h2><ul class="summary">'
               + "".join(f"<li>{e(line)}</li>" for line in S.summary_lines(smap)) + "</ul>")
    if with_plots:
        from gemmlab.report.plots import data_uri, png_bytes
        from gemmlab.report.shape_plots import shape_map_figure

        png = png_bytes(shape_map_figure(smap))
        per_row = ("class" if smap.dtype == "fp32"
                   else "weight shape (N×K, token counts M left to right) or square size")
        out.append(f'<figure id="heatmap"><img alt="shape map heat map: % of cuBLAS per shape, by class" '
                   f'src="{data_uri(png)}"><figcaption>% of cuBLAS per shape, one row per {per_row}; red at 0, yellow '
                   f"between the floor and the target, green at the target and above.</figcaption></figure>")
    out.append('<h2 id="map">The map</h2>')
    out += _rows_html(smap)
    out.append('<h2 id="classes">By class</h2>')
    out += _class_table(smap)
    out.append('<h2 id="sources">Where the shapes come from</h2><ul class="notes">'
               + "".join(f"<li><strong>{e(p.shape.name)}</strong>: {e(p.shape.source)}</li>" for p in smap.points) + "</ul>")
    out.append(f"<footer>Generated by gemmlab {e(__version__)} on {e(when)}.</footer></main></body></html>")
    return "\n".join(out) + "\n"
