"""Printing for commands: tables and progress through rich on stdout, JSON, errors on stderr.

Library code does not print; commands call these. Under ``--csv`` (``csv_tables``) every table a
command prints is written as CSV instead, with the cells the terminal table shows; everything else
it prints goes to stderr, so stdout holds only the CSV. One table is plain CSV; several are blocks,
each headed by a ``# title`` line and separated by a blank line.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Optional, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gemmlab.fileio import jsonable, to_json

# Piped or redirected output has no terminal to fit: rich would fall back to 80 columns and fold headers
# ("Versio n") and units ("fract…"). There, tables and cards get PIPE_WIDTH columns — room for every
# table's headers and units, narrow enough that a card's box stays readable in a log or a pager; a
# terminal, or COLUMNS, still sets the width as usual.
PIPE_WIDTH = 160


def _width(stream) -> int | None:
    if os.environ.get("COLUMNS"):
        return None
    try:
        return None if stream.isatty() else PIPE_WIDTH
    except (AttributeError, ValueError):
        return PIPE_WIDTH


# Markup off: what gemmlab prints comes from files, kernels and users (As[tid][k], x[i][j], a path with
# brackets), and rich would read "[tid]" as a style tag and drop it. Deliberate styling is a Text with a
# style (see warn), never markup in a string.
console = Console(width=_width(sys.stdout), markup=False)
err_console = Console(stderr=True, width=_width(sys.stderr), markup=False)


def dumps(obj: Any) -> str:
    """Stable, strict JSON (NaN → null)."""
    return to_json(obj)


def print_json(obj: Any) -> None:
    """The same text as ``dumps``, written as it is encoded: a 10,000-launch analysis is a ~150 MB
    document, which as one string (and its copy) would double the command's memory."""
    parts: list[str] = []
    size = 0
    for chunk in json.JSONEncoder(indent=2, sort_keys=False, allow_nan=False).iterencode(jsonable(obj)):
        parts.append(chunk)
        size += len(chunk)
        if size >= 1 << 20:  # one write a megabyte: a write per token costs more than the encoding
            sys.stdout.write("".join(parts))
            parts, size = [], 0
    sys.stdout.write("".join(parts) + "\n")


# The tables a command printed under --csv, written when it finishes: (title, columns, rows).
_csv_tables: Optional[list[tuple[Optional[str], list[str], list[list[str]]]]] = None


@contextmanager
def csv_tables(enabled: bool = True) -> Iterator[None]:
    """Within this block, tables are collected and written to stdout as CSV at its end (also when
    the command fails after printing some); other output goes to stderr."""
    global _csv_tables
    if not enabled:
        yield
        return
    _csv_tables, saved = [], console.stderr
    console.stderr = True  # prose, notes and cards: to stderr (the console follows sys.stderr as it changes)
    try:
        yield
    finally:
        tables, _csv_tables = _csv_tables, None
        console.stderr = saved
        _write_csv(tables)


def csv_active() -> bool:
    """True inside ``csv_tables``: a command whose output is not a ``print_table`` (analyze's cards)
    prints its CSV tables instead."""
    return _csv_tables is not None


def _write_csv(tables: list) -> None:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for i, (title, columns, rows) in enumerate(tables):
        if len(tables) > 1:
            if i:
                out.write("\n")
            out.write(f"# {title or f'table {i + 1}'}\n")
        w.writerow(columns)
        w.writerows(rows)
    sys.stdout.write(out.getvalue())


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    title: str | None = None,
    caption: str | None = None,
) -> None:
    """A rich table on stdout; cells are str()-ed, None shows as '–'. Every string prints as written
    (``Text``, never markup), whatever console it goes to; a cell that is already a ``Text`` keeps its style.
    Under ``csv_tables`` the same cells are kept for CSV (None as an empty cell)."""
    if _csv_tables is not None:
        _csv_tables.append((title, [str(c) for c in columns],
                            [["" if v is None else (v.plain if isinstance(v, Text) else str(v)) for v in r]
                             for r in rows]))
        return
    t = Table(title=None if title is None else Text(title, style="table.title"),
              caption=None if caption is None else Text(caption, style="table.caption"), show_lines=False)
    cells = [[_cell(v) for v in r] for r in rows]
    for j, c in enumerate(columns):
        # A column is never narrower than its longest word, so a number or a kernel name is never
        # split across lines; cells wrap only at spaces. A table wider than the terminal is printed
        # whole (the terminal wraps its lines) rather than cut.
        words = [w for cell in [Text(str(c))] + [r[j] for r in cells if j < len(r)] for w in cell.plain.split()]
        t.add_column(Text(str(c)), overflow="fold", min_width=max(map(len, words), default=1))
    for r in cells:
        t.add_row(*r)
    console.print(t, crop=False)


def _cell(v: Any) -> Text:
    if isinstance(v, Text):
        return v
    return Text("–" if v is None else str(v))


def warn(message: str) -> None:
    """One line on stderr: a yellow ``gemmlab: warning:`` and the message as written."""
    err_console.print(Text.assemble(("gemmlab: warning:", "yellow"), " ", message), highlight=False)
