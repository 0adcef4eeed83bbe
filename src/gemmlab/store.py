"""The results store: one SQLite file, append-only.

Every ``gemmlab ladder / bench / sweep`` adds one row to ``runs`` and one row per kernel to
``results``, in one transaction. Nothing is ever updated or deleted: triggers in the schema refuse
UPDATE and DELETE, so an earlier run cannot be overwritten by this code or by a mistake in a later
version of it. Raw samples are stored as JSON lists of seconds, unrounded; the summary columns
(median, IQR, ...) are derived copies kept for queries.

Default path: ``$GEMMLAB_DB``, else ``$XDG_DATA_HOME/gemmlab/runs.sqlite``, else
``~/.local/share/gemmlab/runs.sqlite``; ``--db`` overrides both.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence

from gemmlab.bench.env import utc_now
from gemmlab.bench.results import RunRecord, load_record
from gemmlab.errors import InputError
from gemmlab.fileio import to_json
from gemmlab.problem import LEGACY_DTYPES, gemm_types

SCHEMA_VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_utc TEXT NOT NULL,
    command TEXT NOT NULL,
    gpu TEXT,
    gemmlab_version TEXT,
    env_json TEXT NOT NULL,
    meta_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    seq INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    M INTEGER NOT NULL,
    N INTEGER NOT NULL,
    K INTEGER NOT NULL,
    dtype TEXT NOT NULL,
    alpha REAL NOT NULL,
    beta REAL NOT NULL,
    n_samples INTEGER NOT NULL,
    samples_json TEXT NOT NULL,
    median_s REAL NOT NULL,
    q1_s REAL NOT NULL,
    q3_s REAL NOT NULL,
    min_s REAL NOT NULL,
    mean_s REAL NOT NULL,
    gflops REAL,
    noisy INTEGER NOT NULL,
    correct INTEGER NOT NULL,
    rel_err REAL,
    check_json TEXT NOT NULL,
    config_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS results_run ON results(run_id);
CREATE INDEX IF NOT EXISTS results_kernel_shape ON results(kernel, M, N, K);
CREATE TRIGGER IF NOT EXISTS runs_no_update BEFORE UPDATE ON runs
    BEGIN SELECT RAISE(ABORT, 'gemmlab store is append-only: runs cannot be changed'); END;
CREATE TRIGGER IF NOT EXISTS runs_no_delete BEFORE DELETE ON runs
    BEGIN SELECT RAISE(ABORT, 'gemmlab store is append-only: runs cannot be deleted'); END;
CREATE TRIGGER IF NOT EXISTS results_no_update BEFORE UPDATE ON results
    BEGIN SELECT RAISE(ABORT, 'gemmlab store is append-only: results cannot be changed'); END;
CREATE TRIGGER IF NOT EXISTS results_no_delete BEFORE DELETE ON results
    BEGIN SELECT RAISE(ABORT, 'gemmlab store is append-only: results cannot be deleted'); END;
"""

# Keys of a result dict (``Row.to_dict()``) that have their own columns; the rest goes to config_json.
_COLUMNS_FROM_ROW = {"kernel", "samples_s", "check", "spec", "correct"}


