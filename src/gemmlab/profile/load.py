"""One entry point for every Nsight Compute export: detect the format, parse, filter kernels."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from gemmlab.errors import InputError
from gemmlab.profile import ncu_csv
from gemmlab.profile.records import KernelLaunch


def read_text(path: Path) -> str:
    if not path.exists():
        raise InputError(f"{path}: no such file; expected an Nsight Compute export (.csv or .ncu-rep)")
    if path.is_dir():
        raise InputError(f"{path}: is a directory; expected an Nsight Compute export file")
    data = path.read_bytes()
    if not data.strip():
        raise InputError(f"{path}: file is empty; expected an Nsight Compute export")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text CSV (binary data); expected an ncu --csv export or .ncu-rep") from None


def load(path: str | Path, kernel: Optional[str] = None) -> list[KernelLaunch]:
    """All kernel launches in ``path``, optionally those whose name matches the regex ``kernel``."""
    p = Path(path)
    text = read_text(p)
    launches = ncu_csv.read_raw(text, str(p))
    return filter_kernels(launches, kernel, str(p))


def filter_kernels(launches: list[KernelLaunch], pattern: Optional[str], source: str) -> list[KernelLaunch]:
    if not pattern:
        return launches
    try:
        rx = re.compile(pattern)
    except re.error as e:
        raise InputError(f"--kernel {pattern!r}: not a valid regular expression ({e})") from None
    hits = [k for k in launches if rx.search(k.name) or rx.search(k.demangled)]
    if not hits:
        names = ", ".join(sorted({k.name for k in launches}))
        raise InputError(f"{source}: no kernel matches --kernel {pattern!r}; kernels in the file: {names}")
    return hits
