"""Keeping a run: the database and ``--out`` are checked before the GPU work, a failure of one
destination never loses the run, and reading a database never writes to it."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import run_cli
from fakes_bench import article_result

from gemmlab.bench.results import KINDS, load_record
from gemmlab.errors import InputError, UserError
from gemmlab.store import Store
from gemmlab.workflows.keep import check_destinations, keep

REPO = Path(__file__).resolve().parents[1]


def foreign_db(path: Path) -> Path:
    with sqlite3.connect(path) as c:
        c.execute("CREATE TABLE notes (x TEXT)")
        c.execute("INSERT INTO notes VALUES ('mine')")
    return path


# --- before the GPU work -----------------------------------------------------------------------
def test_destinations_are_refused_before_any_measurement(tmp_path):
    (tmp_path / "old.json").write_text("{}")
    cases = [
        (dict(out=tmp_path / "old.json"), "file exists; pass --force"),
        (dict(out=tmp_path), "is a directory; expected a .json file path"),
        (dict(out=tmp_path / "no" / "x.json"), "does not exist"),
        (dict(db=tmp_path), "--db .*is a directory"),
        (dict(db=foreign_db(tmp_path / "other.sqlite")), "--db .*without gemmlab's runs/results tables"),
        (dict(db=tmp_path / "old.json"), "--db .*not an SQLite file"),
    ]
    for kw, message in cases:
        args = dict(out=None, force=False, db=tmp_path / "ok.sqlite", no_store=False) | kw
        with pytest.raises(InputError, match=message):
            check_destinations(**args)
    check_destinations(tmp_path / "old.json", True, None, True)  # --force, --no-store: fine
    assert not (tmp_path / "ok.sqlite").exists()  # checking never creates the database


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_database_folder_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        with pytest.raises(InputError, match="--db .*not a writable folder"):
            check_destinations(None, False, ro / "runs.sqlite", False)
    finally:
        ro.chmod(0o700)


@pytest.mark.parametrize("command", [["ladder"], ["lesson", "coalescing"], ["shapes"]])
def test_measuring_commands_check_the_database_before_the_gpu(capsys, tmp_path, command):
    db = foreign_db(tmp_path / "other.sqlite")
    before = db.read_bytes()
    code, _, err = run_cli(capsys, *command, "--db", str(db))
    assert code == 2 and "without gemmlab's runs/results tables" in err and "GPU" not in err
    assert db.read_bytes() == before


# --- after the run -----------------------------------------------------------------------------
def test_a_run_is_stored_and_written(tmp_path):
    out, db = tmp_path / "run.json", tmp_path / "runs.sqlite"
    kept = keep(article_result(), db=db, no_store=False, out=out, force=False)
    assert kept.record.run_id == 1 and kept.db == db
    doc = json.loads(out.read_text())
    assert doc["run_id"] == 1 and doc["db"] == str(db) and doc == kept.document
    with Store(db) as s:
        assert s.load_record(1).rows == kept.record.rows


def test_a_database_failure_still_writes_out(tmp_path):
    out, db = tmp_path / "run.json", foreign_db(tmp_path / "other.sqlite")
    before = db.read_bytes()
    with pytest.raises(UserError) as e:
        keep(article_result(), db=db, no_store=False, out=out, force=False)
    assert e.value.code == 1
    assert f"could not store the run in {db}" in e.value.message and f"written to {out}" in e.value.message
    assert db.read_bytes() == before
    assert load_record(json.loads(out.read_text()), str(out)).rows == article_result().rows


def test_an_out_failure_keeps_the_stored_run(tmp_path):
    out, db = tmp_path / "gone" / "run.json", tmp_path / "runs.sqlite"
    with pytest.raises(UserError, match=f"could not write --out {out}.*stored as run 1 in {db}"):
        keep(article_result(), db=db, no_store=False, out=out, force=False)
    with Store(db) as s:
        assert [r.id for r in s.list_runs()] == [1]


def test_an_out_file_created_during_the_run_is_not_replaced(tmp_path):
    out = tmp_path / "run.json"
    out.write_text("the user's file")
    with pytest.raises(UserError, match="created during the run"):
        keep(article_result(), db=tmp_path / "r.sqlite", no_store=False, out=out, force=False)
    assert out.read_text() == "the user's file"


def test_when_nothing_takes_the_run_it_is_rescued_where_the_user_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    db = foreign_db(tmp_path / "f.sqlite")
    for _ in range(2):  # a second rescue in the same second gets its own file
        with pytest.raises(UserError, match=r"the run was written to gemmlab-unsaved-.*\.json"):
            keep(article_result(), db=db, no_store=False,
                 out=tmp_path / "gone" / "x.json", force=False)
    rescued = sorted(tmp_path.glob("gemmlab-unsaved-*.json"))
    assert len(rescued) == 2
    for p in rescued:
        assert load_record(json.loads(p.read_text()), str(p)).kind == "ladder"


# --- reading never writes ----------------------------------------------------------------------
def test_runs_reads_a_database_without_writing_to_it(capsys, tmp_path):
    db = tmp_path / "runs.sqlite"
    keep(article_result(), db=db, no_store=False, out=None, force=False)
    before, mtime = db.read_bytes(), db.stat().st_mtime_ns
    db.chmod(0o400)
    try:
        code, out, err = run_cli(capsys, "runs", "--db", str(db))
        assert code == 0, err
        assert "Kind" in out and "ladder" in out
        code, out, err = run_cli(capsys, "runs", "1", "--db", str(db), "--json")
        assert code == 0, err and json.loads(out)["run_id"] == 1
    finally:
        db.chmod(0o600)
    assert db.read_bytes() == before and db.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.sqlite"]  # no journal, no WAL


def test_runs_refuses_a_missing_or_foreign_database_without_creating_one(capsys, tmp_path):
    code, _, err = run_cli(capsys, "runs", "--db", str(tmp_path / "none.sqlite"))
    assert code == 2 and "no such results database" in err
    assert not (tmp_path / "none.sqlite").exists()
    db = foreign_db(tmp_path / "other.sqlite")
    code, _, err = run_cli(capsys, "runs", "--db", str(db))
    assert code == 2 and "without gemmlab's runs/results tables" in err


# --- the runs recorded before this record format still read ------------------------------------
RECORDED_DBS = sorted((REPO / "docs/results").rglob("*.sqlite"))
RECORDED_JSON = sorted(p for p in (REPO / "docs/results").rglob("*.json")
                       if '"rows"' in p.read_text(errors="replace")[:100_000])


@pytest.mark.parametrize("path", RECORDED_DBS, ids=lambda p: str(p.relative_to(REPO / "docs/results")))
def test_every_recorded_database_run_loads(path):
    from gemmlab.workflows.runs import load

    with Store(path, create=False) as s:
        ids = [r.id for r in s.list_runs()]
    assert ids
    for i in ids:
        record = load(path, i)
        assert record.rows and record.run_id == i and record.kind in KINDS
        for row in record.rows:
            assert row.median_s > 0


@pytest.mark.parametrize("path", RECORDED_JSON, ids=lambda p: str(p.relative_to(REPO / "docs/results")))
def test_every_recorded_run_file_loads(path):
    from gemmlab.workflows.runs import file_records

    doc = json.loads(path.read_text())
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list) or not doc["rows"] \
            or not isinstance(doc["rows"][0], dict) or "spec" not in doc["rows"][0]:
        pytest.skip(f"{path.name} is not a run record (a benchmark script's own JSON)")
    for record in file_records(path):
        assert record.rows and all(r.median_s > 0 for r in record.rows)


def test_the_store_and_the_file_give_a_run_the_same_time(tmp_path):
    from dataclasses import replace

    record = replace(article_result(), created_utc="2026-01-02T03:04:05+00:00")
    kept = keep(record, db=tmp_path / "r.sqlite", no_store=False, out=tmp_path / "r.json", force=False)
    with Store(tmp_path / "r.sqlite", create=False) as s:
        assert s.newest().created_utc == "2026-01-02T03:04:05+00:00" == kept.document["created_utc"]
        assert s.newest("lesson") is None and s.newest("ladder").id == 1
