"""The one results model (``bench.results``: rows, run records, the loader of every record version) and
where runs and a report's attachments come from (``workflows.runs``, ``workflows.report_inputs``):
harness run JSON, the results store, analyzer output, ceilings."""

from __future__ import annotations

import json
import math
import os
import sqlite3
from pathlib import Path

import pytest
import report_samples as samples

from gemmlab.bench.results import Row, RunRecord
from gemmlab.errors import InputError
from gemmlab.report.model import kernel_base_name
from gemmlab.workflows import report_inputs, runs

REPO = Path(__file__).resolve().parents[1]
H100_RUN = REPO / "docs" / "results" / "harness-h100-2026-11-21" / "ladder2048.json"


# --- rows ----------------------------------------------------------------------------------------
def test_median_and_gflops_come_from_the_raw_samples():
    r = samples.kernel_row("k", 1000, 1000, 1000, samples_s=(3e-3, 1e-3, 2e-3, 9e-3))
    assert r.median_s == pytest.approx(2.5e-3)  # even count: mean of the middle two
    assert r.gflops == pytest.approx(2e9 / 2.5e-3 / 1e9)  # 2·M·N·K / t
    assert r.iqr_s == pytest.approx(np_iqr([3e-3, 1e-3, 2e-3, 9e-3]))


def np_iqr(x):
    import numpy as np

    return float(np.quantile(x, 0.75) - np.quantile(x, 0.25))


def test_a_single_sample_is_kept_unrounded():
    r = samples.kernel_row("k", 3, 5, 7, median_s=1.23456789e-3)
    assert r.median_s == 1.23456789e-3
    assert r.samples_s == (1.23456789e-3,) and r.iqr_s == 0.0


def _row_dict(**over):
    d = {"kernel": "k", "spec": {"kernel": "k", "M": 16, "N": 16, "K": 16}, "samples_s": [1e-3, 1.1e-3]}
    for k, v in over.items():
        if k in ("M", "N", "K", "beta"):
            d["spec"][k] = v
        elif v is None:
            d.pop(k, None)
        else:
            d[k] = v
    return d


@pytest.mark.parametrize(
    "over, message",
    [
        (dict(samples_s=[1e-3, float("nan")]), "samples_s must be finite positive seconds"),
        (dict(samples_s=[1e-3, -1e-3]), "samples_s must be finite positive seconds"),
        (dict(samples_s=None), "has no raw samples"),
        (dict(samples_s=[]), "has no raw samples"),
        (dict(info="yes"), "info must be an object"),
        (dict(timing=[1, 2]), "timing must be an object"),
        (dict(beta=float("inf")), "beta must be a finite number"),
    ],
)
def test_bad_results_are_refused_with_the_field_named(over, message):
    with pytest.raises(InputError, match=message):
        Row.from_dict(_row_dict(**over))


def test_shape_must_be_positive_integers():
    with pytest.raises(InputError, match="N must be a positive integer.*got 0"):
        Row.from_dict(_row_dict(N=0))
    with pytest.raises(InputError, match="M must be a positive integer"):
        Row.from_dict(_row_dict(M=True))


def test_a_run_refuses_the_same_kernel_twice_at_one_shape():
    r = samples.kernel_row("k", 8, 8, 8, median_s=1e-3)
    with pytest.raises(InputError, match="appears twice"):
        samples.view("gpu", (r, r))
    with pytest.raises(InputError, match="has no kernel results"):
        samples.view("gpu", ())


def test_speedups_are_previous_median_over_this_median():
    rs = [samples.kernel_row(n, 8, 8, 8, median_s=t) for n, t in (("a", 4e-3), ("b", 1e-3), ("c", 2e-3))]
    record = RunRecord("ladder", rs)
    assert [record.speedup_vs_previous(r) for r in rs] == [None, 4.0, 0.5]


@pytest.mark.parametrize(
    "name, base",
    [
        ("gemmlab_smem_tiled", "gemmlab_smem_tiled"),
        ("void gemm_tiled<16>(float const*, float const*, float*, int, int, int)", "gemm_tiled"),
        ("gemm_coalesced(const float *, const float *, float *, int, int, int)", "gemm_coalesced"),
    ],
)
def test_kernel_base_name(name, base):
    assert kernel_base_name(name) == base


# --- harness run JSON --------------------------------------------------------------------------
def test_the_recorded_h100_run_reads_with_every_number_kept():
    view = samples.view_of_file(H100_RUN)
    raw = json.loads(H100_RUN.read_text())
    assert view.gpu == "NVIDIA H100 80GB HBM3"
    assert view.run_id == "1" and view.kind == "ladder"
    assert view.created_utc == "2026-11-21T19:57:02+00:00"
    assert view.command.startswith("gemmlab ladder --shape 2048,2048,2048")
    assert [r.name for r in view.results] == [r["kernel"] for r in raw["rows"]]
    for r, row in zip(view.results, raw["rows"]):
        assert r.median_s == row["median_s"]  # the same median, from the same raw samples, unrounded
        assert r.samples_s == tuple(row["samples_s"])
        assert r.rel_err == row["check"]["rel_err"]
        assert view.pct_of_reference(r) == row["pct_of_cublas"]
    ladder = view.ladder((2048, 2048, 2048))
    # smem_tiled and smem_tiled_unroll share rung number 3; file order keeps them apart
    assert [r.name for r in ladder][2:4] == ["smem_tiled", "smem_tiled_unroll"]
    ref = view.reference((2048, 2048, 2048))
    assert ref.name == "cublas" and ref.reference
    assert view.env["fp32_peak_tflops"] == pytest.approx(66.90816)


