"""A log-log roofline chart (matplotlib, Agg backend) written to PNG, SVG or PDF."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path
from typing import Sequence

from gemmlab.analysis.roofline import Ceilings, Placement
from gemmlab.errors import InputError

log = logging.getLogger(__name__)
FORMATS = ("png", "svg", "pdf")


def plot_roofline(
    placements: Sequence[Placement],
    ceilings: Ceilings,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    title: str | None = None,
) -> Path:
    """Draw the roofs and the points; refuse to replace an existing file unless ``overwrite``."""
    out = Path(path)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError(f"--plot {out}: the file name must end in {', '.join('.' + f for f in FORMATS)}")
    if out.exists() and not overwrite:
        raise InputError(f"--plot {out}: the file exists; pass --force to replace it")
    if not out.parent.is_dir():
        raise InputError(f"--plot {out}: directory {out.parent} does not exist")

    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    ridge = ceilings.ridge
    ais = [p.point.intensity for p in placements] or [ridge]
    lo = min(min(ais), ridge) / 8
    hi = max(max(ais), ridge) * 8
    fig, ax = plt.subplots(figsize=(8, 5.5))
    try:
        xs = [lo, ridge, hi]
        ys = [ceilings.attainable(x) / 1e12 for x in xs]
        ax.plot(xs, ys, color="black", linewidth=2, label=f"roof ({ceilings.source}: {ceilings.detail})")
        ax.axvline(ridge, color="grey", linestyle=":", linewidth=1)
        ax.annotate(
            f"ridge {ridge:.1f} FLOP/B",
            (ridge, ceilings.fp32_flops / 1e12),
            textcoords="offset points",
            xytext=(4, -14),
            fontsize=8,
            color="grey",
        )
        markers = {"ncu": "o", "analytic": "s"}
        for p in placements:
            ax.scatter(
                p.point.intensity,
                p.point.rate / 1e12,
                marker=markers.get(p.point.source, "o"),
                zorder=3,
                label=f"{p.point.name} ({p.point.source}): {p.pct_of_attainable:.0f}% of roof",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity [FP32 FLOP / DRAM byte]")
        ax.set_ylabel("FP32 throughput [TFLOP/s]")
        ax.set_title(title or f"FP32 roofline, {ceilings.gpu}")
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        # Write next to the target, then rename: a failed save never leaves half a file behind.
        fd, tmp = tempfile.mkstemp(prefix=".roofline-", suffix=out.suffix, dir=out.parent)
        os.close(fd)
        try:
            fig.savefig(tmp, format=fmt, dpi=150)
            os.replace(tmp, out)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    finally:
        plt.close(fig)
    log.info("wrote roofline plot %s", out)
    return out
