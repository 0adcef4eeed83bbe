"""The BF16 tensor-core ladder in `gemmlab report` and `gemmlab compare`, on the recorded H100 runs.

docs/results/bf16-hopper-h100-2026-11-23/ holds the BF16 ladder measured on an H100 (rungs 1-7,
cuBLAS BF16 at its best); docs/results/h100-2026-11-21/ the SGEMM ladder on the same GPU.
"""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
import report_samples as samples
from conftest import run_cli

from gemmlab.bench.results import load_record
from gemmlab.errors import InputError
from gemmlab.report import content, html, markdown
from gemmlab.report.model import RunView
from gemmlab.workflows import report_inputs, runs

REPO = Path(__file__).resolve().parents[1]
BF16 = REPO / "docs" / "results" / "bf16-hopper-h100-2026-11-23"
BF16_4096, BF16_8192 = BF16 / "ladder_bf16_4096.json", BF16 / "ladder_bf16_8192.json"
BF16_EARLIER = REPO / "docs" / "results" / "bf16-h100-2026-11-23" / "ladder_bf16_4096.json"  # rungs 1-2, same GPU
FP32_4096 = REPO / "docs" / "results" / "h100-2026-11-21" / "ladder_4096.json"


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "250")  # rich tables unwrapped in captured output
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(tmp_path / "no-ceilings.json"))  # never the user's store


def one_error_line(code: int, err: str, *needles: str) -> str:
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemmlab: error: "), err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def cells(text: str) -> list[list[str]]:
    """Each <tr>'s cell texts, tags stripped, entities decoded."""
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", text, re.S):
        rows.append([unescape(re.sub(r"<[^>]+>", "", c)).strip()
                     for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, re.S)])
    return rows


def store_with(tmp_path: Path, *runs: Path, gpu: str | None = None) -> Path:
    """A results database holding these run JSONs, stored as `gemmlab ladder` stores them."""
    from gemmlab.store import Store

    db = tmp_path / "runs.sqlite"
    with Store(db) as s:
        for p in runs:
            d = json.loads(p.read_text())
            if gpu is not None and p == runs[-1]:
                d["env"]["gpu"] = gpu
            meta = {k: d[k] for k in ("shape", "peak", "options", "profile", "dtype", "skipped") if k in d}
            s.add_run(d["command"], d["env"], d["rows"], meta)
    return db


# --- the run as the report reads it ------------------------------------------------------------
def test_a_bf16_run_reads_as_the_tensor_core_ladder():
    view = samples.view_of_file(BF16_4096)
    assert (view.dtype, view.out_dtype) == ("bf16", "bf16")
    assert view.ladder_kind.title == "BF16 tensor-core ladder"
    assert view.peak["flops"] == pytest.approx(1070.53056e12)
    assert "fp32_peak_tflops" not in view.env  # the BF16 peak is not shown as an FP32 one
    persistent = next(r for r in view.results if r.name == "persistent_bf16")
    assert view.pct_of_peak(persistent) == pytest.approx(76.30093896152484)
    ref = view.reference(persistent.shape)
    assert ref.launched["winner"] == "cublasGemmEx CUBLAS_GEMM_DEFAULT"
    assert len(ref.launched["candidates"]) == 10
    assert samples.view_of_file(FP32_4096).dtype == "fp32"


def test_rows_of_two_dtypes_in_one_run_are_refused(tmp_path):
    d = json.loads(BF16_4096.read_text())
    d["rows"][0]["spec"]["dtype"] = "float32"
    p = tmp_path / "mixed.json"
    p.write_text(json.dumps(d))
    with pytest.raises(InputError, match=r"mixed.json: its rows mix types bf16->bf16, fp32->fp32; a run measures one ladder"):
        samples.view_of_file(p)


# --- the report ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bf16_report():
    view = report_inputs.attach(samples.view_of_file(BF16_4096), ceilings=report_inputs.ceilings_for("NVIDIA H100 80GB HBM3"))
    return content.build(view)


