"""A cache of decoded ``.ncu-rep`` launches, so a report is decoded through ncu_report once.

Entries live in ``$GEMMLAB_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/gemmlab/ncu-rep`` (default
``~/.cache/gemmlab/ncu-rep``), never next to the report. An entry is named by the SHA-256 of the
report's bytes, its size, the metric selection and this format's version, so a report that changes
in any byte (or a different file with the same name) misses, while a copy or a ``touch`` of the
same bytes hits; the entry also records the size and mtime it was written from. Entries are JSON
(the payload ``ncu_rep.decode`` writes, without the path it was read from), written to a temporary
file in the same folder and renamed into place, so a reader never sees half an entry. An entry that
does not parse or does not match its key is ignored (and overwritten by the next decode). At most
``MAX_ENTRIES`` entries and ``MAX_BYTES`` are kept, the least recently written dropped first.

``GEMMLAB_NCU_REP_CACHE=0`` turns the cache off. Hashing costs ~1 ms per MB; a failure to read or
write the cache only logs and never fails the command.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from gemmlab.fileio import write_atomic

log = logging.getLogger(__name__)

VERSION = 1  # bump when the payload's meaning changes (not for gemmlab changes that re-derive from it)
MAX_ENTRIES = 64
MAX_BYTES = 256 << 20  # an entry is ~30 KB a launch


@dataclass(frozen=True)
class Key:
    folder: Path
    name: str  # the entry's file name
    digest: str
    size: int
    mtime_ns: int

    @property
    def path(self) -> Path:
        return self.folder / self.name


def enabled() -> bool:
    return os.environ.get("GEMMLAB_NCU_REP_CACHE", "1") != "0"


def folder() -> Path:
    explicit = os.environ.get("GEMMLAB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gemmlab" / "ncu-rep"


def key(report: Path, selection: str, data: Optional[bytes] = None) -> Optional[Key]:
    """The cache key of ``report`` as it is now (``data``: its bytes, when read already); None when
    the cache is off or the file unreadable."""
    if not enabled():
        return None
    try:
        st = report.stat()
        if data is not None:
            digest = hashlib.sha256(data).hexdigest()
            size = len(data)
        else:
            with open(report, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
            size = st.st_size
    except OSError as e:
        log.debug("ncu-rep cache: cannot hash %s (%s)", report, e)
        return None
    name = f"{digest[:40]}-{size}-{selection}-v{VERSION}.json"
    return Key(folder(), name, digest, size, st.st_mtime_ns)


def may_hold(size: int, selection: str) -> bool:
    """Whether the cache may hold the records of a report of ``size`` bytes: False when no entry has
    that size and selection, so that a report is known to miss before it is hashed."""
    if not enabled():
        return False
    try:
        return any(folder().glob(f"*-{size}-{selection}-v{VERSION}.json"))
    except OSError:
        return True


def get(k: Optional[Key]) -> Optional[dict]:
    """The cached payload for ``k``, or None (no entry, or one that is damaged or does not match)."""
    if k is None:
        return None
    try:
        entry = json.loads(k.path.read_bytes())
        if (entry.get("version") != VERSION or entry.get("sha256") != k.digest or entry.get("size") != k.size
                or not isinstance(entry.get("payload", {}).get("launches"), list)):
            log.debug("ncu-rep cache: %s does not match its key; ignored", k.path)
            return None
        return entry["payload"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, AttributeError, TypeError) as e:
        log.debug("ncu-rep cache: %s unreadable (%s); ignored", k.path, e)
        return None


def put(k: Optional[Key], payload: dict) -> None:
    """Store ``payload`` under ``k`` atomically; errors are logged, never raised."""
    if k is None:
        return
    entry = {"version": VERSION, "sha256": k.digest, "size": k.size, "mtime_ns": k.mtime_ns, "payload": payload}
    try:
        write_atomic(k.path, json.dumps(entry, separators=(",", ":")), make_parents=True)
        _prune(k.folder)
    except OSError as e:
        log.debug("ncu-rep cache: cannot write %s (%s)", k.path, e)


def _prune(where: Path) -> None:
    """Drop the least recently written entries beyond MAX_ENTRIES or MAX_BYTES."""
    entries = []
    for p in where.glob("*-v*.json"):
        try:
            st = p.stat()
        except OSError:
            continue
        entries.append((st.st_mtime_ns, st.st_size, p))
    entries.sort(reverse=True)  # newest first
    total = 0
    for i, (_, size, p) in enumerate(entries):
        total += size
        if i >= MAX_ENTRIES or (i > 0 and total > MAX_BYTES):
            try:
                p.unlink()
            except OSError:
                pass