def test_a_sweep_run_becomes_sweep_points_grouped_by_family():
    view = samples.view_of(samples.sweep_result(), "sweep.json")
    assert view.kind == "sweep"
    assert {p.kernel for p in view.sweep} == {"smem_tiled"}
    assert len(view.sweep) == 6  # the cuBLAS reference is not a sweep point
    assert {(p.params["BX"], p.params["UNROLL"]) for p in view.sweep} == set(samples.SWEEP_REL)


def test_a_sweep_variant_that_failed_its_check_is_not_a_point():
    d = samples.sweep_result()
    d["rows"][0]["correct"] = False
    view = samples.view_of(d, "sweep.json")
    assert len(view.sweep) == 5


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "no 'rows' list"),
        ('{"rows": [], "env": {}}', "the run has no result rows"),
        ('{"rows": [{"kernel": "k"}], "env": {}}', "result row 0: lacks its spec"),
    ],
)
def test_bad_run_files_are_one_line_errors(tmp_path, text, message):
    p = tmp_path / "run.json"
    p.write_text(text)
    with pytest.raises(InputError, match=message) as e:
        runs.load(p)
    assert str(p) in e.value.message and "\n" not in e.value.message


def test_a_run_id_for_a_json_file_is_refused(tmp_path):
    p = tmp_path / "run.json"
    p.write_text(json.dumps(samples.ladder_result()))
    with pytest.raises(InputError, match="--run 3: .* is a run JSON file"):
        runs.load(p, 3)


# --- the results store -------------------------------------------------------------------------
def _db_with_runs(tmp_path) -> Path:
    from gemmlab.store import Store

    raw = json.loads(H100_RUN.read_text())
    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        s.add_run("ladder", raw["env"], raw["rows"], {k: raw[k] for k in ("shape", "peak", "options")})
        other = samples.ladder_result()
        s.add_run("ladder", other["env"], other["rows"], {"shape": other["shape"]})
    return db


def test_from_store_reads_the_newest_run_or_the_one_asked_for(tmp_path):
    db = _db_with_runs(tmp_path)
    newest = samples.view_of_file(db)
    assert newest.run_id == "2" and newest.results[0].name == "gemm_uncoalesced"
    first = samples.view_of_file(db, 1)
    raw = json.loads(H100_RUN.read_text())
    assert first.run_id == "1" and first.source == f"{db} run 1"
    assert [r.median_s for r in first.results] == [r["median_s"] for r in raw["rows"]]
    assert first.command.startswith("gemmlab ladder --shape 2048,2048,2048")


def test_an_unknown_run_id_names_the_database(tmp_path):
    db = _db_with_runs(tmp_path)
    with pytest.raises(InputError, match=r"run 9: no such run in .*runs.sqlite"):
        runs.load(db, 9)


def test_an_empty_database_says_so(tmp_path):
    from gemmlab.store import Store

    db = tmp_path / "empty.sqlite"
    Store(db).close()
    with pytest.raises(InputError, match="holds no runs yet"):
        runs.load(db)