def test_the_html_report_names_the_ladder_its_peak_and_its_reference(bf16_report):
    page = html.render(bf16_report, generated_utc="2026-11-24 00:00:00 UTC")
    assert "<h2>BF16 tensor-core ladder</h2>" in page
    assert "<h3>BF16 tensor-core ladder at M,N,K = 4096,4096,4096</h3>" in page
    assert "SGEMM" not in page and "FP32 peak" not in page
    assert "<dt>Dense BF16 tensor peak (TFLOP/s)</dt><dd>1,070.5 = 132 SMs x 4096 FLOP/clk x 1980 MHz" in page
    assert ("cuBLAS row: cuBLAS BF16 at its best: cublasGemmEx CUBLAS_GEMM_DEFAULT (fastest of 10 timed candidates"
            in page)
    rows = cells(page)
    head = next(r for r in rows if r and r[0] == "Version")
    assert head == ["Version", "Time (ms)", "IQR (ms)", "TFLOP/s", "Speedup vs previous", "% of cuBLAS",
                    "% of BF16 peak", "Correct"]
    by = {r[0]: r for r in rows if len(r) == len(head)}
    # the numbers the H100 run recorded (summary.txt): 727 TFLOP/s, 96.4% of cuBLAS, 76.3% of peak
    assert by["persistent_bf16"][3:7] == ["727.1", "1.15x", "96.4%", "76.3%"]
    assert by["wmma_bf16"][4] == "baseline"
    assert by["cublas"][3:7] == ["754.6", "reference", "100.0%", "72.7%"]
    # the best-of record: every candidate, the winner marked
    candidates = [r for r in rows if r and r[0].startswith(("cublasGemmEx", "cublasLt heuristic", "torch.matmul"))]
    assert len(candidates) == 10
    assert candidates[0][0] == "cublasGemmEx CUBLAS_GEMM_DEFAULT" and candidates[0][-1] == "winner"
    assert 'id="kernel-bf16-persistent-bf16"' in page and 'href="#kernel-bf16-persistent-bf16"' in page


def test_the_plots_are_the_bf16_ladders_own(bf16_report):
    keys = [p.key for p in bf16_report.plots]
    assert keys == ["ladder-bf16-4096x4096x4096", "timing-bf16-4096x4096x4096", "roofline-bf16-4096x4096x4096"]
    ladder_plot, _, roof = bf16_report.plots
    assert "TFLOP/s" in ladder_plot.title and "cuBLAS BF16 best (cublasGemmEx CUBLAS_GEMM_DEFAULT)" in ladder_plot.caption
    assert roof.title.startswith("Dense BF16 tensor roofline")
    assert "dense BF16 tensor peak, 1,070.5 TFLOP/s at 1980 MHz" in roof.caption and "2-byte A and B" in roof.caption


def test_the_bf16_figures_draw_tflops_and_the_bf16_roof():
    from gemmlab.analysis.roofline import gemm_counts, place, point_from_gemm
    from gemmlab.report import plots

    view = report_inputs.attach(samples.view_of_file(BF16_4096), ceilings=report_inputs.ceilings_for("NVIDIA H100 80GB HBM3"))
    shape = view.shapes[0]
    kernels, ref = view.ladder(shape), view.reference(shape)
    fig = plots.ladder_figure(kernels, ref, [view.pct_of_reference(r) for r in kernels], "t", unit="TFLOP/s",
                              reference_label="cuBLAS BF16 best")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "TFLOP/s (median time)"
    assert [round(p.get_height(), 1) for p in ax.patches][-1] == 727.1
    assert any(t.get_text().startswith("cuBLAS BF16 best: 754.6 TFLOP/s") for t in ax.texts)
    plots.plt.close(fig)
    assert gemm_counts(4096, 4096, 4096, elem_bytes=2, out_bytes=2)[1] == 2.0 * 3 * 4096 * 4096
    assert gemm_counts(8, 8, 8, elem_bytes=2, out_bytes=4)[1] == 2.0 * 128 + 4.0 * 64
    roof = view.ceilings.with_compute_roof(view.peak["flops"], "dense BF16 tensor", "the run's peak")
    assert roof.compute == "dense BF16 tensor" and roof.dram_bytes_per_s == view.ceilings.dram_bytes_per_s
    pl = place(point_from_gemm(ref.name, *shape, ref.median_s, elem_bytes=2), roof)
    assert pl.bound == "compute" and pl.pct_of_attainable == pytest.approx(100 * ref.gflops * 1e9 / roof.fp32_flops)
    fig = plots.roofline_figure([pl], roof)
    assert any(t.get_text().startswith("dense BF16 tensor 1,070.5 TFLOP/s") for t in fig.axes[0].texts)
    plots.plt.close(fig)


