"""Read an exported Nsight Compute CSV page a line at a time, never holding its whole text.

``load.read_file`` tries this first for a regular file. It reads the common case: an export as ncu
writes it (``ncu -i R --page raw|details --csv``), the header on the first line, then one row a
line. A raw page's rows go to ``ncu_csv.RawColumns`` a batch at a time, a details page's to
``ncu_long.read_long_block`` a few thousand rows (whole launches) at a time. The launches are those
``load.parse_text`` makes of the same text.

Anything else makes ``read_export`` answer None, and the caller reads the text whole as before, so
such a file gets exactly the launches, notes or one-line error it always got: ncu's messages or the
program's lines (live output), a cell holding a line break, a second header, a damaged row, a NUL
byte, bytes that are not UTF-8, or a character that ``str.splitlines`` breaks a line at. The one
exception is a file cut short in its last line (the usual damage: a copy or a write that stopped);
that is said here, in the words ``load.parse_text`` uses.
"""

from __future__ import annotations

import csv
import itertools
import os
import re
from pathlib import Path
from typing import BinaryIO, Iterator, Optional

from gemmlab.errors import InputError
from gemmlab.profile import ncu_csv, ncu_long
from gemmlab.profile.metrics import COMMAND_LINE_SECTION
from gemmlab.profile.ncu_output import CsvBlock, is_header
from gemmlab.profile.records import KernelLaunch

_ROW_START = re.compile(r'^"[\d,]*",')
_LAUNCH_ID = re.compile(r"^\d[\d,]*$")
# NUL (binary data), and the ASCII characters where str.splitlines breaks a line besides \n
_BREAKS = (b"\x00", b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")
_BREAK_BYTES = b"".join(_BREAKS)
_WIDE_BREAKS = re.compile("[\x85\u2028\u2029]")
_BOM = b"\xef\xbb\xbf"
LONG_CHUNK_ROWS = 4096  # details rows handed to read_long_block at once (whole launches)


class NotPlain(Exception):
    """The file is not a plain export: read it whole instead."""


def read_export(path: Path, source: str, metrics: Optional[str] = None) -> Optional[list[KernelLaunch]]:
    """The launches of the exported page at ``path``, or None when it is not a plain export.

    ``metrics``: which raw-page metric columns to read (``ncu_csv.raw_keep``). Raises the InputError
    ``load.parse_text`` would for a file cut short in its last line.
    """
    try:
        with open(path, "rb") as f:
            lines = _Lines(f, source)
            header_line, header = lines.header()
            if ncu_long.is_long(header):
                return _long_page(lines, header, header_line, source)
            keep = ncu_csv.raw_keep(metrics, os.fstat(f.fileno()).st_size)
            return _raw_page(lines, header, source, keep)
    except (NotPlain, OSError):
        return None


class _Lines:
    """The rows of a plain export: (line number, cells), checked as ``ncu_output.split`` would."""

    def __init__(self, f: BinaryIO, source: str):
        self.f = f
        self.source = source
        self.lineno = 0
        self.last_raw = b""  # the last line read, as bytes (does it end with a newline?)
        self.limit = csv.field_size_limit()

    def _next_line(self) -> Optional[str]:
        raw = self.f.readline()
        if not raw:
            return None
        self.lineno += 1
        self.last_raw = raw
        if self.lineno == 1 and raw.startswith(_BOM):
            raw = raw[len(_BOM):]
        body = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1] if raw.endswith(b"\n") else raw
        if (any(c in body for c in _BREAKS) if len(body) > 4096  # a search each (memchr) on a long line
                else len(body.translate(None, _BREAK_BYTES)) != len(body)):
            raise NotPlain
        try:
            line = body.decode("utf-8")
        except UnicodeDecodeError:
            raise NotPlain from None
        if not body.isascii() and _WIDE_BREAKS.search(line):
            raise NotPlain
        return line

    def _rest_is_blank(self) -> bool:
        while chunk := self.f.read(1 << 16):
            if chunk.strip():
                return False
        return True

    def _parse(self, line: str) -> list[str]:
        cells = split_line(line, self.limit)
        if cells is None:  # unbalanced quotes: a cell goes on to the next line, or the file was cut
            if self._rest_is_blank():
                raise InputError(f"{self.source}: line {self.lineno} ends inside a quoted cell; the CSV is "
                                 "truncated (expected a complete ncu --csv export)")
            raise NotPlain
        return cells

    def header(self) -> tuple[int, list[str]]:
        while (line := self._next_line()) is not None:
            if not line.strip():
                continue
            if not line.startswith('"ID",'):
                raise NotPlain  # ncu's messages or the program's output first: live output
            cells = self._parse(line)
            if not is_header(cells):
                raise NotPlain
            return self.lineno, cells
        raise NotPlain

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        last_id = None  # a details page has ~100 rows a launch: its ID is checked once
        while (line := self._next_line()) is not None:
            if not _ROW_START.match(line):  # (a message starts with "==", never with a quote)
                if line.strip():
                    raise NotPlain  # a message, the program's output, another header
                continue
            cells = self._parse(line)
            if cells[0] != last_id:
                if not (_LAUNCH_ID.match(cells[0]) or cells[0] == ""):
                    raise NotPlain
                last_id = cells[0]
            yield self.lineno, cells

    def ends_without_newline(self) -> bool:
        return not self.last_raw.endswith((b"\n", b"\r"))


