"""The SQLite results store: append-only, two runs never overwrite each other, survives reopening."""

from __future__ import annotations

import json
import sqlite3

import pytest
from fakes_bench import article_result, bad_check, record_dict

from gemmlab.errors import InputError
from gemmlab.store import SCHEMA_VERSION, Store, default_path


def add(store: Store, result) -> int:
    from gemmlab.workflows.kinds import ROW_EXTRAS

    return store.add_record(result, ROW_EXTRAS[result.kind](result))


def test_two_runs_are_both_kept_and_survive_reopening(tmp_path):
    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        first = add(s, article_result())
        second = add(s, article_result(checks={"bad": bad_check()}))
    assert (first, second) == (1, 2)
    with Store(db) as s:
        runs = s.list_runs()
        assert [r.id for r in runs] == [2, 1]  # newest first
        assert runs[1].kernels == "bad,coalesced,tiled16,tiled16_unroll,cublas"
        assert runs[1].n_results == 5 and runs[1].gpu == "Fake GPU" and runs[1].kind == "ladder"
        one, two = s.load_run(1), s.load_run(2)
    assert one["rows"][0]["correct"] is True
    assert two["rows"][0]["correct"] is False
    assert two["rows"][0]["check"]["reason"] == "3 elements are NaN or inf, first at (0, 1)"


def test_loaded_run_keeps_raw_samples_and_config_exactly(tmp_path):
    res = article_result()
    want = record_dict(res)
    with Store(tmp_path / "r.sqlite") as s:
        rid = add(s, res)
        got = s.load_run(rid)
    assert got["run_id"] == rid and got["command"] == "ladder"
    assert got["shape"] == {"M": 2048, "N": 2048, "K": 2048}
    assert got["env"] == want["env"]
    for w, g in zip(want["rows"], got["rows"]):
        assert g["samples_s"] == w["samples_s"]  # exact floats, not rounded
        assert g["median_s"] == w["median_s"] and g["spec"] == w["spec"]
        assert g["clocks"] == w["clocks"] and g["info"] == w["info"]
        assert g["speedup_vs_previous"] == w["speedup_vs_previous"]
    assert json.loads(Store(tmp_path / "r.sqlite").export_json(rid))["rows"][3]["kernel"] == "tiled16_unroll"


def test_store_refuses_update_and_delete(tmp_path):
    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        add(s, article_result())
    con = sqlite3.connect(db)
    for sql in (
        "UPDATE runs SET command = 'x'",
        "DELETE FROM runs",
        "UPDATE results SET median_s = 0",
        "DELETE FROM results",
    ):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            con.execute(sql)
    assert con.execute("SELECT count(*) FROM results").fetchone()[0] == 5
    con.close()


def test_summary_columns_match_the_samples(tmp_path):
    res = article_result()
    with Store(tmp_path / "r.sqlite") as s:
        add(s, res)
    con = sqlite3.connect(tmp_path / "r.sqlite")
    rows = con.execute("SELECT kernel, median_s, n_samples, correct, rel_err, M FROM results ORDER BY seq").fetchall()
    con.close()
    assert [r[0] for r in rows] == ["bad", "coalesced", "tiled16", "tiled16_unroll", "cublas"]
    assert rows[3][1] == res.rows[3].measurement.median and rows[3][2] == 10  # 5 samples in each of 2 rounds
    assert rows[0][3:] == (1, 1e-7, 2048)


def test_schema_version_is_recorded_and_a_newer_one_refused(tmp_path):
    db = tmp_path / "r.sqlite"
    Store(db).close()
    con = sqlite3.connect(db)
    assert con.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    con.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION + 1,))
    con.commit()
    con.close()
    with pytest.raises(InputError, match=f"schema version {SCHEMA_VERSION + 1} is newer"):
        Store(db)


def test_bad_paths_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        Store(tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_text("this is not a database\n" * 100)
    with pytest.raises(InputError, match="not a gemmlab results database"):
        Store(junk)
    assert junk.read_text().startswith("this is not a database")  # left as it was
    with pytest.raises(InputError, match="no such results database"):
        Store(tmp_path / "absent.sqlite", create=False)
    with pytest.raises(InputError, match="run 9: no such run"):
        with Store(tmp_path / "new.sqlite") as s:
            s.load_run(9)


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.delenv("GEMMLAB_DB", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_path() == tmp_path / ".local" / "share" / "gemmlab" / "runs.sqlite"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "gemmlab" / "runs.sqlite"
    monkeypatch.setenv("GEMMLAB_DB", str(tmp_path / "elsewhere.sqlite"))
    assert default_path() == tmp_path / "elsewhere.sqlite"
    with Store() as s:  # creates the file where the variable says
        assert s.path == tmp_path / "elsewhere.sqlite"
    assert (tmp_path / "elsewhere.sqlite").exists()
