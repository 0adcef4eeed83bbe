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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from gemmlab.bench.env import utc_now
from gemmlab.errors import InputError

SCHEMA_VERSION = 1

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
    command: str
    gpu: Optional[str]
    n_results: int
    kernels: str  # comma-separated, in order
    dtypes: str = ""  # the rows' BenchSpec dtypes, comma-separated ("float32", "bf16", ...): which ladder

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class Store:
    """An open results database. Use as a context manager or call ``close()``."""

    def __init__(self, path: Path | str | None = None, *, create: bool = True) -> None:
        self.path = Path(path).expanduser() if path is not None else default_path()
        if self.path.is_dir():
            raise InputError(f"--db {self.path}: is a directory; expected a SQLite file path")
        if not self.path.exists():
            if not create:
                raise InputError(f"--db {self.path}: no such results database (run `gemmlab ladder` first)")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise InputError(f"--db {self.path}: cannot create its folder ({e.strerror})") from None
        try:
            self._db = sqlite3.connect(str(self.path))
            self._db.execute("PRAGMA foreign_keys = ON")
            self._init_schema()
        except sqlite3.DatabaseError as e:
            raise InputError(f"--db {self.path}: not a gemmlab results database ({e})") from None

    def _init_schema(self) -> None:
        with self._db:
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT max(version) FROM schema_version").fetchone()
            if row[0] is None:
                self._db.execute("INSERT INTO schema_version(version) VALUES (?)", (SCHEMA_VERSION,))
            elif row[0] > SCHEMA_VERSION:
                raise InputError(
                    f"--db {self.path}: schema version {row[0]} is newer than this gemmlab understands "
                    f"({SCHEMA_VERSION}); upgrade gemmlab or choose another --db"
                )

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- writing ----------------------------------------------------------------------------
    def add_run(self, command: str, env: Mapping[str, Any], rows: Iterable[Mapping[str, Any]], meta: Mapping[str, Any] | None = None) -> int:
        """Append one run and its results (``Row.to_dict()`` dicts) in one transaction; its id."""
        rows = list(rows)
        with self._db:
            cur = self._db.execute(
                "INSERT INTO runs(created_utc, command, gpu, gemmlab_version, env_json, meta_json) VALUES (?,?,?,?,?,?)",
                (
                    utc_now(),
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

    # --- reading ----------------------------------------------------------------------------
    def list_runs(self, limit: Optional[int] = None) -> list[RunSummary]:
        """Newest first."""
        sql = """SELECT r.id, r.created_utc, r.command, r.gpu, count(x.id), coalesce(group_concat(x.kernel, ','), ''),
                        coalesce((SELECT group_concat(DISTINCT d.dtype) FROM results d WHERE d.run_id = r.id), '')
                 FROM runs r LEFT JOIN (SELECT * FROM results ORDER BY run_id, seq) x ON x.run_id = r.id
                 GROUP BY r.id ORDER BY r.id DESC"""
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [RunSummary(*row) for row in self._db.execute(sql).fetchall()]

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

    def export_json(self, run_id: int) -> str:
        return _dumps(self.load_run(run_id), indent=2)


def _num(v: Any) -> Optional[float]:
    if v is None:
        return None
    v = float(v)
    return v if v == v and v not in (float("inf"), float("-inf")) else None


def _dumps(obj: Any, indent: Optional[int] = None) -> str:
    """Strict JSON: NaN/inf become null (the same rule as gemmlab.output)."""
    return json.dumps(_strict(obj), allow_nan=False, indent=indent)


def _strict(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, Mapping):
        return {str(k): _strict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict(v) for v in obj]
    return obj
