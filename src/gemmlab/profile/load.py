"""One entry point for every Nsight Compute export: detect the format, parse, filter kernels.

Detection: a ``.ncu-rep``/``.ncu-repz`` name or the report's ``NVR`` header → ``ncu_report``;
otherwise the text is split into ncu messages, program output and CSV blocks
(``ncu_output.split``); a block whose header has ``Metric Name``/``Metric Value`` is the long
format (details page, live ``--csv`` output, ``--metrics``), any other ``ID``/``Kernel Name``
header is the raw page. See docs/formats.md. A regular file holding an export as ncu writes it is
read a line at a time instead (``csv_stream``: the same launches, without holding the text).

Pipes: ``-`` means standard input; it, a FIFO, ``/dev/stdin`` or a shell's ``<(cat f.csv)`` cannot be
read twice, so such an input (anything that is not a regular file) is read exactly once and the
format is detected from the bytes read. An ``.ncu-rep`` arriving that way is spooled to a temporary
file (NVIDIA's reader needs a real file), read, and the file removed; the launches and any error
name the input as given, never the temporary file.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import logging
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from typing import BinaryIO, Iterator, Optional

from gemmlab.errors import InputError, UserError
from gemmlab.profile import csv_stream, ncu_csv, ncu_long, ncu_output, ncu_rep
from gemmlab.profile.ncu_output import CsvBlock, NcuOutput
from gemmlab.profile.records import KernelLaunch, Metric

log = logging.getLogger(__name__)

# ncu's count of replay passes; live output also prints it per launch in a ==PROF== line
PASSES_METRIC = "profiler__replayer_passes"
EXPECTED = "expected an Nsight Compute export (ncu --csv output or .ncu-rep)"


def check_file(path: Path) -> bytes:
    """The first bytes of ``path``, after checking it is a non-empty regular file."""
    if not path.exists():
        raise InputError(f"{path}: no such file; {EXPECTED}")
    if path.is_dir():
        raise InputError(f"{path}: is a directory; {EXPECTED}")
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror}); {EXPECTED}") from None
    if not head.strip() and not path.read_bytes().strip():
        raise InputError(f"{path}: file is empty; {EXPECTED}")
    return head


def read_text(path: Path) -> str:
    check_file(path)
    return decode_text(path.read_bytes(), str(path))


def decode_text(data: bytes, source: str) -> str:
    """The text of an export's bytes; an InputError for binary data."""
    if b"\x00" in data[:65536]:
        raise InputError(f"{source}: binary data, not a text CSV; {EXPECTED}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{source}: binary data, not a text CSV; {EXPECTED}") from None


def is_report(path: Path, head: bytes) -> bool:
    return path.name.lower().endswith(ncu_rep.REPORT_SUFFIXES) or head.startswith(ncu_rep.MAGIC)


STDIN = "-"  # the path that means standard input
STDIN_NAME = "<stdin>"  # how standard input is named in launches and errors


def is_stream(path: str | Path) -> bool:
    """Whether ``path`` is ``-`` (standard input) or names something that exists but is neither a
    regular file nor a directory (a FIFO, /dev/stdin, a shell's ``<(...)``): input that can be read once."""
    if str(path) == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def stream_name(path: str | Path) -> str:
    return STDIN_NAME if str(path) == STDIN else str(path)


@contextlib.contextmanager
def open_stream(path: str | Path) -> Iterator[BinaryIO]:
    """The binary stream of ``-`` (standard input, left open) or of a FIFO/device path."""
    if str(path) == STDIN:
        stdin = getattr(sys.stdin, "buffer", None)
        if stdin is None:
            raise InputError(f"{STDIN_NAME}: standard input is closed; {EXPECTED}")
        yield stdin
        return
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror}); {EXPECTED}") from None
    with f:
        yield f


def read_stream(path: str | Path) -> bytes:
    """Every byte of a stream input (``is_stream``), read once."""
    name = stream_name(path)
    with open_stream(path) as f:
        try:
            return f.read()
        except OSError as e:
            raise InputError(f"{name}: cannot be read ({e.strerror}); {EXPECTED}") from None


