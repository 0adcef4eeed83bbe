"""The report's figures, drawn with matplotlib (Agg backend, no display needed).

Each ``*_figure`` function takes parsed results and returns a matplotlib ``Figure`` (so tests can
inspect what was drawn); ``png_bytes`` renders one to PNG and closes it. The HTML report inlines
the PNGs as base64 data URIs; the Markdown report writes them next to the ``.md`` file.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")  # no display: reports are rendered on headless machines and in CI
import matplotlib.ticker  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gemmlab.bench.results import Row  # noqa: E402
from gemmlab.report.model import SweepPoint  # noqa: E402
from gemmlab.report.roofline_plot import roofline_figure  # noqa: E402,F401  (the one roofline drawing)

# One palette for all figures: a neutral blue for kernels, red for kernels that failed the
# correctness check (their speed does not count), grey for the library reference.
COLOR_KERNEL = "#3b6ea8"
COLOR_FAILED = "#c0392b"
COLOR_REFERENCE = "#7f7f7f"
DPI = 110
RATE_UNITS = {"GFLOP/s": 1e9, "TFLOP/s": 1e12}  # FLOP/s per unit
# boxplot's vert=False became orientation="horizontal" in matplotlib 3.10 (vert is deprecated)
_MPL = tuple(int(x) for x in matplotlib.__version__.split(".")[:2])
_HORIZONTAL = {"orientation": "horizontal"} if _MPL >= (3, 10) else {"vert": False}


def png_bytes(fig: Figure) -> bytes:
    """Render ``fig`` to PNG and close it (figures hold memory until closed)."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=DPI, bbox_inches="tight", metadata={"Software": None})
    finally:
        plt.close(fig)
    return buf.getvalue()


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _short(name: str, width: int = 28) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def ladder_figure(
    ladder: Sequence[Row],
    reference: Row | None,
    pct: Sequence[float | None],
    title: str,
    unit: str = "GFLOP/s",
    reference_label: str | None = None,
) -> Figure:
    """Bars of GFLOP/s (or TFLOP/s: ``unit``) per rung, each labelled with its % of cuBLAS; cuBLAS as a
    dashed line, labelled ``reference_label`` (default its kernel name).

    ``pct[i]`` is the % of cuBLAS of ``ladder[i]`` (None when there is no reference).
    """
    if len(pct) != len(ladder):
        raise ValueError(f"pct has {len(pct)} entries for {len(ladder)} kernels")
    if unit not in RATE_UNITS:
        raise ValueError(f"unit {unit!r}: expected one of {', '.join(RATE_UNITS)}")
    scale = 1e9 / RATE_UNITS[unit]  # GFLOP/s -> unit
    n = len(ladder)
    fig, ax = plt.subplots(figsize=(min(11.0, max(6.0, 0.8 * n + 2.5)), 4.4))
    x = np.arange(n)
    heights = [r.gflops * scale for r in ladder]
    colors = [COLOR_FAILED if r.correct is False else COLOR_KERNEL for r in ladder]
    bars = ax.bar(x, heights, color=colors, width=0.65, zorder=2)
    ref_height = reference.gflops * scale if reference else None
    top = max(heights + ([ref_height] if reference else []))
    for bar, h, r, p in zip(bars, heights, ladder, pct):
        text = f"{h:,.0f}" if unit == "GFLOP/s" else f"{h:,.1f}"
        if p is not None:
            text += f"\n{p:.1f}%"
        if r.correct is False:
            text += "\nWRONG"
        ax.annotate(
            text,
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            xytext=(0, 3),
            textcoords="offset points",
            ha="center",
            va="bottom",
            fontsize=8,
        )
    if reference is not None:
        ax.axhline(ref_height, color=COLOR_REFERENCE, linestyle="--", linewidth=1.2, zorder=1)
        value = f"{ref_height:,.0f}" if unit == "GFLOP/s" else f"{ref_height:,.1f}"
        ax.annotate(
            f"{reference_label or reference.name}: {value} {unit} (100%)",
            (-0.5, ref_height),  # over the first rungs, the short bars: clear of the last rungs' labels
            xytext=(2, 4),
            textcoords="offset points",
            ha="left",
            va="bottom",
            fontsize=8,
            color="#444444",
        )
    ax.set_xticks(x, [_short(r.name) for r in ladder], rotation=20, ha="right", fontsize=9)
    ax.set_ylabel(f"{unit} (median time)")
    ax.set_ylim(0, top * 1.22)  # room for the labels above the tallest bar
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", color="#dddddd", zorder=0)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def timing_figure(results: Sequence[Row], title: str) -> Figure:
    """Each kernel's raw samples, one row per kernel: left in ms, right as % from its own median.

    Left: box plot (quartiles, median) with every sample over it; the time axis is logarithmic
    when the medians span more than 10x. Right: the same samples as percent deviation from that
    kernel's median, so a 1% spread on a 0.3 ms kernel is as visible as on a 30 ms one.
    """
    with_samples = [r for r in results if r.measurement.n > 1]
    if not with_samples:
        raise ValueError("no kernel has raw samples to plot")
    n = len(with_samples)
    fig, (ax, ax_rel) = plt.subplots(
        1, 2, figsize=(10.0, 0.5 * n + 1.5), sharey=True, gridspec_kw={"width_ratios": [3, 2]}
    )
    data = [np.asarray(r.samples_s) * 1e3 for r in with_samples]
    rel = [100.0 * (np.asarray(r.samples_s) / r.median_s - 1.0) for r in with_samples]
    pos = np.arange(n)[::-1]  # first kernel on top
    box = dict(
        positions=pos,
        **_HORIZONTAL,
        widths=0.55,
        showfliers=False,
        medianprops={"color": "black"},
        boxprops={"color": "#555555"},
        whiskerprops={"color": "#555555"},
        capprops={"color": "#555555"},
    )
    ax.boxplot(data, **box)
    ax_rel.boxplot(rel, **box)
    rng = np.random.default_rng(0)  # fixed jitter so the same data always draws the same picture
    for p, d, dr, r in zip(pos, data, rel, with_samples):
        color = COLOR_REFERENCE if r.reference else (COLOR_FAILED if r.correct is False else COLOR_KERNEL)
        jitter = p + rng.uniform(-0.18, 0.18, size=d.size)
        ax.scatter(d, jitter, s=9, alpha=0.6, color=color, zorder=3)
        ax_rel.scatter(dr, jitter, s=9, alpha=0.6, color=color, zorder=3)
    medians = [r.median_s for r in with_samples]
    if max(medians) / min(medians) > 10:
        ax.set_xscale("log")
        # 1-2-5 ticks labelled as plain numbers: the default labels every minor tick in 10^x form,
        # which overlap when the axis spans one or two decades (the BF16 ladder: 0.18 to 2.8 ms)
        ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_yticks(pos, [f"{_short(r.name)} (n={len(r.samples_s)})" for r in with_samples], fontsize=9)
    ax.set_xlabel("time per run (ms)")
    ax_rel.set_xlabel("deviation from the kernel's median (%)")
    ax_rel.axvline(0, color="#999999", linewidth=0.8)
    fig.suptitle(title, fontsize=11)
    for a in (ax, ax_rel):
        a.grid(axis="x", which="both", color="#eeeeee")
        a.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class SweepGrid:
    """One heatmap of a sweep: GFLOP/s over two groups of parameters (rows × columns).

    Each axis is a tuple of parameter names; a cell's coordinates are the values of those
    parameters (e.g. rows (BX, BY, BK) = (32, 8, 32), columns (EXTRA_SYNC, UNROLL) = (0, 1)).
    """

    kernel: str
    shape: tuple[int, int, int]
    y_params: tuple[str, ...]
    y_values: tuple[tuple[Any, ...], ...]
    x_params: tuple[str, ...]  # empty: a one-axis sweep (one column)
    x_values: tuple[tuple[Any, ...], ...]
    gflops: tuple[tuple[float, ...], ...]  # [y][x], NaN where that combination was not run

    @property
    def title(self) -> str:
        M, N, K = self.shape
        return f"{self.kernel} sweep, M,N,K={M},{N},{K}"

    def best(self) -> tuple[dict[str, Any], float] | None:
        """({param: value} of the fastest cell, its GFLOP/s)."""
        arr = np.asarray(self.gflops, dtype=float)
        if np.all(np.isnan(arr)):
            return None
        i, j = np.unravel_index(np.nanargmax(arr), arr.shape)
        where = dict(zip(self.y_params, self.y_values[i]))
        if self.x_params:
            where.update(zip(self.x_params, self.x_values[j]))
        return where, float(arr[i, j])