def test_the_markdown_report_carries_the_same_bf16_section():
    view = samples.view_of_file(BF16_8192)
    text, files = markdown.render(content.build(view, with_plots=False), None)
    assert files == {}
    assert "## BF16 tensor-core ladder\n" in text and "### BF16 tensor-core ladder at M,N,K = 8192,8192,8192" in text
    assert "| Dense BF16 tensor peak (TFLOP/s) | 1,070.5 = 132 SMs x 4096 FLOP/clk x 1980 MHz" in text
    assert "| Version | Time (ms) | IQR (ms) | TFLOP/s | Speedup vs previous | % of cuBLAS | % of BF16 peak |" in text
    assert "cuBLAS row: cuBLAS BF16 at its best: cublasGemmEx CUBLAS\\_GEMM\\_DEFAULT" in text
    assert "FP32 peak" not in text and "GFLOP/s" not in text
    assert "cuBLAS candidates timed (10); the fastest is the reference:" in text


# --- a database with both ladders --------------------------------------------------------------
def test_a_store_with_both_ladders_reports_two_sections(capsys, tmp_path):
    db = store_with(tmp_path, FP32_4096, BF16_4096)  # run 1: SGEMM, run 2: BF16 (the newest)
    out, md = tmp_path / "r.html", tmp_path / "r.md"
    code, stdout, err = run_cli(capsys, "report", str(db), "--out", str(out), "--markdown-out", str(md), "--no-plots")
    assert code == 0, err
    assert "runs 1, 2: the newest ladder run of each ladder on NVIDIA H100 80GB HBM3; pick others with --run" in stdout
    page = out.read_text()
    assert page.index('<section id="ladder" class="run"><h2>SGEMM ladder</h2>') < page.index(
        '<section id="ladder-bf16" class="run"><h2>BF16 tensor-core ladder</h2>')
    tables = re.findall(r'<table class="ladder">(.*?)</table>', page, re.S)
    assert len(tables) == 2
    sgemm, tc = (cells(t) for t in tables)
    assert sgemm[0][3] == "GFLOP/s" and tc[0][3] == "TFLOP/s"
    assert {r[0] for r in sgemm[1:]} & {r[0] for r in tc[1:]} == {"cublas"}  # no rung in both
    assert not any("bf16" in r[0] for r in sgemm) and all(r[0] in ("cublas",) or "bf16" in r[0] for r in tc[1:])
    assert tc[1][:5] == ["wmma_bf16", "2.772", "0.034", "49.6", "baseline"]  # its own chain, not after autotuned
    # each section says what its peak and its cuBLAS are
    assert "<dt>FP32 peak (TFLOP/s)</dt><dd>66.9 = 132 SMs x 128 lanes x 2 x 1980 MHz</dd>" in page
    assert "<dt>cuBLAS</dt><dd>cublasSgemm CUBLAS_DEFAULT_MATH (TF32 off)</dd>" in page
    assert "<dt>Dense BF16 tensor peak (TFLOP/s)</dt><dd>1,070.5 = " in page
    assert "<dt>cuBLAS</dt><dd>cuBLAS BF16 at its best: the fastest of the candidates" in page
    # the two cuBLAS rows get their own cards
    assert 'id="kernel-cublas"' in page and 'id="kernel-bf16-cublas"' in page
    assert "<h3>cublas (SGEMM ladder, run 1)</h3>" in page and "<h3>cublas (BF16 tensor-core ladder, run 2)</h3>" in page
    text = md.read_text()
    assert "## SGEMM ladder\n" in text and "## BF16 tensor-core ladder\n" in text
    assert "## Environment: SGEMM ladder, run 1" in text and "## Environment: BF16 tensor-core ladder, run 2" in text


def test_both_ladders_plot_apart(tmp_path):
    db = store_with(tmp_path, FP32_4096, BF16_4096)
    views = [RunView(r) for r in runs.load_for_report(db)[0]]
    views = [report_inputs.attach(v, ceilings=report_inputs.ceilings_for(v.gpu)) for v in views]
    rep = content.build(views)
    assert [s.key for s in rep.sections] == ["", "bf16"]
    assert [p.key for p in rep.plots] == [
        "ladder-4096x4096x4096", "timing-4096x4096x4096", "roofline-4096x4096x4096",
        "ladder-bf16-4096x4096x4096", "timing-bf16-4096x4096x4096", "roofline-bf16-4096x4096x4096"]
    assert rep.plots[2].title.startswith("FP32 roofline") and rep.plots[5].title.startswith("Dense BF16 tensor roofline")