def _tables(path: Path) -> set[str]:
    """The table names of an SQLite file, read without writing to it."""
    with closing(sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def is_sqlite(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def check_readable(path: Path) -> None:
    """InputError unless ``path`` is a gemmlab results database (checked without writing to it)."""
    if path.is_dir():
        raise InputError(f"{path}: is a directory; expected a gemmlab results database")
    if not path.exists():
        raise InputError(f"{path}: no such results database (run `gemmlab ladder` first)")
    _check_ours(path, allow_empty=False)


def check_writable(path: Path) -> None:
    """InputError unless a run can be stored at ``path``: a gemmlab results database, or a new (or
    empty) file in a folder that exists or can be made. Checked before any GPU work, without
    writing to the file."""
    if path.is_dir():
        raise InputError(f"{path}: is a directory; expected a SQLite file path")
    if path.exists():
        _check_ours(path, allow_empty=True)
        if not os.access(path, os.W_OK):
            raise InputError(f"{path}: the results database is not writable")
        return
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and (not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK)):
        raise InputError(f"{path}: cannot create it ({parent} is not a writable folder)")


def _check_ours(path: Path, allow_empty: bool) -> None:
    if path.stat().st_size == 0:
        if allow_empty:
            return
        raise InputError(f"{path}: an empty file, not a gemmlab results database")
    if not is_sqlite(path):
        raise InputError(f"{path}: not a gemmlab results database (not an SQLite file)")
    try:
        tables = _tables(path)
    except sqlite3.DatabaseError as e:
        raise InputError(f"{path}: not a gemmlab results database ({e})") from None
    if tables and not {"runs", "results"} <= tables:
        raise InputError(f"{path}: an SQLite file without gemmlab's runs/results tables (it has "
                         f"{', '.join(sorted(tables)[:5])}); expected a gemmlab results database")


def default_path() -> Path:
    env = os.environ.get("GEMMLAB_DB")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "gemmlab" / "runs.sqlite"


@dataclass(frozen=True)
class RunSummary:
    id: int
    created_utc: str
    kind: str  # ladder, sweep, bench, lesson or shapes (the runs table's command column)
    gpu: Optional[str]
    n_results: int
    kernels: str  # the distinct kernel names, comma-separated, in the order they first ran
    dtypes: str = ""  # the rows' A/B types, comma-separated ("fp32", "bf16", "fp8"): which ladder

    def to_dict(self) -> dict:
        return dict(self.__dict__)


# A user run's kernel name and version key (the source text's hash; a run without one counts as
# its own version) inside meta_json.
_USER_NAME = "json_extract(meta_json, '$.kernel.name')"
_USER_SOURCE = ("coalesce(json_extract(meta_json, '$.kernel.source_sha256'), "
                "json_extract(meta_json, '$.kernel.source'), 'run ' || id)")


@dataclass(frozen=True)
class UserKernel:
    """One of your own kernels in the store: its name, runs and distinct sources (versions)."""

    name: str
    runs: int
    versions: int
    first_utc: str
    last_utc: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class Store:
    """An open results database. Use as a context manager or call ``close()``."""

    def __init__(self, path: Path | str | None = None, *, create: bool = True) -> None:
        """Open (``create``: or create) the database at ``path``. Without ``create`` it is opened
        read-only: a command that only reads never writes to the file, not even to add tables, and
        a file that is not a gemmlab database is refused untouched."""
        self.path = Path(path).expanduser() if path is not None else default_path()
        self.writable = create
        if create:
            check_writable(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise InputError(f"{self.path}: cannot create its folder ({e.strerror})") from None
        else:
            check_readable(self.path)
        try:
            if create:
                self._db = sqlite3.connect(str(self.path))
                self._db.execute("PRAGMA foreign_keys = ON")
                self._init_schema()
            else:
                self._db = sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True)
                self._check_version()
        except sqlite3.DatabaseError as e:
            raise InputError(f"{self.path}: not a gemmlab results database ({e})") from None

    def _init_schema(self) -> None:
        with self._db:
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT max(version) FROM schema_version").fetchone()
            if row[0] is None:
                self._db.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
        self._check_version()

    def _check_version(self) -> None:
        row = self._db.execute("SELECT max(version) FROM schema_version").fetchone()
        if row[0] is not None and row[0] > SCHEMA_VERSION:
            raise InputError(
                f"{self.path}: schema version {row[0]} is newer than this gemmlab understands "
                f"({SCHEMA_VERSION}); upgrade gemmlab or choose another database"
            )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- writing ----------------------------------------------------------------------------
    def add_run(self, command: str, env: Mapping[str, Any], rows: Iterable[Mapping[str, Any]],
                meta: Mapping[str, Any] | None = None, created_utc: str = "") -> int:
        """Append one run and its results (``Row.to_dict()`` dicts) in one transaction; its id.
        ``created_utc``: when the run was measured (default: now)."""
        rows = list(rows)
        with self._db:
            cur = self._db.execute(
                "INSERT INTO runs(created_utc, command, gpu, gemmlab_version, env_json, meta_json) VALUES (?,?,?,?,?,?)",
                (
                    created_utc or utc_now(),
                    command,
                    env.get("gpu"),
                    env.get("gemmlab"),
                    _dumps(env),
                    _dumps(meta or {}),
                ),
            )
            run_id = int(cur.lastrowid)
            for seq, r in enumerate(rows):
                spec = r["spec"]
                check = r["check"]
                config = {k: v for k, v in r.items() if k not in _COLUMNS_FROM_ROW}
                config["spec"] = spec
                self._db.execute(
                    """INSERT INTO results(run_id, seq, kernel, M, N, K, dtype, alpha, beta, n_samples,
                       samples_json, median_s, q1_s, q3_s, min_s, mean_s, gflops, noisy, correct, rel_err,
                       check_json, config_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""",
                    (
                        run_id,
                        seq,
                        r["kernel"],
                        spec["M"],
                        spec["N"],
                        spec["K"],
                        spec["dtype"],
                        spec["alpha"],
                        spec["beta"],
                        len(r["samples_s"]),
                        json.dumps(list(r["samples_s"])),
                        r["median_s"],
                        r["q1_s"],
                        r["q3_s"],
                        r["min_s"],
                        r["mean_s"],
                        _num(r.get("gflops")),
                        int(bool(r["noisy"])),
                        int(bool(r["correct"])),
                        _num(check.get("rel_err")),
                        _dumps(check),
                        _dumps(config),
                    ),
                )
        return run_id

    def add_record(self, record: RunRecord, row_extras: Optional[Sequence[Mapping[str, Any]]] = None) -> int:
        """Append a run record (its rows with ``row_extras``, the kind's derived numbers, as queryable
        copies); its id."""
        d = record.to_dict(row_extras)
        meta = {k: v for k, v in d.items() if k not in ("command", "env", "rows", "run_id", "created_utc")}
        return self.add_run(record.kind, d["env"], d["rows"], meta, record.created_utc)

    # --- reading ----------------------------------------------------------------------------
    def list_runs(self, limit: Optional[int] = None, kind: Optional[str] = None) -> list[RunSummary]:
        """Newest first (of ``kind`` when given). Reads the runs table and the results' names and
        dtypes only: never the samples."""
        where, params = ("WHERE command = ?", [kind]) if kind is not None else ("", [])
        lim = "" if limit is None else f"LIMIT {int(limit)}"
        runs = self._db.execute(f"SELECT id, created_utc, command, gpu FROM runs {where} ORDER BY id DESC {lim}",
                                params).fetchall()
        out = []
        for i, created, run_kind, gpu in runs:
            names = self._db.execute("SELECT kernel, dtype FROM results WHERE run_id = ? ORDER BY seq", (i,)).fetchall()
            out.append(RunSummary(i, created, run_kind, gpu, len(names), _distinct(k for k, _ in names),
                                  _distinct(_ab_type(d) for _, d in names)))
        return out

    def load_run(self, run_id: int) -> dict:
        """A stored run as one dict (the same shape as the JSON a command writes with --out)."""
        head = self._db.execute(
            "SELECT id, created_utc, command, gpu, gemmlab_version, env_json, meta_json FROM runs WHERE id = ?",
            (run_id,),
        ).fetchone()
        if head is None:
            raise InputError(f"run {run_id}: no such run in {self.path} (see `gemmlab runs`)")
        results = []
        for row in self._db.execute(
            "SELECT kernel, samples_json, check_json, config_json, correct FROM results WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ):
            kernel, samples, check, config, correct = row
            d = {"kernel": kernel, **json.loads(config)}
            d["samples_s"] = json.loads(samples)
            d["correct"] = bool(correct)
            d["check"] = json.loads(check)
            results.append(d)
        meta = json.loads(head[6])
        return {
            "run_id": head[0],
            "created_utc": head[1],
            "command": head[2],
            "gpu": head[3],
            "gemmlab_version": head[4],
            "env": json.loads(head[5]),
            **meta,
            "rows": results,
        }

    def load_record(self, run_id: int) -> RunRecord:
        """A stored run as a ``RunRecord``, whichever gemmlab version stored it."""
        return load_record(self.load_run(run_id), f"{self.path} run {run_id}")

    def run_types(self, run_id: int) -> set[tuple[str, str]]:
        """The (A/B, C) dtype pairs of a run's rows, read without loading its samples."""
        rows = self._db.execute(
            "SELECT DISTINCT dtype, json_extract(config_json, '$.spec.out_dtype') FROM results WHERE run_id = ?",
            (run_id,)).fetchall()
        return {gemm_types(d, out or None) for d, out in rows}

    # --- your own kernel's runs (kind "user", filed under meta.kernel.name) -------------------
    def user_kernels(self) -> list[UserKernel]:
        """Your kernels' names (runs of kind "user"), in the order each first ran, with how many runs
        and distinct source texts (versions) each has. Reads the runs table only, never the samples."""
        rows = self._db.execute(
            f"""SELECT {_USER_NAME} AS name, count(*), count(DISTINCT {_USER_SOURCE}), min(created_utc),
                       max(created_utc)
                FROM runs WHERE command = 'user' AND {_USER_NAME} IS NOT NULL
                GROUP BY name ORDER BY min(id)""").fetchall()
        return [UserKernel(str(n), int(runs), int(versions), first or "", last or "")
                for n, runs, versions, first, last in rows]

    def user_runs(self, name: str) -> list[RunRecord]:
        """Every run of your kernel ``name`` (kind "user"), oldest first (in the order they were
        stored); [] when there is none."""
        ids = self._db.execute(f"SELECT id FROM runs WHERE command = 'user' AND {_USER_NAME} = ? ORDER BY id",
                               (name,)).fetchall()
        return [self.load_record(i) for (i,) in ids]

    def newest(self, kind: Optional[str] = None) -> Optional[RunSummary]:
        """The newest run (of ``kind``), or None."""
        found = self.list_runs(limit=1, kind=kind)
        return found[0] if found else None

    def export_json(self, run_id: int) -> str:
        return _dumps(self.load_run(run_id), indent=2)


def _distinct(names: Iterable[str]) -> str:
    return ",".join(dict.fromkeys(n for n in names if n))


def _ab_type(dtype: str) -> str:
    """A stored dtype in today's vocabulary (gemmlab 0.1 stored "float32", "bf16_fp32out", ...)."""
    return LEGACY_DTYPES[dtype][0] if dtype in LEGACY_DTYPES else dtype


def _num(v: Any) -> Optional[float]:
    if v is None:
        return None
    v = float(v)
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def _dumps(obj: Any, indent: Optional[int] = None) -> str:
    """Strict JSON: NaN/inf become null (``fileio.to_json``)."""
    return to_json(obj, indent=indent)