def split_line(line: str, limit: int = 131072) -> Optional[list[str]]:
    """The cells of one CSV line, exactly as ``csv.reader`` reads it; None when its quotes do not
    balance (a cell goes on past the line).

    ncu quotes every cell and doubles a quote inside one (NVTX range names: ``"523  ""<default
    domain>:step:..."" "``); a details page's metric row ends with a comma. Such a line is split on
    ``","``: when every piece's quotes come in adjacent pairs, the line is exactly the csv module's
    quoting of the pieces with their pairs undoubled, so those are its cells. Any other line, or one
    longer than ``limit`` (csv's field size limit), goes to the csv module, whose csv.Error makes the
    file not plain.
    """
    quotes = line.count('"')
    if quotes % 2:
        return None
    trailing = line.endswith('",')
    if line.startswith('"') and (trailing or line.endswith('"')) and 2 <= len(line) <= limit:
        cells = line[1:-2 if trailing else -1].split('","')
        inside = quotes - 2 * len(cells)  # quotes within cells
        k = 0
        while inside > 0 and k < len(cells):
            cell = cells[k]
            n = cell.count('"')
            if n:
                if '"' in cell.replace('""', ""):
                    return _csv_cells(line)
                cells[k] = cell.replace('""', '"')
                inside -= n
            k += 1
        if inside == 0:
            if trailing:
                cells.append("")
            return cells
    return _csv_cells(line)


def _csv_cells(text: str) -> list[str]:
    try:
        return next(csv.reader([text]))
    except csv.Error:
        raise NotPlain from None


def _raw_page(lines: _Lines, header: list[str], source: str, keep: ncu_csv.Keep) -> list[KernelLaunch]:
    rows = lines.rows()
    first = next(rows, None)
    if first is None:
        raise NotPlain  # no units row and no kernel rows: parse_text says which
    id_i = ncu_csv._identity(header)["ID"]
    has_units = not first[1][id_i].strip()
    if has_units and len(first[1]) != len(header):
        raise NotPlain
    units = first[1] if has_units else [""] * len(header)

    def kernel_rows() -> Iterator[tuple[int, list[str]]]:
        for lineno, row in (rows if has_units else itertools.chain((first,), rows)):
            what = ncu_csv.bad_row(lineno, row, header, id_i)
            if what is not None:  # refused here if only blank lines follow, else parse_text says why
                if next(rows, None) is not None:
                    raise NotPlain
                raise InputError(ncu_csv.bad_row_error(source, what))
            yield lineno, row

    launches = ncu_csv.rows_to_launches(kernel_rows(), header, units, source, "raw-csv", keep, None,
                                        nul_free=True)  # a line holding a NUL is not plain
    if not launches:
        raise NotPlain
    return launches


def _long_page(lines: _Lines, header: list[str], header_line: int, source: str) -> list[KernelLaunch]:
    """A details (or --metrics) page: its rows in chunks of whole launches, each read by read_long_block;
    a launch whose rows are not together, or any row read_long_block refuses, makes the file not plain
    (then the whole text is read, and says what is wrong as it always did)."""
    col = {h: i for i, h in enumerate(header)}
    id_i = {h: i for h, i in col.items() if h in ncu_csv.ID_COLUMNS}["ID"]
    pid_i = col.get("Process ID")
    sec_i, name_i = header.index("Section Name"), header.index("Metric Name")
    launches: list[KernelLaunch] = []
    sections: set[str] = set()
    done: set[tuple[str, str]] = set()  # launches already read
    chunk: list[tuple[int, list[str]]] = []
    chunk_keys: set[tuple[str, str]] = set()
    key = None

    def read(rows, open_end: bool) -> None:
        try:
            launches.extend(ncu_long.read_long_block(CsvBlock(header, header_line, rows, open_end),
                                                     source, "details-csv"))
        except InputError:
            raise NotPlain from None

    for lineno, row in lines.rows():
        if len(row) > name_i and row[name_i]:
            sections.add(row[sec_i])
        raw_id = row[id_i].strip() if len(row) > id_i else ""
        k = (row[pid_i] if pid_i is not None and pid_i < len(row) else "", raw_id)  # as read_long_block
        if k != key:
            if k in done:
                raise NotPlain
            if len(chunk) >= LONG_CHUNK_ROWS:
                read(chunk, False)
                done |= chunk_keys
                chunk, chunk_keys = [], set()
            key = k
            chunk_keys.add(k)
        chunk.append((lineno, row))
    if not chunk:
        raise NotPlain
    read(chunk, lines.ends_without_newline() and chunk[-1][0] == lines.lineno)
    if not launches:
        raise NotPlain
    fmt = "metrics-csv" if sections == {COMMAND_LINE_SECTION} else "details-csv"
    for launch in launches:
        launch.format = fmt
    return launches