def test_runs_are_picked_with_run_and_checked(capsys, tmp_path):
    db = store_with(tmp_path, FP32_4096, BF16_4096)
    out = tmp_path / "r.html"
    code, _, err = run_cli(capsys, "report", str(db), "--run", "2", "--out", str(out), "--no-plots")
    assert code == 0, err
    page = out.read_text()
    assert "BF16 tensor-core ladder" in page and "SGEMM ladder" not in page
    code, _, err = run_cli(capsys, "report", str(db), "--run", "2", "--run", "1", "--out", str(out), "--no-plots",
                           "--force")
    assert code == 0, err
    page = out.read_text()
    assert page.index("<h2>BF16 tensor-core ladder</h2>") < page.index("<h2>SGEMM ladder</h2>")  # the order asked for
    code, _, err = run_cli(capsys, "report", str(db), "--run", "1", "--run", "1", "--out", str(tmp_path / "x.html"))
    one_error_line(code, err, "--run 1: given twice")
    code, _, err = run_cli(capsys, "report", str(BF16_4096), "--run", "1", "--run", "2", "--out", str(tmp_path / "x.html"))
    one_error_line(code, err, "--run 1:", "is a run JSON file")
    assert not (tmp_path / "x.html").exists()


def test_a_report_shows_one_gpu(capsys, tmp_path):
    db = store_with(tmp_path, FP32_4096, BF16_4096, gpu="NVIDIA H200")
    code, _, err = run_cli(capsys, "report", str(db), "--run", "1", "--run", "2", "--out", str(tmp_path / "r.html"))
    one_error_line(code, err, "the runs are from NVIDIA H100 80GB HBM3 and NVIDIA H200", "gemmlab compare")
    # by default only this GPU's other ladder joins the newest run: here there is none
    code, _, err = run_cli(capsys, "report", str(db), "--out", str(tmp_path / "r.html"), "--no-plots")
    assert code == 0, err
    assert "SGEMM ladder" not in (tmp_path / "r.html").read_text()


def test_runs_lists_each_runs_dtype(capsys, tmp_path):
    db = store_with(tmp_path, FP32_4096, BF16_4096)
    code, out, err = run_cli(capsys, "runs", "--db", str(db), "--json")
    assert code == 0, err
    assert [(r["id"], r["dtypes"]) for r in json.loads(out)] == [(2, "bf16"), (1, "fp32")]  # gemmlab 0.1 stored "float32"
    code, out, err = run_cli(capsys, "runs", "--db", str(db))
    assert code == 0 and "Dtype" in out and "bf16" in out


def test_a_stored_bf16_run_reads_like_its_json(tmp_path):
    db = store_with(tmp_path, BF16_4096)
    stored, direct = samples.view_of_file(db), samples.view_of_file(BF16_4096)
    assert (stored.dtype, stored.out_dtype, stored.peak) == (direct.dtype, direct.out_dtype, direct.peak)
    assert [(r.name, r.median_s, stored.pct_of_peak(r), stored.pct_of_reference(r)) for r in stored.results] == [
        (r.name, r.median_s, direct.pct_of_peak(r), direct.pct_of_reference(r)) for r in direct.results]
    assert stored.reference(stored.shapes[0]).launched == direct.reference(direct.shapes[0]).launched


# --- compare ------------------------------------------------------------------------------------
def test_compare_refuses_an_sgemm_run_against_a_bf16_run(capsys):
    for argv in ((str(FP32_4096), str(BF16_4096)), (str(BF16_4096), str(FP32_4096), "--json")):
        code, out, err = run_cli(capsys, "compare", *argv)
        line = one_error_line(code, err, "SGEMM ladder", "BF16 tensor-core ladder", "compare two runs of one ladder")
        assert out == "" and str(FP32_4096) in line


def test_compare_refuses_bf16_runs_with_different_output_types(capsys, tmp_path):
    d = json.loads(BF16_8192.read_text())
    for r in d["rows"]:
        r["spec"]["dtype"] = "bf16_fp32out"
    other = tmp_path / "c_fp32.json"
    other.write_text(json.dumps(d))
    code, _, err = run_cli(capsys, "compare", str(BF16_8192), str(other))
    one_error_line(code, err, "BF16 tensor-core ladder (C fp32)", "C bf16")


