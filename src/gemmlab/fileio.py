"""Writing files whole or not at all: the one atomic writer every part of gemmlab uses.

Reports, plots, run JSON, the compile cache, autotuning records, the ceilings store and the
``.ncu-rep`` cache are all written the same way: to a temporary file in the target's folder (same
filesystem, so the final rename is atomic), flushed, then renamed over the target. A crash or a
full disk leaves either the old file or the new one, never half of one. The finished file gets the
permissions a new file ordinarily gets (0666 less the umask), not the 0600 of a temporary file:
reports and plots are meant to be shared.

``write_new`` is the same for files a user keeps: it never replaces an existing file unless told to.
``to_json`` is the one JSON writer: strict (NaN and infinities become null, which JSON can hold),
objects with a ``to_dict`` written as their dict.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator, Optional, Union

Data = Union[bytes, str]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _bytes(data: Data) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


@contextlib.contextmanager
def temp_beside(path: Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary file in ``path``'s folder with the permissions the finished file should have;
    removed on the way out unless the caller renamed it into place."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}-", suffix=suffix, dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    try:
        yield Path(tmp)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _fill(tmp: Path, data: bytes) -> None:
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def write_atomic(path: Path | str, data: Data, *, make_parents: bool = False) -> None:
    """Write ``data`` next to ``path``, then rename it into place (replacing any file there)."""
    path = Path(path)
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    with temp_beside(path) as tmp:
        _fill(tmp, _bytes(data))
        os.replace(tmp, path)


def write_new(path: Path | str, data: Data, *, force: bool = False) -> None:
    """Like ``write_atomic``, but an existing ``path`` is never replaced unless ``force``:
    ``FileExistsError`` instead. The check and the write are one step (a hard link of the finished
    temporary file), so a file that appears meanwhile is not overwritten either."""
    path = Path(path)
    if force:
        write_atomic(path, data)
        return
    with temp_beside(path) as tmp:
        _fill(tmp, _bytes(data))
        try:
            os.link(tmp, path)  # fails with EEXIST when the target exists: never replaces it
        except OSError as e:
            if e.errno == errno.EEXIST:
                raise FileExistsError(errno.EEXIST, "file exists", str(path)) from None
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            # a filesystem without hard links: exclusive create, then the bytes
            with open(path, "xb") as f:
                f.write(_bytes(data))


@contextlib.contextmanager
def atomic_output(path: Path | str, suffix: str = "") -> Iterator[Path]:
    """For writers that want a path (matplotlib's ``savefig``): yields a temporary path in the
    target's folder; when the block ends without an error it replaces ``path``."""
    path = Path(path)
    with temp_beside(path, suffix=suffix or ".tmp") as tmp:
        yield tmp
        os.replace(tmp, path)


def jsonable(obj: Any) -> Any:
    """``obj`` with NaN/inf as None, tuples as lists, keys as strings and ``to_dict`` objects as dicts."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None  # JSON has no NaN/inf; null says "no value"
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "to_dict"):
        return jsonable(obj.to_dict())
    if hasattr(obj, "items"):  # other mappings
        return {str(k): jsonable(v) for k, v in obj.items()}
    return obj


def to_json(obj: Any, indent: Optional[int] = 2) -> str:
    """Stable, strict JSON."""
    return json.dumps(jsonable(obj), indent=indent, sort_keys=False, allow_nan=False)
