"""Printing a run record as terminal tables, by its kind: what the measuring commands print after a
run and what ``gemmlab runs ID`` prints for a stored one. One function per kind, picked from
``SHOW`` by ``record.kind``.
"""

from __future__ import annotations

from typing import Callable

from gemmlab.bench.results import RunRecord
from gemmlab.bench.stats import SAME_MEANS
from gemmlab.output import console, err_console, print_table
from gemmlab.report import tables


def ladder(record: RunRecord) -> None:
    shape = record.meta.get("shape") or {}
    title_shape = f"{shape.get('M')}x{shape.get('N')}x{shape.get('K')}"
    if record.kind == "sweep":
        columns, cells = tables.sweep_table(record)
        print_table(columns, cells, title=f"SGEMM sweep, {title_shape}", caption=tables.caption(record))
    else:
        from gemmlab.report.ladders import ladder_of
        from gemmlab.report.model import run_types

        name = ladder_of(*run_types(record)).name
        print_table(tables.ladder_columns(record), tables.ladder_rows(record), title=f"{name}, {title_shape}",
                    caption=tables.caption(record))
    for s in record.meta.get("skipped") or []:
        err_console.print(f"skipped: {s['reason']}", markup=False, highlight=False)


def lesson(record: RunRecord) -> None:
    """A lesson run as tables: each point, the verdicts, the article's table, the sentence."""
    from gemmlab.report import lessons as L

    ceiling = record.meta.get("ceiling") or {}
    cap = "vs baseline: baseline median / this median; rate: the variant's own bytes (or FLOP) / median"
    if ceiling.get("copy_bytes_per_s"):
        cap += f"; copy ceiling {ceiling['copy_bytes_per_s'] / 1e9:,.0f} GB/s ({ceiling.get('source')})"
    for title, rows in L.run_tables(record):
        print_table(L.RUN_COLUMNS, rows, title=f"{title} on {record.gpu}", caption=cap)
    print_table(("Change", "Point", "Verdict"), L.verdict_rows(record), title="Did the optimisation help here?",
                caption=f"same: {SAME_MEANS}")
    art = L.article_rows(str(record.meta.get("lesson")))
    if art:
        print_table(("Method", "MX330 (ms)", "A4000 (ms)"), art, title="The article's figures (as published)")
    console.print(L.sentence(record), highlight=False, soft_wrap=True, markup=False)


def shapes(record: RunRecord) -> None:
    """A shapes run as the map table, then the worst shapes and the misses."""
    from gemmlab.shapes import shapemap

    smap = shapemap.from_record(record)
    ceiling = record.meta.get("ceiling") or {}
    cap = (f"% of cuBLAS = {smap.reference} median / rung median (same process, interleaved rounds"
           + (", TF32 off" if smap.dtype == "fp32" else "") + "); GB/s: the minimum traffic "
           "(A, B read once, C written once) / median; (noisy): a side's IQR / median over 5%; (order): "
           "faster than the reference only in the rounds where one side ran first; (host), (host: ref): "
           "the GPU may have waited for the rung's or the reference's host inside a timed run "
           "(% may read low, high)")
    if ceiling.get("copy_bytes_per_s"):
        cap += f"; copy ceiling {ceiling['copy_bytes_per_s'] / 1e9:,.0f} GB/s ({ceiling.get('source')})"
    print_table(shapemap.TERMINAL_COLUMNS, shapemap.table_rows(smap, terminal=True),
                title=f"Shape map: {record.meta.get('rung')} vs {smap.reference} on {record.gpu} "
                      f"(grid {record.meta.get('grid')})", caption=cap)
    for line in shapemap.summary_lines(smap):
        console.print(line, highlight=False, soft_wrap=True, markup=False)


def user(record: RunRecord) -> None:
    """A run of the user's own kernel: the table (kernel, cuBLAS), then where it sits on the ladder,
    the shapes it was checked at, and how it was launched and compiled."""
    from gemmlab.report.user_lines import user_lines

    kernel = record.meta.get("kernel") or {}
    shape = record.meta.get("shape") or {}
    dtype = record.meta.get("dtype", "fp32")
    entry = "ModelNew" if record.meta.get("convention") == "kernelbench" else "custom_kernel"
    title = f"{kernel.get('name', 'your kernel')} ({kernel.get('function') or entry})" + \
        (f", {dtype} " if dtype != "any" else ", ")
    if "M" in shape:
        title += f"{shape['M']}x{shape['N']}x{shape['K']}"
    else:
        title += ", ".join(f"{k}={v}" for k, v in shape.items())
    columns, caption = tables.ladder_columns(record), tables.caption(record)
    if record.meta.get("reference_name"):  # a spec's kernel is compared with the spec's own reference
        columns = tuple("% of reference" if c == "% of cuBLAS" else c for c in columns)
        caption = (f"% of reference: {record.meta['reference_name']} median / this median x 100. "
                   + caption.replace("M,N,K = None,None,None FP32; ", ""))  # not a GEMM: no M, N, K
    print_table(columns, tables.ladder_rows(record), title=f"{title} on {record.gpu}", caption=caption)
    from gemmlab.output import csv_active

    out = err_console if csv_active() else console  # with --csv, stdout holds the CSV alone
    for line in user_lines(record):
        out.print(line, highlight=False, soft_wrap=True, markup=False)


SHOW: dict[str, Callable[[RunRecord], None]] = {
    "ladder": ladder, "bench": ladder, "sweep": ladder, "lesson": lesson, "shapes": shapes, "user": user,
}


def show(record: RunRecord) -> None:
    SHOW[record.kind](record)
