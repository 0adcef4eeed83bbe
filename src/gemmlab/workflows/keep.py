"""Keeping what a run measured: the results database (append-only) and the ``--out`` JSON file.

Both destinations are checked before any GPU work (``check_destinations``): a bad ``--db`` or an
existing ``--out`` is refused in one line while nothing has been measured yet. After the run,
``keep`` stores the record, then writes the file; a failure of one never loses the other, and when
neither could take the run, it is written to a fresh file in the working directory rather than lost.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from gemmlab.bench.results import RunRecord
from gemmlab.errors import InputError, UserError
from gemmlab.fileio import write_new
from gemmlab.fileio import to_json as dumps
from gemmlab.store import Store, check_writable, default_path
from gemmlab.workflows.kinds import as_dict


def check_destinations(out: Optional[Path], force: bool, db: Optional[Path], no_store: bool) -> None:
    """InputError now, before the GPU work, if the run could not be kept where asked."""
    if out is not None:
        if out.exists() and out.is_dir():
            raise InputError(f"--out {out}: is a directory; expected a .json file path")
        if out.exists() and not force:
            raise InputError(f"--out {out}: file exists; pass --force to replace it")
        if not out.parent.exists():
            raise InputError(f"--out {out}: folder {out.parent} does not exist")
    if not no_store:
        path = db if db is not None else default_path()
        try:
            check_writable(path)
        except InputError as e:
            raise InputError(f"--db {e.message}") from None


@dataclass(frozen=True)
class Kept:
    record: RunRecord  # with its run id when stored
    db: Optional[Path]  # the database it went to
    document: dict  # the JSON form written to --out and printed by --json


def keep(record: RunRecord, *, db: Optional[Path], no_store: bool, out: Optional[Path], force: bool) -> Kept:
    """Store ``record`` (unless ``no_store``), then write it to ``out`` (when given). A failure to
    store still writes ``out``; a failure to write ``out`` keeps the stored run; either is then
    reported as one error naming where the run did go."""
    problems: list[str] = []
    stored_in: Optional[Path] = None
    if not no_store:
        try:
            with Store(db) as store:
                run_id = store.add_record(record, _extras(record))
                stored_in = store.path
            record = replace(record, run_id=run_id)
        except (UserError, OSError, sqlite3.Error, KeyError, TypeError, ValueError) as e:  # a failure to store must not lose the run
            problems.append(f"could not store the run in {db or default_path()} ({_why(e)})")
    document = as_dict(record)
    if stored_in is not None:
        document["db"] = str(stored_in)
    written: Optional[Path] = None
    if out is not None:
        try:
            write_new(out, dumps(document) + "\n", force=force)
            written = out
        except FileExistsError:
            problems.append(f"--out {out}: file exists (created during the run); pass --force to replace it")
        except OSError as e:
            problems.append(f"could not write --out {out} ({e.strerror or e})")
    if problems:
        if stored_in is None and written is None:
            written = _rescue(document)
        where = [f"stored as run {record.run_id} in {stored_in}"] if stored_in else []
        where += [f"written to {written}"] if written else []
        raise UserError("; ".join(problems) + "; the run was " + (" and ".join(where) or "lost"), code=1)
    return Kept(record, stored_in, document)


def _extras(record: RunRecord) -> list[dict]:
    from gemmlab.workflows.kinds import ROW_EXTRAS

    return ROW_EXTRAS[record.kind](record)


def _why(e: BaseException) -> str:
    return getattr(e, "message", None) or str(e) or type(e).__name__


def _rescue(document: dict) -> Optional[Path]:
    """The run, written where the user is, when neither the database nor --out could take it."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 100):
        name = Path(f"gemmlab-unsaved-{stamp}" + (f"-{n}" if n > 1 else "") + ".json")
        try:
            write_new(name, dumps(document) + "\n")  # never replaces a file: the next name instead
            return name
        except FileExistsError:
            continue
        except OSError:
            return None
    return None
