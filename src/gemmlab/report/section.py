"""One run's section of the report: its ladder tables, figures, ranking and notes.

A section holds one run, so one ladder (``RunView.ladder_kind``): the SGEMM ladder with GFLOP/s,
% of cuBLAS SGEMM and the FP32 roofline, or the BF16 tensor-core ladder with TFLOP/s, % of cuBLAS
BF16 at its best, % of the dense BF16 tensor peak (per row, at the clock that row's run saw) and a
roofline under that peak with 2-byte A and B. Nothing of one section is drawn in another's chart.
"""

from __future__ import annotations

from typing import Any, Mapping

from gemmlab.bench.results import Row
from gemmlab.report import plots
from gemmlab.report.ladders import Ladder
from gemmlab.report.mattered import mattered_rows
from gemmlab.report.model import RunView
from gemmlab.report.parts import LadderRow, LadderTable, Plot, Section, fmt_value


def slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def card_anchor(key: str, name: str) -> str:
    """The id of a kernel's card; the section key keeps two sections' "cublas" cards apart."""
    return "kernel-" + (f"{key}-" if key else "") + slug(name)


def _plot_key(kind: str, key: str, shape: tuple[int, int, int]) -> str:
    M, N, K = shape
    return f"{kind}-" + (f"{key}-" if key else "") + f"{M}x{N}x{K}"


def _row(view: RunView, key: str, r: Row, notes: Mapping[str, Any]) -> LadderRow:
    note = notes.get(r.name)
    return LadderRow(
        bottleneck=None if note is None else (note.bottleneck or (f"not profiled: {note.error}" if note.error else None)),
        signal=None if note is None else note.signal,
        name=r.name,
        time_ms=r.median_s * 1e3,
        iqr_ms=r.iqr_s * 1e3,
        n_samples=r.measurement.n,
        gflops=r.gflops,
        speedup=view.speedup_vs_previous(r),
        pct_of_cublas=view.pct_of_reference(r),
        correct=r.correct,
        rel_err=r.rel_err,
        reference=r.reference,
        pct_of_peak=view.pct_of_peak(r),
        anchor=card_anchor(key, r.name),
    )


def ladder_rows(view: RunView, shape: tuple[int, int, int], key: str = "") -> list[LadderRow]:
    """The ladder at ``shape`` in rung order, then the reference; speedup is vs the previous rung
    (not for a sweep, whose variants are alternatives rather than steps)."""
    ref = view.reference(shape)
    notes = view.profile
    return [_row(view, key, r, notes) for r in view.ladder(shape) + ([ref] if ref is not None else [])]


def reference_summary(ref: Row | None) -> str:
    """What the cuBLAS row is, as the harness recorded it (for the BF16 ladder: the best-of winner
    and how many candidates were timed), plus the kernel it ran when recorded."""
    if ref is None:
        return ""
    text = str(ref.info.get("summary") or "")
    kernels = ref.launched.get("kernel") or []
    if isinstance(kernels, list) and kernels:
        text += ("; " if text else "") + "kernel " + ", ".join(str(k) for k in kernels)
    return text


def reference_label(ladder: Ladder, ref: Row) -> str:
    """The dashed line's label: a tensor-core row names its winning candidate."""
    winner = ref.launched.get("winner")
    if ladder.dtype != "fp32":
        what = f"cuBLAS {ladder.dtype.upper()}"
        return f"{what} best ({winner})" if winner else what
    return ref.name


def _peak_line(view: RunView, ladder: Ladder) -> tuple[str, str] | None:
    p = view.peak
    flops = p.get("flops")
    if not isinstance(flops, (int, float)) or isinstance(flops, bool) or flops <= 0:
        return None
    label = f"{ladder.peak_name[0].upper()}{ladder.peak_name[1:]} (TFLOP/s)"
    per_clk = p.get(f"{ladder.dtype}_flops_per_clk_per_sm")
    if ladder.dtype != "fp32" and per_clk:
        how = (f" = {p.get('sm_count')} SMs x {per_clk} FLOP/clk x {p.get('clock_mhz')} MHz "
               "(max SM clock); each row's % of peak uses the SM clock its own run saw")
    elif p.get("fp32_lanes_per_sm"):
        how = f" = {p.get('sm_count')} SMs x {p['fp32_lanes_per_sm']} lanes x 2 x {p.get('clock_mhz')} MHz"
    else:
        how = f" ({p['formula']})" if p.get("formula") else ""
    return label, f"{flops / 1e12:,.1f}{how}"