def _sort_key(v: tuple) -> tuple:
    return tuple((0, x, "") if isinstance(x, (int, float)) else (1, 0, str(x)) for x in v)


def _split(varying: list[str], pts: Sequence[SweepPoint]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Rows and columns: the split of the varying parameters that leaves the fewest cells empty,
    then the squarest grid, then the parameters' own order (so 2 parameters → one per axis)."""
    if len(varying) == 1:
        return (varying[0],), ()
    best = None
    n = len(varying)
    for mask in range(1, 2**n - 1):
        ys = tuple(k for i, k in enumerate(varying) if mask >> i & 1)
        xs = tuple(k for i, k in enumerate(varying) if not mask >> i & 1)
        ny = len({tuple(p.params.get(k) for k in ys) for p in pts})
        nx = len({tuple(p.params.get(k) for k in xs) for p in pts})
        empty = ny * nx - len({tuple(p.params.get(k) for k in varying) for p in pts})
        order = [i for i, k in enumerate(varying) if k in ys]
        key = (empty, abs(ny - nx), ny < nx, order)
        if best is None or key < best[0]:
            best = (key, ys, xs)
    return best[1], best[2]


MAX_SPLIT_PARAMS = 10  # 2**10 splits are tried; a sweep never varies that many knobs at once


def sweep_grids(points: Sequence[SweepPoint]) -> list[SweepGrid]:
    """One grid per kernel and shape, over the parameters that vary in its sweep.

    Parameters that never vary are left out; the varying ones are split between rows and columns
    (see ``_split``). A combination measured twice keeps the faster median.
    """
    groups: dict[tuple[str, tuple[int, int, int]], list[SweepPoint]] = {}
    for p in points:
        groups.setdefault((p.kernel, p.shape), []).append(p)
    grids: list[SweepGrid] = []
    for (kernel, shape), pts in groups.items():
        names: list[str] = []
        for p in pts:
            names += [k for k in p.params if k not in names]
        varying = [k for k in names if len({repr(p.params.get(k)) for p in pts}) > 1]
        if not varying:
            continue
        if len(varying) > MAX_SPLIT_PARAMS:
            raise ValueError(f"sweep of {kernel} varies {len(varying)} parameters; at most {MAX_SPLIT_PARAMS} are drawn")
        y_params, x_params = _split(varying, pts)
        ys = tuple(sorted({tuple(p.params.get(k) for k in y_params) for p in pts}, key=_sort_key))
        xs = tuple(sorted({tuple(p.params.get(k) for k in x_params) for p in pts}, key=_sort_key))
        cell = np.full((len(ys), len(xs)), np.nan)
        for p in pts:
            i = ys.index(tuple(p.params.get(k) for k in y_params))
            j = xs.index(tuple(p.params.get(k) for k in x_params))
            cell[i, j] = np.nanmax([cell[i, j], p.gflops])
        grids.append(SweepGrid(kernel, shape, y_params, ys, x_params, xs, tuple(map(tuple, cell))))
    return grids


def _tick(values: tuple) -> str:
    return "/".join(str(v) for v in values)


def sweep_figure(grid: SweepGrid) -> Figure:
    """A heatmap of GFLOP/s; every cell annotated, the best one outlined, missing cells blank."""
    arr = np.asarray(grid.gflops, dtype=float)
    ny, nx = arr.shape
    fig, ax = plt.subplots(figsize=(max(4.2, 1.25 * nx + 3.2), max(2.4, 0.5 * ny + 1.6)))
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#f2f2f2")
    im = ax.imshow(np.ma.masked_invalid(arr), cmap=cmap, aspect="auto")
    finite = arr[np.isfinite(arr)]
    mid = (finite.min() + finite.max()) / 2 if finite.size else 0
    for i in range(ny):
        for j in range(nx):
            v = arr[i, j]
            text = "not run" if math.isnan(v) else f"{v:,.0f}"
            color = "#777777" if math.isnan(v) else ("black" if v > mid else "white")
            ax.text(j, i, text, ha="center", va="center", fontsize=9, color=color)
    if finite.size:
        i, j = np.unravel_index(np.nanargmax(arr), arr.shape)
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#e67e22", linewidth=2.5))
    ax.set_yticks(range(ny), [_tick(v) for v in grid.y_values])
    ax.set_ylabel(" / ".join(grid.y_params))
    if grid.x_params:
        ax.set_xticks(range(nx), [_tick(v) for v in grid.x_values])
        ax.set_xlabel(" / ".join(grid.x_params))
    else:
        ax.set_xticks([])
    fig.colorbar(im, ax=ax, label="GFLOP/s")
    ax.set_title(grid.title, fontsize=10)
    fig.tight_layout()
    return fig