def read_file(path: str | Path, metrics: Optional[str] = None) -> list[KernelLaunch]:
    """All kernel launches in the file, whatever export format it is. ``metrics``: ``"needed"`` keeps
    the metrics gemmlab reads, ``"all"`` every one; by default an ``.ncu-rep`` keeps the needed ones
    and a raw CSV page all of them up to ``ncu_csv.AUTO_ALL_BYTES``, the needed ones above (a
    details page keeps all it has). ``-`` is standard input; a pipe or FIFO is read once (see the
    module docstring). An exported CSV file is read a line at a time (``csv_stream``)."""
    if is_stream(path):
        return _read_stream_launches(path, metrics)
    p = Path(path)
    head = check_file(p)
    if is_report(p, head):
        return ncu_rep.read_rep(p, metrics)
    with gc_paused():
        launches = csv_stream.read_export(p, str(p), metrics)
        if launches is not None:
            return launches
        return parse_text(read_text(p), str(p), metrics)


def launches_from_bytes(data: bytes, source: str, metrics: Optional[str] = None) -> list[KernelLaunch]:
    """The launches in an export already read into memory (``source`` names it in launches and
    errors); an ``.ncu-rep`` is spooled to a temporary file for NVIDIA's reader."""
    if not data.strip():
        raise InputError(f"{source}: input is empty; {EXPECTED}")
    if is_report(Path(source), data[:4096]):
        return _report_from_chunks(iter((data,)), source, metrics)
    with gc_paused():
        return parse_text(decode_text(data, source), source, metrics)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a CSV is read: parsing makes no reference cycles, but a
    large page makes millions of records, and each full collection would walk all of those made so
    far (a third of the time of a 10,000-launch raw page). Turned back on after, unless it was off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _read_stream_launches(path: str | Path, metrics: Optional[str]) -> list[KernelLaunch]:
    source = stream_name(path)
    with open_stream(path) as f:
        try:
            head = f.read(4096)
            if head and is_report(Path(source), head):  # spool what follows without holding it in memory
                return _report_from_chunks(_chunks(head, f), source, metrics)
            data = head + f.read()
        except OSError as e:
            raise InputError(f"{source}: cannot be read ({e.strerror}); {EXPECTED}") from None
    return launches_from_bytes(data, source, metrics)


def _chunks(head: bytes, f: BinaryIO, size: int = 1 << 20) -> Iterator[bytes]:
    yield head
    while chunk := f.read(size):
        yield chunk


def _report_from_chunks(chunks: Iterator[bytes], source: str, metrics: Optional[str]) -> list[KernelLaunch]:
    """Read an .ncu-rep that arrived through a pipe: spool it to a temporary file, read that, and
    put the input's own name on the launches and on any error (the temporary file is gone after)."""
    with tempfile.TemporaryDirectory(prefix="gemmlab-rep-") as d:
        spooled = Path(d) / "input.ncu-rep"
        with open(spooled, "wb") as out:
            for chunk in chunks:
                out.write(chunk)
        try:
            launches = ncu_rep.read_rep(spooled, metrics)
        except UserError as e:
            e.detail = e.detail.replace(str(spooled), source)
            e.args = (e.detail,)
            raise
    for launch in launches:
        launch.source = source
    return launches


def load(path: str | Path, kernel: Optional[str] = None, metrics: Optional[str] = None) -> list[KernelLaunch]:
    """All kernel launches in ``path``, optionally those whose name matches the regex ``kernel``
    (checked before the file is read: a bad regex is exit 2 even where reading needs a missing tool)."""
    kernel_regex(kernel)
    return filter_kernels(read_file(path, metrics), kernel, stream_name(path))


def load_bytes(data: bytes, source: str, kernel: Optional[str] = None,
               metrics: Optional[str] = None) -> list[KernelLaunch]:
    """``load`` for an export already read into memory (a pipe whose bytes were needed first)."""
    return filter_kernels(launches_from_bytes(data, source, metrics), kernel, source)