def section_meta(view: RunView) -> tuple[tuple[str, str], ...]:
    """The run's own lines: which ladder, run id, date, command, peak, what cuBLAS is."""
    ladder = view.ladder_kind
    out = [("Types", ladder.types)]
    if view.run_id:
        out.append(("Run", view.run_id))
    out.append(("Date (UTC)", view.created_utc or "unknown"))
    out.append(("Command", view.command or "unknown"))
    peak = _peak_line(view, ladder)
    if peak is not None:
        out.append(peak)
    if ladder.dtype == "fp32" and view.env.get("cublas_math_mode"):
        out.append(("cuBLAS", fmt_value(view.env["cublas_math_mode"])))
    elif ladder.dtype != "fp32":
        out.append(("cuBLAS", ladder.reference + ": the fastest of the candidates timed at the run's shape "
                    "(see the cuBLAS card)"))
    return tuple(out)


def _ladder_plot(view: RunView, t: LadderTable, key: str) -> Plot | None:
    kernels = view.ladder(t.shape)
    if not kernels:
        return None
    M, N, K = t.shape
    ladder = view.ladder_kind
    ref = view.reference(t.shape)
    unit = ladder.rate_unit
    label = reference_label(ladder, ref) if ref is not None else ""
    return Plot(
        key=_plot_key("ladder", key, t.shape),
        title=(f"{ladder.title}: " if ladder.dtype != "fp32" else "") + f"{unit} per rung, M,N,K={M},{N},{K}",
        caption=f"Bars: {unit} from the median time; labels: {unit} and % of "
        + (f"{label} (dashed line)." if ref else "cuBLAS (no reference in this run)."),
        png=plots.png_bytes(plots.ladder_figure(kernels, ref, [view.pct_of_reference(r) for r in kernels],
                                                f"{view.gpu}: {t.title}", unit=unit, reference_label=label or None)),
    )


def _timing_plot(view: RunView, t: LadderTable, key: str) -> Plot | None:
    M, N, K = t.shape
    results = [r for r in view.results if r.shape == t.shape]
    if not any(r.measurement.n > 1 for r in results):
        return None
    ref = view.reference(t.shape)
    ordered = view.ladder(t.shape) + ([ref] if ref else [])
    ladder = view.ladder_kind
    return Plot(
        key=_plot_key("timing", key, t.shape),
        title=(f"{ladder.title}: t" if ladder.dtype != "fp32" else "T") + f"iming distribution, M,N,K={M},{N},{K}",
        caption="Every timed run. Left: ms (box = quartiles, line = median; log axis when "
        "medians differ by more than 10x). Right: the same runs as % from each kernel's median.",
        png=plots.png_bytes(plots.timing_figure(ordered, f"{view.gpu}: time per run")),
    )


def _sweep_plots(view: RunView, key: str) -> tuple[list[Plot], list[str]]:
    out = []
    grids = plots.sweep_grids(view.sweep)
    for g in grids:
        best = g.best()
        where = ", ".join(f"{k}={v}" for k, v in best[0].items()) + f" at {best[1]:,.0f} GFLOP/s" if best else "none"
        out.append(
            Plot(
                key="sweep-" + (f"{key}-" if key else "") + (slug(g.title)[:60] or "plot"),
                title=g.title,
                caption="GFLOP/s from the median time of each correct configuration (a variant that failed "
                f"its check is left blank); best (outlined): {where}.",
                png=plots.png_bytes(plots.sweep_figure(g)),
            )
        )
    notes = ["Sweep heatmap omitted: no parameter varies across the sweep points."] if view.sweep and not grids else []
    return out, notes


