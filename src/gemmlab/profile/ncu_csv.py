"""Readers for Nsight Compute CSV exports.

``--page raw --csv``: one row per kernel launch; row 1 the header (11 identity columns, then one
column per metric), row 2 the units, values with thousands separators and scaled units unless
``--print-units base``. The same page printed live (``ncu --csv --page raw APP``) comes as a block
among ncu's messages; ``ncu_output.split`` finds it. A whole exported file is read a line at a time
(``csv_stream``); both end in ``RawColumns``, which turns rows into launches a batch at a time.

Which metric columns are read (``raw_keep``): all of them, or those gemmlab reads
(``gemmlab.profile.needed``, as for an ``.ncu-rep``). ``metrics="all"``/``"needed"`` (or
``GEMMLAB_NCU_REP_METRICS``) chooses; by default a page up to ``AUTO_ALL_BYTES`` keeps every column and
a larger one the needed ones: a ``--set full`` launch has ~2,230 metrics, and keeping them all costs
~250 KB of memory a launch (a 10,000-launch page: 205 MB on disk, >4 GB in memory), while the analysis
reads ~430 of them. What gemmlab concludes is the same either way (tests/test_load_scale.py).
"""

from __future__ import annotations

import functools
import itertools
import operator
import os
from typing import Callable, Iterable, Optional, Sequence

from gemmlab.errors import InputError
from gemmlab.profile import needed
from gemmlab.profile.ncu_output import CsvBlock
from gemmlab.profile.records import KernelLaunch, Metric, bare_name, parse_dim3
from gemmlab.profile.units import scale_numbers, unit_scale

# The identity columns ncu writes before the metrics (older versions lack Block/Grid Size and CC).
ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
              "Block Size", "Grid Size", "Device", "CC")

AUTO_ALL_BYTES = 16 << 20  # ~780 --set full launches; a larger raw page keeps the needed metrics
BATCH_CELLS = 500_000  # cells converted at once (rows × kept columns): bounds the memory of a batch

Keep = Optional[Callable[[str], bool]]  # which metric columns to read; None: every one


def raw_keep(metrics: Optional[str], size: int) -> Keep:
    """The metric columns a raw page of ``size`` bytes keeps (see the module docstring)."""
    if metrics or os.environ.get("GEMMLAB_NCU_REP_METRICS"):
        choice = needed.selection(metrics)
    else:
        choice = needed.ALL if size <= AUTO_ALL_BYTES else needed.NEEDED
    return None if choice == needed.ALL else needed.is_needed


def _identity(header: Sequence[str]) -> dict[str, int]:
    return {h: i for i, h in enumerate(header) if h in ID_COLUMNS}


_bare_name = functools.lru_cache(maxsize=4096)(bare_name)  # launches of one kernel share its name
_dim3 = functools.lru_cache(maxsize=4096)(parse_dim3)


def launch_from_identity(row: Sequence[str], idx: dict[str, int], source: str, fmt: str) -> KernelLaunch:
    """A KernelLaunch with the identity columns of one CSV row filled in."""

    def cell(col: str) -> str:
        i = idx.get(col)
        return row[i] if i is not None and i < len(row) else ""

    raw_id = cell("ID").replace(",", "").strip()
    if not raw_id.isdigit():
        raise InputError(f"{source}: row has ID {raw_id!r}; expected an integer launch ID")
    demangled = cell("Kernel Name")
    return KernelLaunch(
        id=int(raw_id),
        name=_bare_name(demangled),
        demangled=demangled,
        block=_dim3(cell("Block Size")),
        grid=_dim3(cell("Grid Size")),
        device=cell("Device") or None,
        cc=cell("CC") or None,
        source=source,
        format=fmt,
        process=cell("Process Name"),
    )


