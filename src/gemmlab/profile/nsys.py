"""Reader for ``nsys stats --format csv`` output (Nsight Systems summary reports).

Handles the five summary reports under both their current names and the names older nsys
releases used (before 2022.4 or so):

================================  ===============  ==========================================
report                            old name         what it sums
================================  ===============  ==========================================
``cuda_gpu_kern_sum``             ``gpukernsum``   GPU kernel executions, per kernel name
``cuda_api_sum``                  ``cudaapisum``   CUDA API calls on the host
``osrt_sum``                      ``osrtsum``      OS runtime calls on the host
``cuda_gpu_mem_time_sum``         ``gpumemtimesum``  GPU memory operations, by time
``cuda_gpu_mem_size_sum``         ``gpumemsizesum``  GPU memory operations, by size
================================  ===============  ==========================================

The input may be one report's CSV file (``nsys stats --output``), or what nsys prints on stdout:
preamble lines (``Generating SQLite file ...``, ``Processing [...] with [.../cuda_gpu_kern_sum.py]``,
``Running [.../gpukernsum.py ...]``, ``SKIPPED: ...``) around one CSV table per report, several
reports concatenated. The report is recognised by its header columns:

- current: ``Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name``
  (``Num Calls`` for the API/OS-runtime reports, ``Count`` + ``Operation`` for memory operations,
  ``Total (MB),Count,Avg (MB),...`` for sizes);
- old: ``Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,StdDev,Name`` (no median;
  ``Operations`` for memory, sizes in KiB).

``cuda_api_sum`` and ``osrt_sum`` have identical columns: the preamble line naming the report
decides; without one, a table whose every row is a ``cu*`` call is the CUDA API report.
Values are returned in ns (times) and bytes (sizes: nsys's MB is 10^6 bytes, KiB 1024 bytes).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gemmlab.profile.timeline import SummaryRow
from gemmlab.errors import InputError

KERN_SUM = "cuda_gpu_kern_sum"
API_SUM = "cuda_api_sum"
OSRT_SUM = "osrt_sum"
MEM_TIME_SUM = "cuda_gpu_mem_time_sum"
MEM_SIZE_SUM = "cuda_gpu_mem_size_sum"

# current name → older names nsys used for the same report
REPORT_ALIASES: dict[str, tuple[str, ...]] = {
    KERN_SUM: ("gpukernsum",),
    API_SUM: ("cudaapisum",),
    OSRT_SUM: ("osrtsum",),
    MEM_TIME_SUM: ("gpumemtimesum",),
    MEM_SIZE_SUM: ("gpumemsizesum",),
}
_CANONICAL = {alias: name for name, aliases in REPORT_ALIASES.items() for alias in (name, *aliases)}
# Preamble lines naming the report that follows, known to us or not ("nvtx_sum", ...):
#   Processing [report.sqlite] with [/opt/.../reports/cuda_gpu_kern_sum.py]...
#   Running [/opt/.../reports/gpukernsum.py report.sqlite]...
#   ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):
_PREAMBLE = (re.compile(r"^\s*(?:Processing \[.*\] with|Running) \[(?:.*/)?([A-Za-z0-9_]+)\.py"),
             re.compile(r"^\s*\*\* .*\(([A-Za-z0-9_]+)\):?\s*$"))
_OTHER = "<other>"  # hint for a report we do not read

# header word (lower-case, unit stripped) → field
_FIELDS = {
    "time (%)": "time_pct", "time(%)": "time_pct",
    "total time": "total", "total": "total",
    "instances": "count", "num calls": "count", "count": "count", "operations": "count", "calls": "count",
    "avg": "avg", "average": "avg",
    "med": "med", "median": "med",
    "min": "min", "minimum": "min",
    "max": "max", "maximum": "max",
    "stddev": "stddev", "std dev": "stddev",
    "name": "name", "operation": "name",
}
_UNIT_SCALE = {"ns": ("ns", 1.0), "us": ("ns", 1e3), "ms": ("ns", 1e6), "s": ("ns", 1e9),
               "mb": ("byte", 1e6), "kb": ("byte", 1e3), "kib": ("byte", 1024.0),
               "mib": ("byte", 1024.0 ** 2), "b": ("byte", 1.0), "bytes": ("byte", 1.0)}


@dataclass
class NsysReport:
    """One summary report: ``kind`` is the current report name, ``source_name`` what the file called it."""

    kind: str
    rows: list[SummaryRow]
    source_name: Optional[str] = None
    columns: tuple[str, ...] = ()
    note: str = ""  # e.g. nsys's "SKIPPED: ... does not contain CUDA kernel data."

    def to_dict(self) -> dict:
        return {"report": self.kind, "source_name": self.source_name, "note": self.note,
                "rows": [r.to_dict() for r in self.rows]}


@dataclass
class NsysStats:
    source: str
    reports: list[NsysReport] = field(default_factory=list)
    skipped_tables: list[str] = field(default_factory=list)  # headers of tables we do not read

    def get(self, kind: str) -> Optional[NsysReport]:
        for r in self.reports:
            if r.kind == kind:
                return r
        return None


def report_kind(name: str) -> Optional[str]:
    """Current report name for a current or old name (``gpukernsum`` → ``cuda_gpu_kern_sum``)."""
    return _CANONICAL.get(name.strip().lower())


def load_stats(path: str | Path) -> NsysStats:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file; expected the output of `nsys stats --format csv`")
    if p.is_dir():
        raise InputError(f"{p}: is a directory; expected the output of `nsys stats --format csv`")
    data = p.read_bytes()
    if p.suffix in (".nsys-rep", ".qdrep", ".sqlite") or b"\x00" in data[:4096]:
        raise InputError(f"{p}: a binary file; export it first: `nsys stats --report cuda_gpu_kern_sum "
                         f"--format csv {p.name}` and import that CSV")
    return parse_stats(data.decode("utf-8-sig", errors="replace"), str(p))


def _split_header(cell: str) -> tuple[str, Optional[str]]:
    """``"Avg (ns)"`` → ("avg", "ns"); ``"Time (%)"`` → ("time (%)", None)."""
    c = cell.strip()
    low = c.lower()
    if low in ("time (%)", "time(%)"):
        return low, None
    m = re.fullmatch(r"(.*?)\s*\(([^()]*)\)", low)
    if m:
        return m.group(1).strip(), m.group(2).strip()
    return low, None


def _header_fields(cells: list[str]) -> Optional[list[tuple[str, Optional[str]]]]:
    """Field and unit per column when ``cells`` is a summary header we read, else None."""
    out = []
    for c in cells:
        word, unit = _split_header(c)
        f = _FIELDS.get(word)
        if f is None:
            return None
        out.append((f, unit))
    names = [f for f, _ in out]
    if not {"total", "count", "name"} <= set(names) or len(set(names)) != len(names):
        return None
    return out


def _kind_from_header(cells: list[str], fields: list[tuple[str, Optional[str]]]) -> str:
    low = [c.strip().lower() for c in cells]
    has_time = any(f == "time_pct" for f, _ in fields)
    if "operation" in low:
        return MEM_TIME_SUM if has_time else MEM_SIZE_SUM
    if "instances" in low:
        return KERN_SUM
    return API_SUM  # "Num Calls": API or OS runtime, settled by the preamble or the row names


def _looks_like_header(cells: list[str]) -> bool:
    low = [c.strip().lower() for c in cells]
    return any(c.startswith("time") for c in low) and any(c in ("name", "operation", "range") for c in low)


def parse_stats(text: str, source: str = "<text>") -> NsysStats:
    """Every summary table in ``text`` (one report or several, with or without preamble lines)."""
    stats = NsysStats(source=source)
    lines = text.splitlines()
    hint: Optional[str] = None  # report name from the last preamble line
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        named = _preamble_report(stripped)
        if named is not None:
            hint = named if report_kind(named) else _OTHER
            i += 1
            continue
        if stripped.startswith("SKIPPED:"):
            if hint and hint != _OTHER:
                stats.reports.append(NsysReport(kind=report_kind(hint), rows=[], source_name=hint,
                                                note=stripped))
            hint = None
            i += 1
            continue
        cells = next(csv.reader([line]))
        fields = _header_fields(cells) if len(cells) > 1 else None
        if fields is None or hint == _OTHER:
            if len(cells) > 1 and (fields is not None or _looks_like_header(cells)):
                stats.skipped_tables.append(stripped)
                i = _skip_table(lines, i + 1, len(cells))
                hint = None
                continue
            if re.match(r"^\s*Time\s?\(%\)\s{2,}", line):
                raise InputError(f"{source}: line {i + 1} is nsys's text table, not CSV; re-run "
                                 f"`nsys stats` with --format csv")
            i += 1  # any other preamble line
            continue
        report, i = _read_table(lines, i, cells, fields, hint, source)
        stats.reports.append(report)
        hint = None
    if not stats.reports:
        extra = f" (tables of other reports were skipped: {stats.skipped_tables[0]!r})" if stats.skipped_tables else ""
        raise InputError(
            f"{source}: no nsys summary table found{extra}; expected `nsys stats --format csv` output of "
            f"cuda_gpu_kern_sum, cuda_api_sum, osrt_sum, cuda_gpu_mem_time_sum or cuda_gpu_mem_size_sum "
            f"(or their old names gpukernsum, cudaapisum, osrtsum, gpumemtimesum, gpumemsizesum)")
    return stats


def _preamble_report(line: str) -> Optional[str]:
    for rx in _PREAMBLE:
        m = rx.match(line)
        if m:
            return m.group(1)
    return None


def _skip_table(lines: list[str], i: int, ncols: int) -> int:
    while i < len(lines) and lines[i].strip():
        cells = next(csv.reader([lines[i]]))
        if len(cells) != ncols:
            break
        i += 1
    return i


def _read_table(lines, start, header, fields, hint, source) -> tuple[NsysReport, int]:
    kind = _kind_from_header(header, fields)
    hinted = report_kind(hint) if hint else None
    if kind == API_SUM and hinted in (API_SUM, OSRT_SUM):
        kind = hinted
    default_unit = "ns"
    if kind == MEM_SIZE_SUM:
        # the old gpumemsizesum printed sizes in KiB with bare column names ("Total", "Average")
        default_unit = "kib"
    rows: list[SummaryRow] = []
    i = start + 1
    while i < len(lines) and lines[i].strip():
        cells = next(csv.reader([lines[i]]))
        if len(cells) != len(header):
            break
        rows.append(_row(cells, fields, default_unit, source, i + 1))
        i += 1
    if kind == API_SUM and hinted is None and rows and not all(r.name.startswith("cu") for r in rows):
        kind = OSRT_SUM  # no preamble: a table of poll/ioctl/pthread_* calls is the OS-runtime one
    return NsysReport(kind=kind, rows=rows, source_name=hint if hinted else None,
                      columns=tuple(c.strip() for c in header)), i


def _number(cell: str, source: str, lineno: int, column: str) -> Optional[float]:
    s = cell.strip().replace(",", "")
    if s in ("", "-", "N/A"):
        return None
    try:
        return float(s)
    except ValueError:
        raise InputError(f"{source}: line {lineno}: column {column!r} has {cell!r}; expected a number") from None


def _row(cells, fields, default_unit, source, lineno) -> SummaryRow:
    vals: dict[str, Optional[float]] = {}
    name = ""
    unit_out = "ns"
    for cell, (f, unit) in zip(cells, fields):
        if f == "name":
            name = cell.strip()
            continue
        v = _number(cell, source, lineno, f)
        if f in ("time_pct", "count"):
            vals[f] = v
            continue
        u = (unit or default_unit).lower()
        if u not in _UNIT_SCALE:
            raise InputError(f"{source}: line {lineno}: unit {unit!r} of column {f!r} is not one nsys uses "
                             f"(expected ns, MB or KiB)")
        unit_out, scale = _UNIT_SCALE[u]
        vals[f] = None if v is None else v * scale
    for need in ("total", "count"):
        if vals.get(need) is None:
            raise InputError(f"{source}: line {lineno}: no value in column {need!r}")
    count = vals["count"]
    return SummaryRow(
        name=name,
        instances=int(count),
        total=vals["total"],
        avg=vals.get("avg") if vals.get("avg") is not None else vals["total"] / max(count, 1),
        med=vals.get("med"),
        min=vals.get("min"),
        max=vals.get("max"),
        stddev=vals.get("stddev"),
        time_pct=vals.get("time_pct"),
        unit=unit_out,
    )