def _roofline_ceilings(view: RunView) -> tuple[Any, str]:
    """(ceilings for this run's ladder, or None; why none). The BF16 ladder's compute roof is the
    run's dense BF16 tensor peak at the maximum SM clock; its memory roof is the GPU's DRAM roof."""
    c = view.ceilings
    if c is None:
        return None, (f"Roofline omitted: no ceilings for {view.gpu} (not in gemmlab's spec table and not measured; "
                      "run `gemmlab ceilings --measure` on it).")
    ladder = view.ladder_kind
    if ladder.dtype == "fp32":
        return c, ""
    flops = view.peak.get("flops")
    if not isinstance(flops, (int, float)) or isinstance(flops, bool) or flops <= 0:
        return None, f"{ladder.title} roofline omitted: the run recorded no {ladder.peak_name}."
    clock = view.peak.get("clock_mhz")
    return c.with_compute_roof(float(flops), ladder.roof, f"the run's {ladder.peak_name}, {flops / 1e12:,.1f} TFLOP/s "
                               f"at {'the max SM clock' if clock is None else f'{clock} MHz (max SM clock)'}"), ""


def _roofline_plots(view: RunView, key: str) -> tuple[list[Plot], list[str]]:
    """One roofline per shape: analytic GEMM counts (2·M·N·K FLOP, compulsory DRAM bytes) and the
    measured median time, against the run's ceilings."""
    from gemmlab.analysis.roofline import place, point_from_gemm

    c, why = _roofline_ceilings(view)
    if c is None:
        return [], [why]
    ladder = view.ladder_kind
    out = []
    for shape in view.shapes:
        M, N, K = shape
        rows = [r for r in view.ladder(shape) if r.correct is not False]
        ref = view.reference(shape)
        rows += [ref] if ref is not None else []
        if not rows:
            continue
        placements = [place(point_from_gemm(r.name, *r.shape, r.median_s, beta_nonzero=r.spec.beta != 0,
                                            elem_bytes=ladder.in_bytes, out_bytes=ladder.out_bytes), c) for r in rows]
        sizes = "" if ladder.dtype == "fp32" else (f" ({ladder.in_bytes}-byte A and B, {ladder.out_bytes}-byte C)")
        out.append(
            Plot(
                key=_plot_key("roofline", key, shape),
                title=f"{ladder.roof[0].upper()}{ladder.roof[1:]} roofline, M,N,K={M},{N},{K}",
                caption=f"Ceilings: {c.source} ({c.detail}). Points: 2·M·N·K FLOP over the median time; bytes are the "
                f"compulsory DRAM traffic{sizes} (each matrix crosses DRAM once), so every kernel of one shape shares "
                "one intensity, an upper bound: a kernel that re-reads its inputs from DRAM sits further left. "
                "For measured bytes use `gemmlab roofline --from-capture`.",
                png=plots.png_bytes(plots.roofline_figure(placements, c, f"{view.gpu}: roofline at {M}x{N}x{K}")),
            )
        )
    return out, []


def _mattered_rows(view: RunView) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(str(cell) for cell in row) for row in mattered_rows(view.mattered))


def _caption(ladder: Ladder) -> str:
    text = (f"Time: median over the timed runs; IQR: spread between the 25th and 75th percentile; {ladder.rate_unit} "
            "= 2·M·N·K / median time; speedup: previous rung's median / this median; % of cuBLAS: of "
            f"{ladder.reference} measured in the same run.")
    if ladder.dtype != "fp32":
        text += (f" {ladder.peak_column}: of the {ladder.peak_name} at the SM clock that row's run saw "
                 "(SMs x FLOP/clk x clock).")
    return text


