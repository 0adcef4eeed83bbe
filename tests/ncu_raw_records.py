"""Test helper: KernelLaunch records from the raw-page CSV fixture, read with the csv module.

Independent of gemmlab's own importers on purpose: the calculator tests check NVIDIA's numbers,
not our parser. Values carry thousands separators ("1,024"); the base-unit export is used.
"""

from __future__ import annotations

import csv
from pathlib import Path

from gemmlab.profile.records import KernelLaunch, Metric, bare_name, parse_dim3

NCU_H100 = Path(__file__).parent / "fixtures" / "ncu" / "h100"
RAW_BASE = NCU_H100 / "gemm_ladder_raw_base.csv"
_FIXED = 11  # ID ... CC


def _value(text: str) -> float | str:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def raw_rows(path: Path = RAW_BASE) -> list[dict[str, str]]:
    """One dict per launch: column name → the exported text (header row, units row, then launches)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    return [dict(zip(header, r)) for r in rows[2:]]


def raw_launches(path: Path = RAW_BASE) -> list[KernelLaunch]:
    out = []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, units = rows[0], rows[1]
    for r in rows[2:]:
        cells = dict(zip(header, r))
        metrics = {
            name: Metric(_value(text), unit) for name, unit, text in zip(header[_FIXED:], units[_FIXED:], r[_FIXED:])
        }
        out.append(
            KernelLaunch(
                id=int(cells["ID"]),
                name=bare_name(cells["Kernel Name"]),
                demangled=cells["Kernel Name"],
                block=parse_dim3(cells["Block Size"]),
                grid=parse_dim3(cells["Grid Size"]),
                device=cells["Device"],
                cc=cells["CC"],
                metrics=metrics,
                source=str(path),
                format="raw-csv",
            )
        )
    return out


def number(row: dict[str, str], name: str) -> float:
    return float(row[name].replace(",", ""))