def parse_text(text: str, source: str, metrics: Optional[str] = None) -> list[KernelLaunch]:
    """Launches in CSV text ncu wrote (an exported page or what it printed live); ``metrics``: the
    raw page's metric columns to read (``ncu_csv.raw_keep``).

    An export must be whole: a short row or a cut cell is an InputError. Live output also holds
    the program's lines, so there a line that is not a complete ncu row is skipped, and the
    launches' notes say so (``gemmlab: skipped line ...``).
    """
    out = ncu_output.split(text)
    if not out.blocks and not out.notes:
        out = _unquoted(text) or out
    if not out.blocks:
        if out.cut_line is not None:
            raise InputError(f"{source}: line {out.cut_line} ends inside a quoted cell; the CSV is truncated "
                             "(expected a complete ncu --csv export)")
        raise _no_results(out, source)
    live = out.is_live
    problems = _damage(out, source, live)
    long_blocks = [b for b in out.blocks if ncu_long.is_long(b.header)]
    raw_blocks = [b for b in out.blocks if not ncu_long.is_long(b.header)]
    launches: list[KernelLaunch] = []
    if long_blocks:
        fmt = ncu_long.long_format(long_blocks, live)
        for block in long_blocks:
            launches += ncu_long.read_long_block(block, source, fmt, problems)
    keep = ncu_csv.raw_keep(metrics, len(text)) if raw_blocks else None
    nul_free = bool(raw_blocks) and "\x00" not in text
    for block in raw_blocks:
        launches += ncu_csv.read_raw_block(block, source, "live-raw-csv" if live else "raw-csv", problems, keep,
                                           nul_free)
    if not launches:
        why = f"; {problems[0]}" if problems else ""
        raise InputError(f"{source}: ncu CSV header (line {out.blocks[0].header_line}) but no kernel rows{why}")
    notes = out.notes + [f"gemmlab: {p}" for p in problems or ()]
    for p in problems or ():
        log.warning("%s: %s", source, p)
    passes = ncu_output.replay_passes(out.notes)
    for launch in launches:
        launch.notes = list(notes)
        if launch.id in passes and PASSES_METRIC not in launch.metrics:
            launch.metrics[PASSES_METRIC] = Metric(float(passes[launch.id]), "pass")
    return launches


def _damage(out: NcuOutput, source: str, live: bool) -> Optional[list[str]]:
    """Damaged lines: an InputError for an export; for live output, descriptions to keep as notes
    (and None for an export, which tells the readers to raise on a bad row too)."""
    problems = [f"skipped line {lineno}: not a valid CSV row ({why})" for lineno, why in out.bad_rows]
    if out.cut_line is not None:
        problems.append(f"skipped line {out.cut_line}: it ends inside a quoted cell (output cut off?)")
    if live:
        return problems
    if out.bad_rows:
        lineno, why = out.bad_rows[0]
        raise InputError(f"{source}: line {lineno} is not a valid CSV row ({why}); "
                         "expected a complete ncu --csv export")
    if out.cut_line is not None:
        raise InputError(f"{source}: line {out.cut_line} ends inside a quoted cell; the CSV is truncated "
                         "(expected a complete ncu --csv export)")
    return None


def profiler_notes(text: str) -> list[str]:
    """ncu's own ``==PROF==``/``==WARNING==``/``==ERROR==`` lines in what it printed."""
    return ncu_output.split(text).notes


def _no_results(out: NcuOutput, source: str) -> InputError:
    if out.errors:
        return InputError(f"{source}: ncu printed no results; it reported: {out.errors[0]}")
    if out.notes:
        warnings = [n for n in out.notes if n.startswith("==WARNING==") and "No kernels" in n]
        last = warnings[-1] if warnings else out.notes[-1]
        return InputError(f"{source}: ncu output with no CSV results (was --csv given, did a kernel run?); "
                          f"last message: {last}")
    return InputError(f"{source}: not Nsight Compute CSV output (no header row with 'ID' and 'Kernel Name'); "
                      f"{EXPECTED}")


def _unquoted(text: str) -> Optional[NcuOutput]:
    """An ncu CSV re-saved without quotes (by a spreadsheet or pandas): header on the first line."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    if not re.match(r"^ID,", first):
        return None
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None
    if not rows or not ncu_output.is_header(rows[0]):
        return None
    block = CsvBlock(rows[0], 1, [(i + 2, r) for i, r in enumerate(rows[1:]) if r])
    block.open_end = not text.endswith(("\n", "\r"))
    return NcuOutput([block], [], 0)


def kernel_regex(pattern: Optional[str]) -> Optional[re.Pattern[str]]:
    """The compiled ``--kernel`` pattern (None for none); an InputError when it is not a regex."""
    if not pattern:
        return None
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InputError(f"{pattern!r}: not a valid regular expression ({e})", option="kernel") from None


def filter_kernels(launches: list[KernelLaunch], pattern: Optional[str], source: str) -> list[KernelLaunch]:
    rx = kernel_regex(pattern)
    if rx is None:
        return launches
    hits = [k for k in launches if rx.search(k.name) or rx.search(k.demangled)]
    if not hits:
        names = ", ".join(sorted({k.name for k in launches}))
        raise InputError(f"{source}: no kernel matches --kernel {pattern!r}; kernels in the file: {names}")
    return hits
