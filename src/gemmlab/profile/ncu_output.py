"""Split what ncu wrote into its own messages, the program's output, and CSV blocks.

An exported file (``ncu -i rep --csv``) is one CSV block. What ``ncu --csv APP`` prints live
mixes three things on one stream: ncu's messages (``==PROF== Connected to process 2195``,
``==WARNING== ...``, ``==ERROR== ERR_NVGPUCTRPERM ...``), whatever the program printed, and the
CSV. ncu quotes every CSV cell, so a CSV row starts with a quoted launch ID (``"3",``; empty in the raw
page's units row) and a header with ``"ID",``. A row belongs to the block of the last header line
above it. Anything else is program output and is skipped.

A cell may hold a line break inside quotes, so a row with an odd number of quotes is joined with
the following lines until the quotes balance, but not across the start of another row or message:
then the row is damaged (``NcuOutput.bad_rows``). An unbalanced quote at the end of the text means
the output was cut in the middle of a cell (``NcuOutput.cut_line``).
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


def _starts_record(line: str) -> bool:
    return bool(_ROW_START.match(line) or _NOTE.match(line) or line.startswith('"ID",'))


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
        if not (_ROW_START.match(line) or line.startswith('"ID",')):
            if line.strip():
                other += 1  # the program's output (ncu rows start with a quoted launch ID)
            i += 1
            continue
        # A quoted cell may hold a line break: join lines until the quotes balance, but never
        # across the start of the next row or message (then this row is damaged, not multi-line).
        parts, j = [line], i
        quotes = line.count('"')
        while quotes % 2 and j + 1 < n and not _starts_record(lines[j + 1]):
            j += 1
            parts.append(lines[j])
            quotes += lines[j].count('"')
        ours = current is not None or line.startswith('"ID",')  # not program output before any CSV
        if quotes % 2:
            if ours and j == n - 1:
                cut_line = lineno
                break
            if ours:
                bad_rows.append((lineno, "a quoted cell is not closed"))
            else:
                other += 1
            i = j + 1
            continue
        try:
            cells = next(csv.reader(["\n".join(parts)]))
        except csv.Error as e:
            if ours:
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