def test_compare_two_bf16_runs_like_two_sgemm_runs(capsys):
    code, out, err = run_cli(capsys, "compare", str(BF16_EARLIER), str(BF16_4096), "--json")
    assert code == 0, err
    d = json.loads(out)
    assert (d["ladder"], d["dtype"]) == ("BF16 tensor-core ladder", "bf16")
    sc, = d["shapes"]
    assert [k["kernel"] for k in sc["kernels"]] == ["wmma_bf16", "mma_sync_bf16", "cublas"]
    assert sc["steps"][0]["kernel"] == "mma_sync_bf16" and sc["steps"][0]["effect_a"] == "faster"
    assert sc["reference_a"] == "" and sc["reference_b"] == "cublasGemmEx CUBLAS_GEMM_DEFAULT"
    assert d["only_in_b"][0].startswith("cp_async_bf16 at 4096,4096,4096")
    code, out, err = run_cli(capsys, "compare", str(BF16_EARLIER), str(BF16_4096))
    assert code == 0, err
    assert "Time per kernel, M,N,K = 4096,4096,4096 (BF16 tensor-core ladder)" in out
    assert "B's: cublasGemmEx CUBLAS_GEMM_DEFAULT" in out and "Which changes helped where" in out


# --- ladder --profile on the BF16 ladder ---------------------------------------------------------
def _fake_profiles(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from gemmlab.commands import profiled as cmd
    from gemmlab.profile import collect
    from gemmlab.profile.targets import Target
    from gemmlab.workflows import ladder_profile, profile_run

    seen = []
    verdicts = {"wmma_bf16": "shared memory throughput", "mma_sync_bf16": "latency", "cp_async_bf16": "compute bound"}

    def fake_profile_rungs(rungs, shape, *, ncu, full, on_rung):
        out = []
        for i, r in enumerate(rungs):
            on_rung(i, r)
            seen.append((r, shape))
            if r not in verdicts:
                out.append(ladder_profile.RungProfile(r, error="stand-in: not profiled in this test"))
                continue
            diag = SimpleNamespace(primary=SimpleNamespace(category=verdicts[r].replace(" ", "_")))
            res = profile_run.ProfileResult(Target(("p",), r), collect.default_collection(), ["ncu"], tmp_path / r, 1.0,
                                        [], [], [diag])
            out.append(ladder_profile.RungProfile(r, res))
        return out

    monkeypatch.setattr(ladder_profile, "profile_rungs", fake_profile_rungs)
    return cmd, seen


def test_ladder_profile_ranks_the_bf16_rungs_and_the_report_shows_it(monkeypatch, tmp_path, capsys):
    from gemmlab.workflows.ladder_profile import report_dict

    cmd, seen = _fake_profiles(monkeypatch, tmp_path)
    result = json.loads(BF16_4096.read_text())
    rep = cmd.profile_ladder_record(load_record(result, "bf16.json"), "/opt/ncu")
    rungs = ["wmma_bf16", "mma_sync_bf16", "cp_async_bf16", "wgmma_bf16", "tma_bf16", "ws_bf16", "persistent_bf16"]
    assert seen == [(r, (4096, 4096, 4096)) for r in rungs]  # cuBLAS is not a rung
    assert [r.version for r in rep["table"]] == rungs and rep["dtype"] == "bf16"
    first = rep["mattered"][0]
    assert (first.optimization, round(first.speedup, 2)) == ("wmma_bf16 -> mma_sync_bf16", 4.38)
    assert first.why == "shared memory throughput -> latency"
    tma = next(c for c in rep["mattered"] if c.after == "tma_bf16")
    assert not tma.slower and tma.within_noise and tma.rank == 6  # 0.996x, IQRs overlap: last, the same within noise
    cmd.show_ladder_profile(rep, as_json=False)
    out = capsys.readouterr().out
    assert "BF16 tensor-core ladder, profiled" in out and "What actually mattered" in out
    cmd.show_ladder_profile(rep, as_json=True)
    doc = json.loads(capsys.readouterr().out)
    assert doc["dtype"] == "bf16" and len(doc["mattered"]) == 6

    result["profile"] = report_dict(rep)
    view = samples.view_of(result, "profiled.json")
    page = html.render(content.build(view, with_plots=False))
    assert "<h3>What actually mattered</h3>" in page
    mattered = cells(page[page.index("<h3>What actually mattered</h3>"):])
    assert mattered[0] == ["Rank", "Optimization", "Impact", "Why it mattered"]
    assert mattered[1] == ["1", "wmma_bf16 -> mma_sync_bf16", "4.38x", "shared memory throughput -> latency"]
    assert any(r[1] == "wgmma_bf16 -> tma_bf16" and r[2] == "1.00x (same)" for r in mattered)
    head = next(r for r in cells(page) if r and r[0] == "Version")
    assert head[-2:] == ["Profiler signal", "Main bottleneck"]
    text, _ = markdown.render(content.build(view, with_plots=False), None)
    assert "### What actually mattered" in text and "| 1 | wmma\\_bf16 -\\> mma\\_sync\\_bf16 | 4.38x |" in text
