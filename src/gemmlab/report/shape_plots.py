"""The shape map as a heat map (matplotlib, Agg, like ``report.plots``).

FP32 maps: one row per shape class (``shapemap.CLASSES`` order), one cell per shape of that class
in grid order. BF16/FP8 maps: one row per weight shape (N x K) with its token counts M left to
right, and one row per square size with its ±1 neighbours - a model's projections read as a grid; a cell's colour is the rung's % of cuBLAS on a red–yellow–green scale anchored at the floor
(red) and the target (green), and its text is the shape and the percentage. Wrong results are
drawn as a hatched red cell marked WRONG: their speed does not count.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gemmlab.report.plots import COLOR_FAILED  # noqa: E402
from gemmlab.shapes.shapemap import ShapeMap, ShapePoint, is_skinny, pct_text  # noqa: E402

CMAP = "RdYlGn"
PCT_MAX = 120.0  # the colour scale stops here; above it the cell is as green as it gets


def cells(smap: ShapeMap) -> tuple[list[str], list[list[ShapePoint]]]:
    """(row names, points per row) — the rows of the heat map."""
    if smap.dtype == "fp32":
        groups = smap.by_class()
        return list(groups), list(groups.values())
    rows: dict[str, list[ShapePoint]] = {}
    for p in smap.points:
        M, N, K = p.shape.dims
        if M == N == K:
            key = f"squares near {2 ** round(math.log2(M))}"
        else:
            name = p.shape.label.split(",")[0] if "," in p.shape.label else ""
            key = (f"{name}: " if name else "") + f"N×K {N}×{K}"
        rows.setdefault(key, []).append(p)
    for pts in rows.values():
        pts.sort(key=lambda p: p.shape.dims)
    return list(rows), list(rows.values())


def norm(smap: ShapeMap) -> TwoSlopeNorm:
    """0 → red, the floor..target range → yellow, the target and above → green."""
    g = smap.goals
    lo, hi = 0.0, max(PCT_MAX, g.target_pct + 1)
    center = (g.floor_pct + g.target_pct) / 2
    return TwoSlopeNorm(vmin=lo, vcenter=center, vmax=hi)


def cell_text(p: ShapePoint) -> str:
    text = f"{p.shape.M}×{p.shape.N}×{p.shape.K}\n"
    if not p.rung_correct:
        return text + "WRONG"
    # one decimal, as the table prints it: 84.7% must not read as the 85% target
    text += pct_text(p.pct)
    if is_skinny(p.cls) and p.pct_of_copy is not None:
        text += f"\n{p.pct_of_copy:.0f}% of copy"
    return text


def shape_map_figure(smap: ShapeMap, title: str = "") -> Figure:
    classes, rows = cells(smap)
    if not rows:
        raise ValueError("the shape map has no shapes to draw")
    ny, nx = len(rows), max(len(r) for r in rows)
    arr = np.full((ny, nx), np.nan)
    for i, row in enumerate(rows):
        for j, p in enumerate(row):
            if p.rung_correct and p.pct is not None:
                arr[i, j] = min(p.pct, PCT_MAX)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.9 * nx + 2.6), max(2.6, 0.85 * ny + 1.4)))
    cmap = matplotlib.colormaps[CMAP].with_extremes(bad="#f2f2f2")
    im = ax.imshow(np.ma.masked_invalid(arr), cmap=cmap, norm=norm(smap), aspect="auto")
    for i, row in enumerate(rows):
        for j, p in enumerate(row):
            if not p.rung_correct:
                ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="white", edgecolor=COLOR_FAILED,
                                           hatch="///", linewidth=1.5))
            ax.text(j, i, cell_text(p), ha="center", va="center", fontsize=7.5,
                    color=COLOR_FAILED if not p.rung_correct else "black")
        for j in range(len(row), nx):
            ax.text(j, i, "", ha="center")
    ax.set_yticks(range(ny), [f"{c} ({len(r)})" for c, r in zip(classes, rows)], fontsize=9)
    ax.set_xticks([])
    g = smap.goals
    cbar = fig.colorbar(im, ax=ax, label=f"% of {smap.reference} (same run)")
    for v, label in ((g.floor_pct, "floor"), (g.target_pct, "target")):
        cbar.ax.axhline(v, color="black", linewidth=1)
        cbar.ax.text(1.6, v, f" {label} {v:g}%", va="center", fontsize=7, transform=cbar.ax.get_yaxis_transform())
    gm = smap.geomean_pct()
    ax.set_title(title or f"{smap.rung} vs {smap.reference}" + (f" on {smap.gpu}" if smap.gpu else "")
                 + (f" - geometric mean {gm:.1f}%" if gm is not None else ""), fontsize=10)
    fig.tight_layout()
    return fig


def color_of(smap: ShapeMap, pct: float | None) -> str:
    """The heat map's colour for a percentage, as #rrggbb (the HTML table's cell background)."""
    if pct is None or (isinstance(pct, float) and math.isnan(pct)):
        return "#f2f2f2"
    r, g, b, _ = matplotlib.colormaps[CMAP](norm(smap)(min(pct, PCT_MAX)))
    return "#{:02x}{:02x}{:02x}".format(round(r * 255), round(g * 255), round(b * 255))
