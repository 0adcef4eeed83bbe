"""Files a user keeps or shares (reports, plots, run JSON): written whole or not at all, with the
ordinary permissions a new file gets (0666 less the umask), not the 0600 of a temporary file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def temp_beside(path: Path, suffix: str = ".tmp") -> str:
    """A temporary file in ``path``'s folder (same filesystem, so the final rename is atomic), with the
    permissions the finished file should have; the caller writes it and calls ``os.replace``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=suffix, dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    return tmp


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` next to ``path``, then rename: a failed write never leaves half a file."""
    tmp = temp_beside(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
