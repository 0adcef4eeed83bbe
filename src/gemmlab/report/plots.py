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

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from gemmlab.report.model import KernelResult, SweepPoint  # noqa: E402

# One palette for all figures: a neutral blue for kernels, red for kernels that failed the
# correctness check (their speed does not count), grey for the library reference.
COLOR_KERNEL = "#3b6ea8"
COLOR_FAILED = "#c0392b"
COLOR_REFERENCE = "#7f7f7f"
DPI = 110


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
    ladder: Sequence[KernelResult],
    reference: KernelResult | None,
    pct: Sequence[float | None],
    title: str,
) -> Figure:
    """Bars of GFLOP/s per rung, each labelled with its % of cuBLAS; cuBLAS as a dashed line.

    ``pct[i]`` is the % of cuBLAS of ``ladder[i]`` (None when there is no reference).
    """
    if len(pct) != len(ladder):
        raise ValueError(f"pct has {len(pct)} entries for {len(ladder)} kernels")
    n = len(ladder)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * n + 2.5), 4.2))
    x = np.arange(n)
    heights = [r.gflops for r in ladder]
    colors = [COLOR_FAILED if r.correct is False else COLOR_KERNEL for r in ladder]
    bars = ax.bar(x, heights, color=colors, width=0.65, zorder=2)
    top = max(heights + ([reference.gflops] if reference else []))
    for bar, r, p in zip(bars, ladder, pct):
        text = f"{r.gflops:,.0f}"
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
        ax.axhline(reference.gflops, color=COLOR_REFERENCE, linestyle="--", linewidth=1.2, zorder=1)
        ax.annotate(
            f"{reference.name}: {reference.gflops:,.0f} GFLOP/s (100%)",
            (n - 0.5, reference.gflops),
            xytext=(0, 4),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=8,
            color="#444444",
        )
    ax.set_xticks(x, [_short(r.name) for r in ladder], rotation=20, ha="right", fontsize=9)
    ax.set_ylabel("GFLOP/s (median time)")
    ax.set_ylim(0, top * 1.22)  # room for the labels above the tallest bar
    ax.set_title(title, fontsize=11)
    ax.grid(axis="y", color="#dddddd", zorder=0)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def timing_figure(results: Sequence[KernelResult], title: str) -> Figure:
    """Each kernel's raw samples, one row per kernel: left in ms, right as % from its own median.

    Left: box plot (quartiles, median) with every sample over it; the time axis is logarithmic
    when the medians span more than 10x. Right: the same samples as percent deviation from that
    kernel's median, so a 1% spread on a 0.3 ms kernel is as visible as on a 30 ms one.
    """
    with_samples = [r for r in results if r.samples_s]
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
        vert=False,
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
        color = COLOR_REFERENCE if r.is_reference else (COLOR_FAILED if r.correct is False else COLOR_KERNEL)
        jitter = p + rng.uniform(-0.18, 0.18, size=d.size)
        ax.scatter(d, jitter, s=9, alpha=0.6, color=color, zorder=3)
        ax_rel.scatter(dr, jitter, s=9, alpha=0.6, color=color, zorder=3)
    medians = [r.median_s for r in with_samples]
    if max(medians) / min(medians) > 10:
        ax.set_xscale("log")
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
    """One heatmap's worth of a sweep: GFLOP/s over two parameters (or one), the others fixed."""

    kernel: str
    shape: tuple[int, int, int]
    y_param: str
    y_values: tuple[Any, ...]
    x_param: str | None  # None: a one-parameter sweep (one row)
    x_values: tuple[Any, ...]
    fixed: tuple[tuple[str, Any], ...]  # the other parameters' values in this grid
    gflops: tuple[tuple[float, ...], ...]  # [y][x], NaN where that combination was not run

    @property
    def title(self) -> str:
        M, N, K = self.shape
        fixed = ", ".join(f"{k}={v}" for k, v in self.fixed)
        return f"{self.kernel} sweep, M,N,K={M},{N},{K}" + (f" ({fixed})" if fixed else "")

    def best(self) -> tuple[Any, Any, float] | None:
        """(y value, x value, GFLOP/s) of the fastest cell."""
        arr = np.asarray(self.gflops, dtype=float)
        if np.all(np.isnan(arr)):
            return None
        i, j = np.unravel_index(np.nanargmax(arr), arr.shape)
        return self.y_values[i], (self.x_values[j] if self.x_param else None), float(arr[i, j])


def _sort_key(v: Any) -> tuple:
    return (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v))