class RawColumns:
    """The metric columns of one raw page, and their conversion a batch of launches at a time.

    Each column's unit is resolved once. ``add`` takes a launch and the cells of its row; every
    ``batch`` launches their cells are converted column by column (``units.scale_column``) into
    Metric records. A cell equal to the same column's cell of the launch before shares its record
    (records are immutable): launches of one kernel repeat most values (device attributes, launch
    geometry, many counters), so a long capture holds far fewer records than cells.
    """

    def __init__(self, header: Sequence[str], units: Sequence[str], keep: Keep = None, nul_free: bool = False):
        """``nul_free``: the caller knows no cell holds a NUL character (numpy would drop it)."""
        self._nul_free = nul_free
        cols = [i for i, h in enumerate(header) if h not in ID_COLUMNS and (keep is None or keep(h))]
        self.names = [header[i] for i in cols]
        self._units = []  # per column: (unit as printed, base unit, factor)
        for i in cols:
            unit = units[i].strip()
            self._units.append((unit, *unit_scale(unit)))
        self._get = (operator.itemgetter(*cols) if len(cols) > 1
                     else (lambda row: (row[cols[0]],)) if cols else (lambda row: ()))
        self.batch = max(16, BATCH_CELLS // max(1, len(cols)))
        self._last: list[tuple[Optional[str], Optional[Metric]]] = [(None, None)] * len(cols)
        self._launches: list[KernelLaunch] = []
        self._cells: list[tuple[str, ...]] = []

    def add(self, launch: KernelLaunch, row: Sequence[str]) -> None:
        """Queue ``launch`` (its metrics are filled in by the batch it falls in) with its row."""
        self._launches.append(launch)
        self._cells.append(self._get(row))
        if len(self._launches) >= self.batch:
            self.flush()

    def flush(self) -> None:
        """Fill in the metrics of the queued launches."""
        launches, rows = self._launches, self._cells
        self._launches, self._cells = [], []
        if not launches or not self.names:
            return
        names = self.names
        columns = []
        missing: dict[int, list[str]] = {}  # launch → its missing values (n/a): not metrics of it
        for j, cells in enumerate(zip(*rows)):
            out, has_none = self._column(j, cells)
            columns.append(out)
            if has_none:
                for i, m in enumerate(out):
                    if m is None:
                        missing.setdefault(i, []).append(names[j])
        for i, (launch, metrics) in enumerate(zip(launches, zip(*columns))):
            launch.metrics = dict(zip(names, metrics))
            for name in missing.get(i, ()):
                del launch.metrics[name]

    def _column(self, j: int, cells: tuple[str, ...]) -> tuple[list[Optional[Metric]], bool]:
        """The records of one column's cells (None for a missing value), and whether there is a None.
        Only the cells that differ from the one before are converted (``scale_numbers``); the others
        take the record before theirs (all of it at C speed: map, compress, accumulate)."""
        last_text, last_metric = self._last[j]
        new = list(map(operator.ne, cells, itertools.chain((last_text,), cells)))
        starts = list(itertools.compress(cells, new))
        unit, base, factor = self._units[j]
        values, numbers = scale_numbers(starts, base, factor, self._nul_free)
        records = [last_metric]
        records += (map(Metric, values, itertools.repeat(base)) if numbers else
                    [None if v is None else Metric(v, unit if isinstance(v, str) else base) for v in values])
        out = list(map(records.__getitem__, itertools.accumulate(new)))
        self._last[j] = (cells[-1], out[-1])
        return out, (not numbers and None in values) or (not new[0] and last_metric is None)


def bad_row(lineno: int, row: Sequence[str], header: Sequence[str], id_i: int) -> Optional[str]:
    """What is wrong with a kernel row of a raw page (``id_i``: its ID column), or None."""
    if not row[id_i].strip():
        return f"line {lineno} has no launch ID"
    if len(row) != len(header):
        return f"line {lineno} has {len(row)} cells, header has {len(header)}"
    return None


def bad_row_error(source: str, what: str) -> str:
    return f"{source}: {what}: the CSV is truncated or mixes exports (expected a complete ncu --csv export)"


def rows_to_launches(rows: Iterable[tuple[int, list[str]]], header: Sequence[str], units: Sequence[str],
                     source: str, fmt: str, keep: Keep, problems: Optional[list[str]],
                     nul_free: bool = False) -> list[KernelLaunch]:
    """Launches of a raw page's kernel rows (line number, cells), the units row already taken off.

    A row with the wrong number of cells or no ID raises InputError, unless ``problems`` is given
    (live output, where such a line may be the program's): then it is skipped and described there.
    ``nul_free``: no cell holds a NUL character (``RawColumns``).
    """
    idx = _identity(header)
    columns = RawColumns(header, units, keep, nul_free)
    launches = []
    for lineno, row in rows:
        what = bad_row(lineno, row, header, idx["ID"])
        if what is not None:
            if problems is None:
                raise InputError(bad_row_error(source, what))
            problems.append(f"skipped {what}")
            continue
        launch = launch_from_identity(row, idx, source, fmt)
        columns.add(launch, row)
        launches.append(launch)
    columns.flush()
    return launches


def split_units(block_rows: Sequence[tuple[int, list[str]]], header: Sequence[str], source: str
                ) -> tuple[Sequence[str], Sequence[tuple[int, list[str]]]]:
    """(units row, kernel rows) of a raw page's rows; the units are empty when the page has none."""
    idx = _identity(header)
    if not block_rows:
        raise InputError(f"{source}: raw CSV has a header but no units row and no kernel rows")
    # The units row has empty identity cells; a file exported without units starts with data.
    first_line, first = block_rows[0]
    has_units = not first[idx["ID"]].strip()
    if has_units and len(first) != len(header):
        raise InputError(
            f"{source}: units row (line {first_line}) has {len(first)} cells, header has {len(header)}"
            " (truncated CSV?)"
        )
    data = block_rows[1:] if has_units else block_rows
    if not data:
        raise InputError(f"{source}: raw CSV has a header and a units row but no kernel rows")
    return (first if has_units else [""] * len(header)), data


def read_raw_block(block: CsvBlock, source: str, fmt: str = "raw-csv", problems: Optional[list[str]] = None,
                   keep: Keep = None, nul_free: bool = False) -> list[KernelLaunch]:
    """Launches of one raw-page block: header, optional units row, one row per launch. ``keep``: which
    metric columns to read (None: all). Bad rows: see ``rows_to_launches``."""
    units, data = split_units(block.rows, block.header, source)
    return rows_to_launches(data, block.header, units, source, fmt, keep, problems, nul_free)
