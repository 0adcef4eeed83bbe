"""Lesson runs stored, listed, compared and reported, from fake runs (SAMPLE DATA, not measured)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import run_cli
from lesson_samples import as_dict, fake_run
from test_report_html import Page

from gemmlab.report import lesson_html
from gemmlab.report import lessons as L
from gemmlab.store import Store

TILING_H100 = {("naive", 1024): 1.00e-3, ("tiled", 1024): 1.15e-3, ("cublas", 1024): 0.06e-3,
               ("naive", 2048): 8.0e-3, ("tiled", 2048): 9.0e-3, ("cublas", 2048): 0.4e-3}
TILING_H200 = {k: v * 0.95 for k, v in TILING_H100.items()}
ATOMICS = {("atomic_per_match", 0.1): 0.30e-3, ("block_reduce", 0.1): 0.10e-3,
           ("atomic_per_match", 1.0): 0.9e-3, ("block_reduce", 1.0): 0.1e-3}


def _store(db, *runs):
    from gemmlab.lessons.record import extras

    with Store(db) as s:
        return [s.add_record(r, extras(r)) for r in runs]


def test_store_round_trip_keeps_the_lesson_run(tmp_path):
    record = fake_run("tiling", "NVIDIA H100 80GB HBM3", TILING_H100)
    run = as_dict(record)
    db = tmp_path / "runs.sqlite"
    (rid,) = _store(db, record)
    back = Store(db, create=False).load_run(rid)
    assert back["command"] == "lesson" and back["lesson"] == "tiling"
    assert [r["kernel"] for r in back["rows"]] == [r["kernel"] for r in run["rows"]]
    assert [r["samples_s"] for r in back["rows"]] == [r["samples_s"] for r in run["rows"]]
    assert back["rows"][1]["point"] == {"size": 1024, "param": "size", "value": 1024}
    assert back["headline"]["sentence"] == run["headline"]["sentence"]
    with sqlite3.connect(db) as con, pytest.raises(sqlite3.DatabaseError, match="append-only"):
        con.execute("UPDATE results SET median_s = 1")


def test_run_tables_and_the_headline(tmp_path):
    run = fake_run("tiling", "NVIDIA H100 80GB HBM3", TILING_H100)
    (title, rows), _ = L.run_tables(run)
    assert title == "tiling at size=1024"
    assert [r[0] for r in rows] == ["naive", "tiled", "cublas"]
    assert rows[0][3] == "baseline" and rows[1][3] == "0.87x" and "GFLOP/s" in rows[1][4]
    assert "hurt (0.87x at size=1024): as on the article's RTX A4000 (0.90x), unlike its GeForce MX330" in L.sentence(run)
    assert L.verdict_rows(run)[0][:2] == ["naive -> tiled", "size=1024"]


def test_cli_runs_shows_a_stored_lesson(tmp_path, capsys):
    db = tmp_path / "runs.sqlite"
    (rid,) = _store(db, fake_run("atomics", "NVIDIA H200", ATOMICS))
    code, out, err = run_cli(capsys, "runs", str(rid), "--db", str(db))
    assert code == 0, err
    assert "atomic_per_match" in out and "Naive atomicAdd()" in out and "12.271" in out


def test_compare_two_gpus_side_by_side_with_the_article(tmp_path, capsys):
    a, b = tmp_path / "h100.sqlite", tmp_path / "h200.sqlite"
    _store(a, fake_run("tiling", "NVIDIA H100 80GB HBM3", TILING_H100), fake_run("atomics", "NVIDIA H100 80GB HBM3", ATOMICS))
    _store(b, fake_run("tiling", "NVIDIA H200", TILING_H200, seed=1), fake_run("atomics", "NVIDIA H200", ATOMICS, seed=2))
    code, out, err = run_cli(capsys, "compare", str(a), str(b), "--lesson", "all", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert [c["lesson"] for c in res] == ["tiling", "atomics"]
    steps = res[0]["steps"]
    assert steps[0]["change"] == "naive -> tiled" and steps[0]["a"].startswith("slower")
    assert steps[0]["article"] == "GeForce MX330 2.35x (faster), RTX A4000 0.90x (slower)"
    assert set(res[0]["sentences"]) == {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}
    code, out, err = run_cli(capsys, "compare", str(a), str(b), "--lesson", "atomics")
    assert code == 0, err
    assert "Did it help, where?" in out and "Opt (SMEM + Reduction)" in out
    # the newest run of a database is a lesson run: picked without --lesson
    code, out, err = run_cli(capsys, "compare", str(a), str(b), "--json")
    assert code == 0 and json.loads(out)[0]["lesson"] == "atomics"


def test_compare_refuses_different_lessons_and_mixed_runs(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(as_dict(fake_run("tiling", "GPU A", TILING_H100))))
    b.write_text(json.dumps(as_dict(fake_run("atomics", "GPU B", ATOMICS))))
    code, out, err = run_cli(capsys, "compare", str(a), str(b))
    assert code == 2 and "share no lesson" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli(capsys, "compare", str(a), str(b), "--lesson", "fusoin")
    assert code == 2 and "did you mean fusion" in err


def test_html_report_one_and_two_gpus(tmp_path, capsys):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.json"
    _store(a, fake_run("tiling", "NVIDIA H100 80GB HBM3", TILING_H100), fake_run("atomics", "NVIDIA H100 80GB HBM3", ATOMICS))
    b.write_text(json.dumps({"runs": [as_dict(fake_run("tiling", "NVIDIA H200", TILING_H200, seed=3))]}))
    out = tmp_path / "lessons.html"
    code, _, err = run_cli(capsys, "report", str(a), "--lesson", "all", "--vs", str(b), "--out", str(out),
                           "--note", "SAMPLE DATA")
    assert code == 0, err
    page = Page(out.read_text())
    text = " ".join(page.text)
    assert "gemmlab lessons: NVIDIA H100 80GB HBM3 vs NVIDIA H200" in text
    heads = [t[0] for t in page.tables]
    assert ["Method", "NVIDIA GeForce MX330 (ms)", "NVIDIA RTX A4000 (ms)"] in heads
    assert list(L.COMPARE_COLUMNS) in heads and list(L.STEP_COLUMNS) in heads  # tiling: both GPUs
    assert list(L.RUN_COLUMNS) in heads  # atomics: one GPU only
    art = next(t for t in page.tables if t[0][0] == "Method" and t[1][0] == "Naive")
    assert art[1:] == [["Naive", "37.240 ms", "1.861 ms"], ["Tiling & SMEM", "15.846 ms", "2.077 ms"], ["cuBLAS", "2.423 ms", "0.206 ms"]]
    assert "unlike its GeForce MX330" in text and "SAMPLE DATA" in text
    assert not any(tag in ("script", "link") for tag, _ in page.tags)


def test_html_escapes_run_text():
    run = fake_run("fusion", "<b>GPU</b>", {("two_kernels", 4096): 4e-6, ("fused", 4096): 2e-6})
    page = lesson_html.render([run])
    assert "<b>GPU</b>" not in page and "&lt;b&gt;GPU&lt;/b&gt;" in page
    assert "the article&#x27;s claim transfers" in page


def test_compare_reads_each_run_once(capsys, tmp_path, monkeypatch):
    """compare picks what to compare from the runs it read, instead of reading each side twice."""
    from gemmlab.store import Store

    db_a, db_b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    _store(db_a, fake_run("tiling", "NVIDIA H100 80GB HBM3", TILING_H100))
    _store(db_b, fake_run("tiling", "NVIDIA H200", TILING_H100, seed=3))
    loads = []
    real = Store.load_record
    monkeypatch.setattr(Store, "load_record", lambda self, i: loads.append(i) or real(self, i))
    code, out, err = run_cli(capsys, "compare", str(db_a), str(db_b))
    assert code == 0, err and "Did it help, where?" in out
    assert len(loads) == 2