def test_a_foreign_sqlite_file_is_refused_and_left_untouched(tmp_path):
    db = tmp_path / "other.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("CREATE TABLE notes (x TEXT)")
    before = db.read_bytes()
    with pytest.raises(InputError, match="without gemmlab's runs/results tables"):
        runs.load(db)
    assert db.read_bytes() == before
    with sqlite3.connect(db) as c:
        assert [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["notes"]


def test_a_missing_file_and_a_directory_are_named(tmp_path):
    with pytest.raises(InputError, match="no such file; expected a gemmlab run"):
        runs.load(tmp_path / "nope.sqlite")
    with pytest.raises(InputError, match="is a directory"):
        runs.load(tmp_path)


# --- diagnoses ---------------------------------------------------------------------------------
def test_an_ncu_export_is_analysed_and_matched_to_the_run_by_kernel_name():
    view = samples.run(with_sweep=False)
    kernels = view.diagnoses["kernels"]
    assert [k["name"] for k in kernels] == [n for n, _, _ in samples.KERNELS]
    d = view.diagnosis_for(view.results[0])
    assert d["name"] == "gemm_uncoalesced"
    assert d["primary"]["category"] == "uncoalesced_global_loads"  # the analyzer's verdict on the real capture
    assert view.diagnosis_for(view.results[-1]) is None  # cuBLAS was not in the capture


def test_analyze_json_documents_are_merged(tmp_path):
    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.analysis.evidence import report_dict
    from gemmlab.profile.load import load

    doc = report_dict("capture.csv", diagnose_all(load(samples.CAPTURE)))
    p = tmp_path / "a.json"
    p.write_text(json.dumps(doc))
    merged = report_inputs.load_diagnoses([p, samples.CAPTURE])
    assert len(merged["kernels"]) == 10
    assert merged["source"] == f"capture.csv; {samples.CAPTURE}"


def test_a_diagnosis_matches_the_function_a_rung_launched():
    from dataclasses import replace

    r = samples.kernel_row("smem_tiled", 8, 8, 8, median_s=1e-3, info={"function": "gemmlab_smem_tiled"})
    view = replace(samples.view("gpu", (r,)), diagnoses={"kernels": [{"name": "gemmlab_smem_tiled", "primary": {}}]})
    assert view.diagnosis_for(r)["name"] == "gemmlab_smem_tiled"


def test_an_autotuned_rung_matches_the_candidate_it_launched_and_no_other():
    from dataclasses import replace

    base = samples.kernel_row("autotuned", 8, 8, 8, median_s=1e-3, info={"function": "gemmlab_autotuned"})
    r = replace(base, launched={"rung": "autotuned_64x128x32_w32x64n2_s2_b3"})
    same = {"name": "gemmlab_autotuned_64x128x32_w32x64n2_s2_b3"}
    other = {"name": "gemmlab_autotuned_64x128x16_w32x64n2_s3_b3"}  # the real capture's candidate
    v = samples.view("gpu", (r,))
    assert replace(v, diagnoses={"kernels": [other, same]}).diagnosis_for(r) is same
    assert replace(v, diagnoses={"kernels": [other]}).diagnosis_for(r) is None


def test_bad_diagnosis_files_are_one_line_errors(tmp_path):
    p = tmp_path / "d.json"
    p.write_text('{"kernel": []}')
    with pytest.raises(InputError, match="JSON without a 'kernels' list"):
        report_inputs.load_diagnoses([p])
    with pytest.raises(InputError, match="no such file"):
        report_inputs.load_diagnoses([tmp_path / "missing.json"])


# --- ceilings ----------------------------------------------------------------------------------
def test_ceilings_from_the_recorded_measurement_file():
    path = REPO / "docs" / "results" / "h100-2026-11-21" / "ceilings.json"
    c = report_inputs.ceilings_from_file(path, "NVIDIA H100 80GB HBM3")
    raw = json.loads(path.read_text())["measurement"]
    assert c.source == "measured" and c.fp32_flops == raw["fp32_flops"] and c.dram_bytes_per_s == raw["copy_bytes_per_s"]
    with pytest.raises(InputError, match="ceilings measured on NVIDIA H100 80GB HBM3, but the run is from NVIDIA RTX A4000"):
        report_inputs.ceilings_from_file(path, "NVIDIA RTX A4000")
    with pytest.raises(InputError, match="not a gemmlab ceilings store"):
        report_inputs.ceilings_from_file(H100_RUN, "NVIDIA H100 80GB HBM3")


def test_ceilings_are_measured_when_stored_else_spec_else_none(tmp_path, monkeypatch):
    from gemmlab.bench.ceilings import CeilingMeasurement, save_measurement

    store = tmp_path / "ceilings.json"
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(store))
    spec = report_inputs.ceilings_for("NVIDIA H100 80GB HBM3")
    assert spec.source == "spec" and spec.dram_bytes_per_s == 3350e9
    assert math.isclose(spec.fp32_flops, 2 * 128 * 132 * 1980e6)
    assert report_inputs.ceilings_for("Some Unknown GPU") is None
    save_measurement(CeilingMeasurement("NVIDIA H100 80GB HBM3", 51.6e12, 8192, (1.0,), 3.0e12, 2**30, (1.0,),
                                        "2026-11-21T10:00:00Z"), store)
    measured = report_inputs.ceilings_for("NVIDIA H100 80GB HBM3")
    assert measured.source == "measured" and measured.fp32_flops == 51.6e12 and measured.dram_bytes_per_s == 3.0e12
    assert os.path.exists(store)


@pytest.mark.parametrize("field", ["shape", "peak", "options"])
def test_a_hand_edited_run_with_a_malformed_field_is_one_line(tmp_path, capsys, field):
    import json

    from conftest import run_cli

    d = json.loads(H100_RUN.read_text())
    d[field] = "oops"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    code, _, err = run_cli(capsys, "report", str(bad), "--out", str(tmp_path / "r.html"))
    assert code == 2 and f"'{field}' must be an object, got str" in err and "Traceback" not in err


def test_a_peak_without_its_formula_still_prints():
    import json

    from gemmlab.bench.results import load_record
    from gemmlab.report.tables import caption

    d = json.loads(H100_RUN.read_text())
    d["peak"] = {"flops": d["peak"]["flops"]}  # a hand-edited file: the formula's terms are gone
    assert "FP32 peak 66.9 TFLOP/s = ? SMs x ? lanes x 2 x ? MHz" in caption(load_record(d, "edited"))
