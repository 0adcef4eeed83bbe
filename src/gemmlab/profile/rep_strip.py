"""A lean temporary copy of a ``.ncu-rep``: the results without their section bodies, without the
kernels' sources and, when asked, without the metric results gemmlab does not read.

ncu_report decodes a whole result when a launch is first touched (``IRange.action_by_idx``), and
most of that time goes to two things gemmlab never reads: the section bodies, i.e. the layout of
every section page of the GUI (tables, charts — the Tensor Core roofline chart alone is ~550 KB a
launch in a ``--set full`` capture; gemmlab does not call ``IAction.sections()``), and the ~1,800
metrics a launch gemmlab does not read, among them instanced ones carrying per-instance values (per
instruction, per unit). On the 20-launch benchmark report ``action_by_idx`` takes ~50 ms a launch as
written, ~10 ms without the section bodies, and ~5 ms without the unread metrics too; the decoded
names, metric values and rule results of what is kept are the same (tests/test_ncu_rep_speed.py
compares them on every fixture report). The blocks of sources (each kernel's SASS, PTX and source
text: 195 of the 320 MB of the corpus's 90-launch ``--set full`` report) are not read for records
either (``source_lines`` reads them from the report as written); leaving them out makes the copy
quick to write: 10 MB for that report (docs/results/load-scale-2026-11-25/).

The layout, as ncu 2025.3 writes it (the protobuf messages of NVIDIA's ProfilerReport.proto): the
``NVR\\0`` magic, a length-prefixed file header, then blocks: a length-prefixed BlockHeader
(field 1 NumSources, 2 NumResults, 4 the string table, 5 PayloadSize) and its payload; a block of
results only holds NumResults length-prefixed ProfileResult messages, whose field 13 repeats the
metric results (each starting with its name as an index into the string table) and field 17
the sections (each starting with the section's identifier and display name). A report of many
launches has one results block per launch, and only the first one's header holds the string table:
the later ones' tables are empty, and their metric results name strings of the first (``_Names``).
Anything else — another layout, a field 17 that does not look like a section, a metric result that
names no string of the table, a string table that does not hold metric names, an empty table after
two different ones, sources and results in one block — leaves the report as it is (``lean_copy``
yields the original), so an unexpected file costs speed, not values; and ``ncu_rep.read_rep`` reads
the original if the copy fails to decode.
The user's file is only read; the copy goes to a temporary folder and is removed after reading.
``GEMMLAB_NCU_REP_LEAN=0`` turns this off.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Callable, Iterator, Optional

from gemmlab.profile import protobuf as pb
from gemmlab.profile.protobuf import Malformed

SECTIONS_FIELD = 17  # ProfileResult: repeated section (identifier, display name, body)
METRICS_FIELD = 13  # ProfileResult: repeated metric result (name as a string-table index first)
STRINGS_FIELD = 4  # BlockHeader: the string table (repeated string, field 1)
_IDENT = re.compile(rb"[A-Za-z][A-Za-z0-9_]*")


class Layout(Malformed):
    """The file is not laid out as expected."""


def enabled() -> bool:
    return os.environ.get("GEMMLAB_NCU_REP_LEAN", "1") != "0"


NOT_STRIPPED = object()  # lean_copy's ``pieces`` when the caller has not stripped the report yet


def lean_pieces(data: bytes, keep: Optional[Callable[[str], bool]] = None) -> Optional[list]:
    """``strip_sections``, or None when the report cannot be made lean (read it as written)."""
    try:
        return strip_sections(data, keep)
    except Malformed:
        return None


@contextlib.contextmanager
def lean_copy(path: Path, data: Optional[bytes] = None, keep: Optional[Callable[[str], bool]] = None,
              pieces=NOT_STRIPPED) -> Iterator[Path]:
    """The path to read: a lean copy in a temporary folder (removed on exit), or ``path`` itself.
    ``data``: the file's bytes, when the caller has read them already; ``pieces``: ``lean_pieces``
    of them, when the caller has stripped them already."""
    if not enabled():
        yield path
        return
    if pieces is NOT_STRIPPED:
        try:
            pieces = lean_pieces(path.read_bytes() if data is None else data, keep)
        except OSError:
            pieces = None
    if pieces is None:
        yield path
        return
    try:
        tmp = tempfile.mkdtemp(prefix="gemmlab-ncu-rep-")
    except OSError:
        yield path
        return
    try:
        copy = Path(tmp) / "lean.ncu-rep"
        try:
            with open(copy, "wb") as f:
                f.writelines(pieces)
        except OSError:  # no room for the copy: read the report as written
            copy = path
        del pieces
        yield copy
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def strip_sections(data: bytes, keep: Optional[Callable[[str], bool]] = None) -> Optional[list]:
    """The pieces (views of ``data`` and new length prefixes) that, written one after the other,
    are ``data`` without the results' section bodies and without the blocks of sources (and, with
    ``keep``, without the metric results whose name ``keep`` rejects); None when there is nothing
    to remove. Raises Layout when the file is not laid out as expected."""
    if not data.startswith(b"NVR\x00") or len(data) < 8:
        raise Layout("no NVR header")
    view = memoryview(data)
    pos = 8 + int.from_bytes(data[4:8], "little")
    out: list = [view[:pos]]
    removed = 0
    names = _Names(keep)
    while pos < len(data):
        if pos + 4 > len(data):
            raise Layout("cut block length")
        n = int.from_bytes(data[pos:pos + 4], "little")
        header = data[pos + 4:pos + 4 + n]
        if len(header) != n:
            raise Layout("cut block header")
        fields = pb.fields(header)
        payload_size = pb.varint_of(fields, 5)
        start = pos + 4 + n
        if start + payload_size > len(data):
            raise Layout("cut block payload")
        block_start, pos = pos, start + payload_size
        n_sources, n_results = pb.varint_of(fields, 1), pb.varint_of(fields, 2)
        if n_sources and not n_results:  # the kernels' SASS/PTX/source text: no metric or rule reads it
            removed += pos - block_start
            continue
        if n_results and not n_sources:
            drop, n_names = names.dropped(header, fields)
            pieces, size = _lean_results(view[start:pos], n_results, drop, n_names)
            if size != payload_size:
                removed += payload_size - size
                header = pb.with_varint(header, fields, 5, size)
                out += [len(header).to_bytes(4, "little"), header, *pieces]
                continue
        out.append(view[block_start:pos])
    return out if removed else None


class _Names:
    """The metric names of a report's results blocks. ncu 2025 writes the string table once, in the
    first results block's header; the later blocks' tables are empty and their metric results name
    strings of that one (a spliced report repeats the table in every block). An empty table therefore
    means the last table written; one that follows two different tables is not guessed at (Layout)."""

    def __init__(self, keep: Optional[Callable[[str], bool]]):
        self.keep = keep
        self.current: Optional[tuple[frozenset[int], int]] = None
        self.tables = 0  # different tables written so far

    def dropped(self, header: bytes, fields) -> tuple[frozenset[int], int]:
        """(string-table indices of the metrics to drop, the table's length) for a results block."""
        if self.keep is None:
            return frozenset(), 0
        drop, n_names = _dropped_ids(header, fields, self.keep)
        if n_names:
            if (drop, n_names) != self.current:
                self.tables += 1
                self.current = (drop, n_names)
            return drop, n_names
        if self.current is None:
            return drop, n_names  # no table yet: nothing is named, nothing dropped
        if self.tables > 1:
            raise Layout("an empty string table after two different ones")
        return self.current


def _dropped_ids(header: bytes, fields, keep: Callable[[str], bool]) -> tuple[frozenset[int], int]:
    """(indices in the block's string table (BlockHeader field 4: repeated string, field 1) of the
    metric names ``keep`` rejects, the table's length)."""
    tables = [f for f in fields if f[0] == STRINGS_FIELD]
    if len(tables) != 1 or tables[0][1] != 2:
        raise Layout("no single string table in a results block")
    table = header[tables[0][4]:tables[0][5]]
    cached = _DROPPED.get((table, keep))  # a report's blocks mostly share one table
    if cached is not None:
        return cached
    drop = set()
    entries = pb.fields(table)
    metric_like = 0
    for index, f in enumerate(entries):
        if f[:2] != (1, 2):
            raise Layout("string table entry is not a string")
        try:
            name = table[f[4]:f[5]].decode("utf-8")
        except UnicodeDecodeError:
            raise Layout("string table entry is not text") from None
        metric_like += "__" in name
        if not keep(name):
            drop.add(index)
    if 2 * metric_like < len(entries):  # the table of a results block names metrics
        raise Layout("the string table does not hold metric names")
    if len(_DROPPED) > 64:
        _DROPPED.clear()
    out = _DROPPED[(table, keep)] = (frozenset(drop), len(entries))
    return out


_DROPPED: dict = {}


def _lean_results(payload: memoryview, n_results: int, drop: frozenset[int] = frozenset(),
                  n_names: int = 0) -> tuple[list, int]:
    out: list = []
    size = 0
    i = 0
    for _ in range(n_results):
        if i + 4 > len(payload):
            raise Layout("cut result length")
        n = int.from_bytes(payload[i:i + 4], "little")
        if i + 4 + n > len(payload):
            raise Layout("cut result")
        pieces = _without_sections(payload[i + 4:i + 4 + n], drop, n_names)
        i += 4 + n
        lean = sum(len(p) for p in pieces)
        out += [lean.to_bytes(4, "little"), *pieces]
        size += 4 + lean
    if i != len(payload):
        raise Layout("results do not fill the payload")
    return out, size


_SECTION_KEY = (SECTIONS_FIELD << 3) | 2
_METRIC_KEY = (METRICS_FIELD << 3) | 2


def _without_sections(message: memoryview, drop: frozenset[int] = frozenset(), n_names: int = 0) -> list:
    """The pieces of a ProfileResult without its sections and the metric results named in ``drop``:
    a walk over its top-level fields (most of them the metric results, ~2,000 a launch), kept tight
    (varints of one or two bytes inline) because it runs over every field."""
    parts = []
    kept_from = 0
    i = 0
    end = len(message)
    while i < end:
        start = i
        key = message[i]
        i += 1
        if key >= 0x80:
            key, i = pb.read_varint(message, start)
        wire = key & 7
        if wire == 2:
            if i >= end:
                raise Layout("field overruns its message")
            n = message[i]
            if n < 0x80:
                i += 1
            elif i + 1 < end and message[i + 1] < 0x80:
                n = (n & 0x7F) | (message[i + 1] << 7)
                i += 2
            else:
                n, i = pb.read_varint(message, i)
            vs = i
            i += n
            if key == _METRIC_KEY:
                if drop:
                    if n < 2 or message[vs] != 0x08:
                        raise Layout("metric result does not start with its name")
                    name = message[vs + 1]
                    if name >= 0x80:
                        name = _metric_name_id(message, vs, i)
                    if name >= n_names:
                        raise Layout("metric result names no string of the table")
                    if name in drop:
                        if start > kept_from:
                            parts.append(message[kept_from:start])
                        kept_from = i
            elif key == _SECTION_KEY and _is_section(2, message[vs:i]):
                if start > kept_from:
                    parts.append(message[kept_from:start])
                kept_from = i
        elif wire == 0:
            _, i = pb.read_varint(message, i)
        elif wire == 5:
            i += 4
        elif wire == 1:
            i += 8
        else:
            raise Layout(f"wire type {wire}")
        if (key >> 3) == SECTIONS_FIELD and wire != 2:
            raise Layout("field 17 is not a message")
    if i != end:
        raise Layout("field overruns its message")
    if end > kept_from:
        parts.append(message[kept_from:])
    return parts


def _metric_name_id(message: memoryview, start: int, end: int) -> int:
    """The name (string-table index) of a metric result: its first field, a varint numbered 1."""
    if start >= end or message[start] != 0x08:
        raise Layout("metric result does not start with its name")
    value, i = pb.read_varint(message, start + 1)
    if i > end:
        raise Layout("metric result name overruns")
    return value


def _is_section(wire: int, body: bytes) -> bool:
    """Whether a field-17 entry is a section: fields 1 (identifier) and 2 (display name) first."""
    if wire != 2:
        raise Layout("field 17 is not a message")
    fields = pb.fields(body)
    if len(fields) < 2 or fields[0][:2] != (1, 2) or fields[1][:2] != (2, 2):
        raise Layout("field 17 does not start with a section's identifier and name")
    ident = bytes(body[fields[0][4]:fields[0][5]])
    if not _IDENT.fullmatch(ident):
        raise Layout("field 17 does not start with a section identifier")
    return True


def blocks(data: bytes) -> tuple[bytes, list[tuple[str, bytes]]]:
    """(the file header, [(kind, block bytes)]) of a report; kind is "sources", "results" or "other"."""
    if not data.startswith(b"NVR\x00") or len(data) < 8:
        raise Layout("no NVR header")
    pos = 8 + int.from_bytes(data[4:8], "little")
    head, out = data[:pos], []
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "little")
        fields = pb.fields(data[pos + 4:pos + 4 + n])
        end = pos + 4 + n + pb.varint_of(fields, 5)
        if end > len(data):
            raise Layout("cut block")
        kind = "sources" if pb.varint_of(fields, 1) else "results" if pb.varint_of(fields, 2) else "other"
        out.append((kind, data[pos:end]))
        pos = end
    return head, out


def splice(reports: list[bytes], n: int) -> bytes:
    """A report of ``n`` copies of the reports' results, cycling through them (each report's sources
    once, the first report's session blocks): a many-launch report for tests and benchmarks, from
    single-launch captures."""
    parsed = [blocks(r) for r in reports]
    head, first = parsed[0]
    lead_end = next(i for i, (kind, _) in enumerate(first) if kind != "other")
    out = [head] + [b for _, b in first[:lead_end]]
    seen = set()
    for i in range(n):
        j = i % len(reports)
        if j not in seen:
            out += [b for kind, b in parsed[j][1] if kind == "sources"]
            seen.add(j)
        out += [b for kind, b in parsed[j][1] if kind == "results"]
    out += [b for kind, b in first[lead_end:] if kind == "other"]
    return b"".join(out)