def sweep_grids(points: Sequence[SweepPoint]) -> list[SweepGrid]:
    """Group sweep points by kernel and shape; two varying parameters → y × x heatmap.

    With more than two varying parameters, the first two (in the order the points name them) are
    the axes and every combination of the others gets its own grid. Parameters that never vary
    are left out. A combination measured twice keeps the faster median (it is the same config).
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
        y_param, x_param = varying[0], (varying[1] if len(varying) > 1 else None)
        rest = varying[2:]
        facets: dict[tuple, list[SweepPoint]] = {}
        for p in pts:
            facets.setdefault(tuple((k, p.params.get(k)) for k in rest), []).append(p)
        for fixed, fpts in sorted(facets.items(), key=lambda kv: [_sort_key(v) for _, v in kv[0]]):
            ys = tuple(sorted({p.params.get(y_param) for p in fpts}, key=_sort_key))
            xs = tuple(sorted({p.params.get(x_param) for p in fpts}, key=_sort_key)) if x_param else (None,)
            cell = np.full((len(ys), len(xs)), np.nan)
            for p in fpts:
                i = ys.index(p.params.get(y_param))
                j = xs.index(p.params.get(x_param)) if x_param else 0
                cell[i, j] = np.nanmax([cell[i, j], p.gflops])
            grids.append(
                SweepGrid(kernel, shape, y_param, ys, x_param, xs if x_param else (), fixed, tuple(map(tuple, cell)))
            )
    return grids


def sweep_figure(grid: SweepGrid) -> Figure:
    """A heatmap of GFLOP/s; every cell annotated, the best one outlined, missing cells blank."""
    arr = np.asarray(grid.gflops, dtype=float)
    ny, nx = arr.shape
    fig, ax = plt.subplots(figsize=(max(4.0, 1.1 * nx + 2.6), max(2.4, 0.6 * ny + 1.6)))
    masked = np.ma.masked_invalid(arr)
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("#f2f2f2")
    im = ax.imshow(masked, cmap=cmap, aspect="auto")
    finite = arr[np.isfinite(arr)]
    mid = (finite.min() + finite.max()) / 2 if finite.size else 0
    for i in range(ny):
        for j in range(nx):
            v = arr[i, j]
            text = "not run" if math.isnan(v) else f"{v:,.0f}"
            color = "#777777" if math.isnan(v) else ("black" if v > mid else "white")
            ax.text(j, i, text, ha="center", va="center", fontsize=9, color=color)
    best = grid.best()
    if best is not None:
        i = grid.y_values.index(best[0])
        j = grid.x_values.index(best[1]) if grid.x_param else 0
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="#e67e22", linewidth=2.5))
    ax.set_yticks(range(ny), [str(v) for v in grid.y_values])
    ax.set_ylabel(grid.y_param)
    if grid.x_param:
        ax.set_xticks(range(nx), [str(v) for v in grid.x_values])
        ax.set_xlabel(grid.x_param)
    else:
        ax.set_xticks([])
    fig.colorbar(im, ax=ax, label="GFLOP/s")
    ax.set_title(grid.title, fontsize=10)
    fig.tight_layout()
    return fig


@dataclass(frozen=True)
class RooflinePoint:
    label: str
    ai: float  # arithmetic intensity, FLOP per DRAM byte
    gflops: float


@dataclass(frozen=True)
class Ceiling:
    label: str
    value: float  # GFLOP/s for a compute ceiling, GB/s for a memory ceiling


def roofline_figure(
    points: Sequence[RooflinePoint],
    compute: Sequence[Ceiling],
    memory: Sequence[Ceiling],
    title: str,
) -> Figure:
    """Log-log roofline: min(compute ceiling, bandwidth × AI) for each pair, kernels as points."""
    if not points:
        raise ValueError("no roofline points")
    if not compute or not memory:
        raise ValueError("a roofline needs at least one compute and one memory ceiling")
    ais = [p.ai for p in points]
    lo = min(min(ais) / 4, min(c.value / m.value for c in compute for m in memory) / 8)
    hi = max(max(ais) * 4, max(c.value / m.value for c in compute for m in memory) * 8)
    x = np.geomspace(lo, hi, 256)
    fig, ax = plt.subplots(figsize=(8.6, 4.4))
    styles = ["-", "--", ":", "-."]
    for i, m in enumerate(memory):
        for c in compute:
            ax.plot(x, np.minimum(c.value, m.value * x), color="#333333", linestyle=styles[i % 4], linewidth=1.2)
        ax.annotate(
            f"{m.label}: {m.value:,.0f} GB/s",
            (lo * 1.3, m.value * lo * 1.3),
            rotation=0,
            fontsize=8,
            color="#333333",
            va="bottom",
        )
    for c in compute:
        ax.annotate(f"{c.label}: {c.value:,.0f} GFLOP/s", (hi / 1.3, c.value), ha="right", va="bottom", fontsize=8)
    markers = "osD^vP*Xh<>"
    for i, p in enumerate(points):
        ax.scatter([p.ai], [p.gflops], s=40, marker=markers[i % len(markers)], zorder=3, label=_short(p.label, 36))
    ax.set_xscale("log")
    ax.set_yscale("log")
    y_lo = min(min(p.gflops for p in points), min(m.value for m in memory) * lo) / 2
    ax.set_ylim(y_lo, max(c.value for c in compute) * 2)
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP / DRAM byte)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title, fontsize=11)
    ax.grid(which="both", color="#eeeeee")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)  # never over a point
    fig.tight_layout()
    return fig
