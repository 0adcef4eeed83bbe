"""gemmlab report / compare from the command line: files written, nothing overwritten, one-line errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import run_cli
import report_samples as samples


REPO = Path(__file__).resolve().parents[1]
H100_RUN = REPO / "docs" / "results" / "harness-h100-2026-11-21" / "ladder2048.json"




@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "250")  # rich tables unwrapped in captured output
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(tmp_path / "no-ceilings.json"))  # never the user's store


def one_error_line(code: int, err: str, *needles: str) -> None:
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemmlab: error: "), err
    for n in needles:
        assert n in lines[0], (n, lines[0])


def test_report_writes_html_and_markdown_with_plots(capsys, tmp_path):
    out, md = tmp_path / "r.html", tmp_path / "r.md"
    code, stdout, err = run_cli(capsys, "report", str(H100_RUN), "--out", str(out), "--markdown-out", str(md),
                                "--note", "recorded H100 run")
    assert code == 0, err
    assert f"wrote {out} and {md}" in stdout
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "recorded H100 run" in page
    assert "17.676" in page  # naive_uncoalesced's median, ms
    pngs = sorted(p.name for p in (tmp_path / "r_files").iterdir())
    assert pngs == ["ladder-2048x2048x2048.png", "roofline-2048x2048x2048.png", "timing-2048x2048x2048.png"]
    assert "](r_files/ladder-2048x2048x2048.png)" in md.read_text()


def test_report_never_overwrites_without_force(capsys, tmp_path):
    out = tmp_path / "r.html"
    out.write_text("my notes")
    code, _, err = run_cli(capsys, "report", str(H100_RUN), "--out", str(out))
    one_error_line(code, err, f"--out {out}: file exists; pass --force to replace it")
    assert out.read_text() == "my notes"
    md = tmp_path / "r.md"
    md.write_text("keep")
    code, _, err = run_cli(capsys, "report", str(H100_RUN), "--out", str(tmp_path / "new.html"), "--markdown-out", str(md))
    one_error_line(code, err, f"--markdown-out {md}: file exists")
    assert md.read_text() == "keep" and not (tmp_path / "new.html").exists()  # checked before anything is written
    code, _, err = run_cli(capsys, "report", str(H100_RUN), "--out", str(out), "--force", "--no-plots")
    assert code == 0, err
    assert out.read_text().startswith("<!DOCTYPE html>")


def test_a_plot_file_in_the_way_is_not_overwritten(capsys, tmp_path):
    (tmp_path / "r_files").mkdir()
    plot = tmp_path / "r_files" / "ladder-2048x2048x2048.png"
    plot.write_bytes(b"mine")
    code, _, err = run_cli(capsys, "report", str(H100_RUN), "--out", str(tmp_path / "r.html"),
                           "--markdown-out", str(tmp_path / "r.md"))
    one_error_line(code, err, f"plot {plot} exists")
    assert plot.read_bytes() == b"mine" and not (tmp_path / "r.html").exists()


def test_report_from_a_database_picks_the_newest_run_or_the_one_asked_for(capsys, tmp_path):
    from gemmlab.store import Store

    raw = json.loads(H100_RUN.read_text())
    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        s.add_run("ladder", raw["env"], raw["rows"], {"shape": raw["shape"]})
        other = samples.ladder_result()
        s.add_run("ladder", other["env"], other["rows"], {"shape": other["shape"]})
    code, _, err = run_cli(capsys, "report", str(db), "--out", str(tmp_path / "new.html"), "--no-plots")
    assert code == 0, err
    assert "gemm_uncoalesced" in (tmp_path / "new.html").read_text()
    code, _, err = run_cli(capsys, "report", str(db), "--run", "1", "--out", str(tmp_path / "one.html"), "--no-plots")
    assert code == 0, err
    assert "naive_uncoalesced" in (tmp_path / "one.html").read_text()
    code, _, err = run_cli(capsys, "report", str(db), "--run", "7", "--out", str(tmp_path / "x.html"))
    one_error_line(code, err, "run 7: no such run in", "gemmlab runs")
    assert not (tmp_path / "x.html").exists()


@pytest.mark.parametrize(
    "args, needles",
    [
        (["missing.sqlite"], ["missing.sqlite: no such file; expected a gemmlab run"]),
        (["{README}"], ["README.md: not valid JSON"]),
        (["{RUN}", "--run", "2"], ["--run 2:", "is a run JSON file"]),
        (["{RUN}", "--run", "0"], ["--run 0: run ids start at 1"]),
        (["{RUN}", "--diagnosis", "nope.json"], ["nope.json: no such file"]),
        (["{RUN}", "--sweep-run", "3"], ["--sweep-run picks a run in the --sweep database"]),
        (["{RUN}", "--sweep", "{RUN}"], ["is a ladder run, not a sweep"]),
    ],
)
def test_bad_input_is_one_line(capsys, tmp_path, monkeypatch, args, needles):
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("{README}", str(REPO / "README.md")).replace("{RUN}", str(H100_RUN)) for a in args]
    code, _, err = run_cli(capsys, "report", *argv, "--out", str(tmp_path / "r.html"))
    one_error_line(code, err, *needles)
    assert not (tmp_path / "r.html").exists()


def test_report_with_a_sweep_and_diagnoses(capsys, tmp_path):
    sweep = tmp_path / "sweep.json"
    sweep.write_text(json.dumps(samples.sweep_result()))
    run = tmp_path / "run.json"
    run.write_text(json.dumps(samples.ladder_result()))
    out = tmp_path / "r.html"
    code, _, err = run_cli(capsys, "report", str(run), "--sweep", str(sweep), "--diagnosis", str(samples.CAPTURE),
                           "--out", str(out))
    assert code == 0, err
    page = out.read_text()
    assert 'id="plot-sweep-smem-tiled-sweep--m-n-k-2048-2048-2048"' in page
    assert "uncoalesced_global_loads" in page  # the analyzer's verdict on the real capture


def test_compare_prints_both_gpus_and_which_change_helped(capsys, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    da = samples.ladder_result()
    db_ = samples.ladder_result(kernels=(("gemm_uncoalesced", 37.240e-3, 0.004), ("gemm_coalesced", 15.846e-3, 0.004),
                                         ("gemm_tiled16", 17.0e-3, 0.004), ("gemm_tiled16_unroll", 12e-3, 0.004),
                                         ("gemm_blocktile2d", 3e-3, 0.004)), seed=7)
    db_["env"]["gpu"] = "NVIDIA GeForce MX330"
    a.write_text(json.dumps(da))
    b.write_text(json.dumps(db_))
    code, out, err = run_cli(capsys, "compare", str(a), str(b))
    assert code == 0, err
    assert "Time per kernel, M,N,K = 2048,2048,2048" in out and "Which changes helped where" in out
    assert "A = NVIDIA H100 80GB HBM3 (run 1)" in out and "B = NVIDIA GeForce MX330 (run 1)" in out
    code, out, err = run_cli(capsys, "compare", str(a), str(b), "--json")
    assert code == 0, err
    d = json.loads(out)
    steps = d["shapes"][0]["steps"]
    assert [s["kernel"] for s in steps] == ["gemm_coalesced", "gemm_tiled16", "gemm_tiled16_unroll", "gemm_blocktile2d"]
    assert steps[1]["effect_a"] == "slower" and steps[1]["effect_b"] == "slower"  # tiled16 slower than coalesced on both
    assert steps[0]["speedup_b"] == pytest.approx(
        json.loads(b.read_text())["rows"][0]["median_s"] / json.loads(b.read_text())["rows"][1]["median_s"])


def test_compare_refuses_the_same_run_twice_and_unknown_ids(capsys, tmp_path):
    code, _, err = run_cli(capsys, "compare", str(H100_RUN), str(H100_RUN))
    one_error_line(code, err, "RUN_A and RUN_B are the same run")
    code, _, err = run_cli(capsys, "compare", str(H100_RUN), str(tmp_path / "none.sqlite"))
    one_error_line(code, err, "none.sqlite: no such file")
    code, _, err = run_cli(capsys, "compare", str(H100_RUN), str(H100_RUN), "--run-b", "2")
    one_error_line(code, err, "--run-b 2:", "is a run JSON file")


def test_a_profiled_ladder_run_gets_its_recorded_reports_analysed(capsys, tmp_path):
    d = json.loads((REPO / "docs" / "results" / "h100-2026-11-21" / "ladder_2048.json").read_text())
    rep = REPO / "tests" / "fixtures" / "ncu" / "h100" / "ladder_warptiling_2048_full.ncu-rep"
    d["profile"] = {"profiles": [
        {"rung": "warptiling", "bottleneck": "inconclusive", "signal": "60.2% SM", "error": None, "report": str(rep)},
        {"rung": "vectorized", "bottleneck": None, "signal": None, "error": None, "report": str(tmp_path / "gone.ncu-rep")},
    ]}
    run = tmp_path / "run.json"
    run.write_text(json.dumps(d))
    out = tmp_path / "r.html"
    code, _, err = run_cli(capsys, "report", str(run), "--out", str(out), "--no-plots")
    assert code == 0, err
    page = out.read_text()
    card = page[page.index('id="kernel-warptiling"'):]
    card = card[: card.index("</article>")]
    assert "Diagnosed from" in card and "ladder_warptiling_2048_full.ncu-rep" in card
    assert re.search(r"<th>Profiler signal</th>\s*<th>Main bottleneck</th>", page)
    assert "<td>60.2% SM</td><td>inconclusive</td>" in page
    assert "11 of 12 kernels have no diagnosis" in page  # the vanished report is skipped, not fatal


def test_compare_two_runs_of_one_database(capsys, tmp_path):
    from gemmlab.store import Store

    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        for seed in (0, 50):
            d = samples.ladder_result(seed=seed)
            s.add_run("ladder", d["env"], d["rows"], {"shape": d["shape"]})
    code, out, err = run_cli(capsys, "compare", str(db), str(db), "--run-a", "1", "--run-b", "2", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["a"], d["b"]) == ("NVIDIA H100 80GB HBM3 (run 1)", "NVIDIA H100 80GB HBM3 (run 2)")
    code, _, err = run_cli(capsys, "compare", str(db), str(db))
    one_error_line(code, err, "RUN_A and RUN_B are the same run", "run 2")
