"""Split what ncu wrote into its own messages, the program's output, and CSV blocks.

An exported file (``ncu -i rep --csv``) is one CSV block. What ``ncu --csv APP`` prints live
mixes three things on one stream: ncu's messages (``==PROF== Connected to process 2195``,
``==WARNING== ...``, ``==ERROR== ERR_NVGPUCTRPERM ...``), whatever the program printed, and the
CSV. ncu quotes every CSV cell, so a CSV row starts with ``"``; a row belongs to the block of the
last header line (first cell ``ID``) and is kept when its first cell is an integer launch ID (or
empty: the units row of the raw page). Anything else is program output and is skipped.

A cell may hold a newline inside quotes, so a line with an odd number of quotes is joined with
the next ones until the quotes balance; an unbalanced quote at the end of the text means the
output was cut in the middle of a cell (``NcuOutput.cut_line``).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

# ncu's own message lines: ==PROF==, ==WARNING==, ==ERROR==, ==INFO== ...
_NOTE = re.compile(r"^==[A-Z]+==")
_ROW_START = re.compile(r'^"[\d,]*",')  # an ncu row: quoted launch ID (empty in the units row)
_LAUNCH_ID = re.compile(r"^\d[\d,]*$")  # "7", or "1,234" should ncu group the digits
# ==PROF== Profiling "gemm_tiled16" - 0: 0%....50%....100% - 38 passes
_PASSES = re.compile(r'^==PROF== Profiling "(?:[^"]*)" - (\d+): .* - (\d+) pass(?:es)?\s*$')


@dataclass
class CsvBlock:
    """One CSV header and the ncu rows under it, each with its 1-based line number."""

    header: list[str]
    header_line: int
    rows: list[tuple[int, list[str]]] = field(default_factory=list)
    # True when the last row is the last line of the text and no newline ended it: ncu ends
    # every line, so such a row may have been cut exactly at a cell boundary.
    open_end: bool = False


@dataclass
class NcuOutput:
    blocks: list[CsvBlock]
    notes: list[str]  # ncu's message lines, in order
    other_lines: int  # non-empty lines that were neither ncu messages nor ncu CSV rows
    cut_line: int | None = None  # line where a quoted cell was still open at the end of the text
    # lines that start like an ncu row ("3",...) but are not valid CSV: (line, csv's complaint)
    bad_rows: list[tuple[int, str]] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [n for n in self.notes if n.startswith("==ERROR==")]

    @property
    def is_live(self) -> bool:
        """Whether this looks like what ncu printed to a terminal rather than an export."""
        return bool(self.notes) or self.other_lines > 0


def is_header(cells: list[str]) -> bool:
    return bool(cells) and cells[0] == "ID" and "Kernel Name" in cells


def split(text: str) -> NcuOutput:
    """Separate ncu messages, program output and CSV blocks of ``text`` (one pass, linear)."""
    lines = text.splitlines()
    ends_with_newline = text.endswith(("\n", "\r"))
    blocks: list[CsvBlock] = []
    notes: list[str] = []
    other = 0
    current: CsvBlock | None = None
    cut_line = None
    bad_rows: list[tuple[int, str]] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        lineno = i + 1
        if _NOTE.match(line):
            notes.append(line.rstrip())
            i += 1
            continue
        if not line.startswith('"'):
            if line.strip():
                other += 1
            i += 1
            continue
        chunk, j = line, i
        quotes = line.count('"')
        while quotes % 2 and j + 1 < n:
            j += 1
            chunk += "\n" + lines[j]
            quotes += lines[j].count('"')
        if quotes % 2:
            if current is not None or lineno == 1:
                cut_line = lineno
                break
            other += 1  # a stray quote in the program's own output
            i = j + 1
            continue
        try:
            cells = next(csv.reader([chunk]))
        except csv.Error as e:
            if _ROW_START.match(line):
                bad_rows.append((lineno, str(e)))
            else:
                other += 1
            i = j + 1
            continue
        if is_header(cells):
            if current is None or cells != current.header:
                current = CsvBlock(cells, lineno)
                blocks.append(current)
        elif current is not None and (_LAUNCH_ID.match(cells[0]) or cells[0] == ""):
            current.rows.append((lineno, cells))
            current.open_end = j == n - 1 and not ends_with_newline
        else:
            other += 1
        i = j + 1
    return NcuOutput(blocks, notes, other, cut_line, bad_rows)


def replay_passes(notes: list[str]) -> dict[int, int]:
    """Launch ID → replay passes, from ncu's ``==PROF== Profiling "k" - ID: ... - N passes`` lines."""
    out = {}
    for note in notes:
        m = _PASSES.match(note)
        if m:
            out[int(m.group(1))] = int(m.group(2))
    return out
