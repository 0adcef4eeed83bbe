"""Readers for Nsight Compute CSV exports.

``--page raw --csv``: one row per kernel launch; row 1 the header (11 identity columns, then one
column per metric), row 2 the units, values with thousands separators and scaled units unless
``--print-units base``. The same page printed live (``ncu --csv --page raw APP``) comes as a block
among ncu's messages; ``ncu_output.split`` finds it.
"""

from __future__ import annotations

from typing import Optional, Sequence

from gemmlab.errors import InputError
from gemmlab.profile.ncu_output import CsvBlock
from gemmlab.profile.records import KernelLaunch, Metric, bare_name, parse_dim3
from gemmlab.profile.units import parse_scaled, unit_scale

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


def read_raw_block(block: CsvBlock, source: str, fmt: str = "raw-csv",
                   problems: Optional[list[str]] = None) -> list[KernelLaunch]:
    """Launches of one raw-page block: header, optional units row, one row per launch.

    A row with the wrong number of cells raises InputError, unless ``problems`` is given (live
    output, where such a line may be the program's): then it is skipped and described there.
    """
    header = block.header
    idx = _identity(header)
    rows = block.rows
    if not rows:
        raise InputError(f"{source}: raw CSV has a header but no units row and no kernel rows")
    # The units row has empty identity cells; a file exported without units starts with data.
    has_units = not rows[0][1][idx["ID"]].strip()
    units = rows[0][1] if has_units else [""] * len(header)
    data = rows[1:] if has_units else rows
    if has_units and len(units) != len(header):
        raise InputError(
            f"{source}: units row (line {rows[0][0]}) has {len(units)} cells, header has {len(header)}"
            " (truncated CSV?)"
        )
    if not data:
        raise InputError(f"{source}: raw CSV has a header and a units row but no kernel rows")
    # Resolve every column's unit once: the per-cell work is then a strip, a match and a multiply.
    columns = [(i, header[i], units[i].strip(), *unit_scale(units[i].strip()))
               for i in range(len(header)) if header[i] not in ID_COLUMNS]
    launches = []
    for lineno, row in data:
        if len(row) != len(header) or not row[idx["ID"]].strip():
            what = (f"line {lineno} has {len(row)} cells, header has {len(header)}" if row[idx["ID"]].strip()
                    else f"line {lineno} has no launch ID")
            if problems is None:
                raise InputError(f"{source}: {what}: the CSV is truncated or mixes exports "
                                 "(expected a complete ncu --csv export)")
            problems.append(f"skipped {what}")
            continue
        launch = launch_from_identity(row, idx, source, fmt)
        metrics = launch.metrics
        for i, name, unit, base, factor in columns:
            value = parse_scaled(row[i], base, factor)
            if value is not None:
                metrics[name] = Metric(value, unit if isinstance(value, str) else base)
        launches.append(launch)
    return launches
