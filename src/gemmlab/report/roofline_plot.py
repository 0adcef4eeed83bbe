"""The one log-log roofline drawing (matplotlib, Agg backend), and saving it to PNG, SVG or PDF.

``roofline_figure`` draws; the report inlines it (``gemmlab.report.plots``) and ``gemmlab roofline
--plot`` saves it with ``save_figure``, which never replaces a file without ``overwrite``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from gemmlab.analysis.roofline import Ceilings, Placement
from gemmlab.errors import InputError
from gemmlab.fileio import atomic_output

if TYPE_CHECKING:
    from matplotlib.figure import Figure

log = logging.getLogger(__name__)
FORMATS = ("png", "svg", "pdf")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display: plots are drawn on headless machines and in CI
    import matplotlib.pyplot as plt

    return matplotlib, plt


def _short(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def roofline_figure(placements: Sequence[Placement], ceilings: Ceilings, title: str | None = None) -> "Figure":
    """Log-log roofline: min(compute peak, DRAM bandwidth × AI), each kernel as a point; the compute
    peak is FP32 unless ``ceilings.compute`` names another (the BF16 ladder's dense tensor peak).

    ``placements`` and ``ceilings`` come from ``gemmlab.analysis.roofline`` (the same numbers
    ``gemmlab roofline`` prints); the legend says each point's % of the roof above it, and where the
    points mix ncu-measured and analytic counts, which each one is.
    """
    matplotlib, plt = _pyplot()
    import numpy as np

    ridge = ceilings.ridge
    ais = [p.point.intensity for p in placements] or [ridge]
    lo, hi = min(min(ais), ridge) / 8, max(max(ais), ridge) * 8
    xs = np.geomspace(lo, hi, 256)
    fig, ax = plt.subplots(figsize=(8.8, 4.6))
    ax.plot(xs, [ceilings.attainable(x) / 1e9 for x in xs], color="#333333", linewidth=1.6)
    ax.axvline(ridge, color="#999999", linestyle=":", linewidth=1)
    ax.annotate(f"{ceilings.compute} {ceilings.fp32_flops / 1e12:,.1f} TFLOP/s", (hi, ceilings.fp32_flops / 1e9),
                xytext=(-4, 4), textcoords="offset points", ha="right", va="bottom", fontsize=8)
    ax.annotate(f"DRAM {ceilings.dram_bytes_per_s / 1e12:,.2f} TB/s", (lo, lo * ceilings.dram_bytes_per_s / 1e9),
                xytext=(6, 4), textcoords="offset points", ha="left", va="bottom", fontsize=8)
    ax.annotate(f"ridge {ridge:.1f} FLOP/B", (ridge, ceilings.fp32_flops / 1e9), xytext=(4, -14),
                textcoords="offset points", fontsize=8, color="#777777")
    markers = "osD^vP*Xh<>p"
    colors = matplotlib.colormaps["tab20"].colors  # 20 distinct colours: a ladder has about a dozen rungs
    mixed = len({p.point.source for p in placements}) > 1
    for i, p in enumerate(placements):
        source = f" ({p.point.source})" if mixed else ""
        ax.scatter([p.point.intensity], [p.point.rate / 1e9], s=40, marker=markers[i % len(markers)], zorder=3,
                   color=colors[(2 * i) % 20 + (i // 10) % 2],
                   label=f"{_short(p.point.name, 30)}{source}: {p.pct_of_attainable:.0f}% of roof")
    rates = [p.point.rate / 1e9 for p in placements]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(rates + [lo * ceilings.dram_bytes_per_s / 1e9]) / 2, ceilings.fp32_flops / 1e9 * 2)
    ax.set_xlabel(f"arithmetic intensity ({'FP32 ' if ceilings.compute == 'FP32' else ''}FLOP / DRAM byte)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(title or f"{ceilings.compute} roofline, {ceilings.gpu} ({ceilings.source}: {ceilings.detail})", fontsize=11)
    ax.grid(which="both", color="#eeeeee")
    if placements:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)  # never over a point
    fig.tight_layout()
    return fig


def save_figure(fig: "Figure", path: str | os.PathLike[str], *, overwrite: bool = False, dpi: int = 150) -> Path:
    """Write ``fig`` to ``path`` (.png, .svg or .pdf) and close it; refuse to replace an existing file
    unless ``overwrite``. The figure is closed whether or not the save succeeds."""
    _, plt = _pyplot()
    try:
        out = _check_path(path, overwrite)
        fmt = out.suffix.lower().lstrip(".")
        # Write next to the target, then rename: a failed save never leaves half a file behind.
        with atomic_output(out, suffix=out.suffix) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(fig)
    log.info("wrote plot %s", out)
    return out


def plot_roofline(
    placements: Sequence[Placement],
    ceilings: Ceilings,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    title: str | None = None,
) -> Path:
    """Draw the roofline and save it to ``path``; refuse to replace an existing file unless ``overwrite``."""
    _check_path(path, overwrite)  # before drawing: a refused file costs no rendering
    return save_figure(roofline_figure(placements, ceilings, title), path, overwrite=overwrite)


def _check_path(path: str | os.PathLike[str], overwrite: bool) -> Path:
    out = Path(path)
    if out.suffix.lower().lstrip(".") not in FORMATS:
        raise InputError(f"{out}: the file name must end in {', '.join('.' + f for f in FORMATS)}", option="plot")
    if out.exists() and not overwrite:
        raise InputError(f"{out}: the file exists; pass --force to replace it", option="plot")
    if not out.parent.is_dir():
        raise InputError(f"{out}: directory {out.parent} does not exist", option="plot")
    return out
