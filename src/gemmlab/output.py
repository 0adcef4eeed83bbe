"""Printing for commands: tables and progress through rich on stdout, JSON, errors on stderr.

Library code does not print; commands call these.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Sequence

from rich.console import Console
from rich.table import Table

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


console = Console(width=_width(sys.stdout))
err_console = Console(stderr=True, width=_width(sys.stderr))


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
    """A rich table on stdout; cells are str()-ed, None shows as '–'."""
    t = Table(title=title, caption=caption, show_lines=False)
    for c in columns:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*["–" if v is None else str(v) for v in r])
    console.print(t)


def warn(message: str) -> None:
    err_console.print(f"[yellow]gemmlab: warning:[/] {message}", highlight=False)
