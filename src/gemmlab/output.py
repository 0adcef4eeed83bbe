"""Printing for commands: tables and progress through rich on stdout, JSON, errors on stderr.

Library code does not print; commands call these.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from gemmlab.fileio import to_json

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
    sys.stdout.write(dumps(obj) + "\n")


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    title: str | None = None,
    caption: str | None = None,
) -> None:
    """A rich table on stdout; cells are str()-ed, None shows as '–'. Every string prints as written
    (``Text``, never markup), whatever console it goes to; a cell that is already a ``Text`` keeps its style."""
    t = Table(title=None if title is None else Text(title, style="table.title"),
              caption=None if caption is None else Text(caption, style="table.caption"), show_lines=False)
    for c in columns:
        t.add_column(Text(str(c)), overflow="fold")
    for r in rows:
        t.add_row(*[_cell(v) for v in r])
    console.print(t)


def _cell(v: Any) -> Text:
    if isinstance(v, Text):
        return v
    return Text("–" if v is None else str(v))


def warn(message: str) -> None:
    """One line on stderr: a yellow ``gemmlab: warning:`` and the message as written."""
    err_console.print(Text.assemble(("gemmlab: warning:", "yellow"), " ", message), highlight=False)
