"""Readers for Nsight Compute CSV exports.

``--page raw --csv``: one row per kernel launch; row 1 the header (11 identity columns, then one
column per metric), row 2 the units, values with thousands separators and scaled units unless
``--print-units base``.
"""

from __future__ import annotations

import csv
import io
from typing import Iterable, Sequence

from gemmlab.errors import InputError
from gemmlab.profile.records import KernelLaunch, Metric, bare_name, parse_dim3
from gemmlab.profile.units import parse_value

# The identity columns ncu writes before the metrics (older versions lack Block/Grid Size and CC).
ID_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
              "Block Size", "Grid Size", "Device", "CC")


def _identity(header: Sequence[str]) -> dict[str, int]:
    return {h: i for i, h in enumerate(header) if h in ID_COLUMNS}


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
        name=bare_name(demangled),
        demangled=demangled,
        block=parse_dim3(cell("Block Size")),
        grid=parse_dim3(cell("Grid Size")),
        device=cell("Device") or None,
        cc=cell("CC") or None,
        source=source,
        format=fmt,
        process=cell("Process Name"),
    )


def read_raw(text: str, source: str) -> list[KernelLaunch]:
    """Parse ``ncu --page raw --csv`` output (scaled or base units)."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    if not rows or "ID" not in rows[0] or "Kernel Name" not in rows[0]:
        raise InputError(f"{source}: not an Nsight Compute raw CSV (no 'ID'/'Kernel Name' header)")
    header = rows[0]
    idx = _identity(header)
    metric_cols = [i for i, h in enumerate(header) if h not in ID_COLUMNS]
    if len(rows) < 2:
        raise InputError(f"{source}: raw CSV has a header but no units row and no kernel rows")
    units = rows[1]
    # The units row has empty identity cells; a file exported without units starts with data.
    has_units = not units[idx["ID"]].strip()
    data = rows[2:] if has_units else rows[1:]
    if not data:
        raise InputError(f"{source}: raw CSV has a header and units row but no kernel rows")
    launches = []
    for lineno, row in enumerate(data, start=3 if has_units else 2):
        if len(row) != len(header):
            raise InputError(
                f"{source}: line {lineno} has {len(row)} cells, header has {len(header)}"
                " (truncated or not one ncu export?)"
            )
        launch = launch_from_identity(row, idx, source, "raw-csv")
        for i in metric_cols:
            unit = units[i] if has_units else ""
            value, base_unit = parse_value(row[i], unit)
            if value is not None:
                launch.metrics[header[i]] = Metric(value, base_unit)
        launches.append(launch)
    return launches


def sniff_rows(lines: Iterable[str]) -> list[list[str]]:
    """CSV rows from text that may carry non-CSV lines (``==PROF==``, program output)."""
    return [r for r in csv.reader(io.StringIO("".join(lines))) if r]