def build_section(view: RunView, key: str, with_plots: bool = True) -> Section:
    """Everything one run contributes to the report; ``key`` keeps its anchors and plot names unique."""
    ladder = view.ladder_kind
    tables = []
    for s in view.shapes:
        ref = view.reference(s)
        note = reference_summary(ref) if ladder.dtype != "fp32" else ""
        tables.append(LadderTable(s, tuple(ladder_rows(view, s, key)), ladder, view.kind, note))
    notes: list[str] = []
    figs: list[Plot] = []
    if with_plots:
        for t in tables:
            for p in (_ladder_plot(view, t, key), _timing_plot(view, t, key)):
                if p is not None:
                    figs.append(p)
            if not any(r.measurement.n > 1 for r in view.results if r.shape == t.shape):
                M, N, K = t.shape
                notes.append(f"Timing distribution at M,N,K={M},{N},{K} omitted: the run kept one sample per kernel.")
        sweep_figs, sweep_notes = _sweep_plots(view, key)
        roof_figs, roof_notes = _roofline_plots(view, key)
        figs += sweep_figs + roof_figs
        notes += sweep_notes + roof_notes
    else:
        notes.append("Plots omitted (--no-plots).")
    kind = "" if view.kind == "ladder" else f" ({view.kind})"
    return Section(key, ladder.title + kind, section_meta(view), tuple(tables), tuple(figs), tuple(notes),
                   _mattered_rows(view), _caption(ladder))


def section_keys(views: list[RunView]) -> list[str]:
    """A unique key per section: "" for the first SGEMM run (its anchors and plot names as before),
    the ladder's key ("bf16") for the first run of another ladder, then "-run-<id>" or "-<n>" suffixes."""
    keys: list[str] = []
    for i, v in enumerate(views):
        base = v.ladder_kind.key
        k = base
        if k in keys:
            k = f"{base or 'fp32'}-run-{v.run_id}" if v.run_id else f"{base or 'fp32'}-{i + 1}"
        n = 2
        while k in keys:
            k, n = f"{base or 'fp32'}-{i + 1}-{n}", n + 1
        keys.append(k)
    return keys


def envs(views: list[RunView]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """Each run's recorded environment: (heading, rows)."""
    return tuple((f"{v.ladder_kind.title}" + (f", run {v.run_id}" if v.run_id else ""),
                  tuple((str(k), fmt_value(val)) for k, val in sorted(v.env.items()))) for v in views)


def card_stats(row: LadderRow, ladder: Ladder) -> str:
    """A card's one line: time, rate, % of cuBLAS (and of peak), speedup, check."""
    from gemmlab.report.parts import fmt_check, fmt_ms, fmt_pct, fmt_rate, fmt_speedup

    peak = f" · {fmt_pct(row.pct_of_peak)} of {ladder.peak_name}" if ladder.dtype != "fp32" and row.pct_of_peak else ""
    return (f"{fmt_ms(row.time_ms)} ms · {fmt_rate(row.gflops, ladder)} {ladder.rate_unit} · "
            f"{fmt_pct(row.pct_of_cublas)} of cuBLAS{peak} · "
            f"{'reference' if row.reference else fmt_speedup(row.speedup)} · {fmt_check(row)}")


def candidate_rows(r: Row) -> tuple[tuple[str, ...], ...]:
    """A tensor-core reference's timed candidates (its ``launched`` record), fastest first as timed."""
    launched: Mapping[str, Any] = r.launched
    rows = []
    for c in launched.get("candidates") or []:
        if not isinstance(c, Mapping):
            continue
        ms, tf = c.get("median_ms"), c.get("tflops")
        kernels = c.get("kernels") or []
        note = "winner" if c.get("name") == launched.get("winner") else ""
        if c.get("excluded"):
            note = f"excluded: {c['excluded']}"
        rows.append((str(c.get("name") or "?"), "–" if not isinstance(ms, (int, float)) else f"{ms:,.4f}",
                     "–" if not isinstance(tf, (int, float)) else f"{tf:,.1f}",
                     ", ".join(str(k) for k in kernels) if isinstance(kernels, list) else str(kernels), note))
    return tuple(rows)
