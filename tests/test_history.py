"""gemmlab history: your own kernel's runs grouped into versions by source text, each edit judged by
``bench.stats.effect``, the edits ranked as "What actually mattered", and the worklog page."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import numpy as np
import pytest
from conftest import run_cli

from gemmlab.analysis.versions import history, hot_lines
from gemmlab.bench.results import Check, Row, RunRecord
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import FASTER, SAME, SLOWER, Measurement
from gemmlab.store import Store
from gemmlab.workflows.kinds import ROW_EXTRAS

H100 = "NVIDIA H100 80GB HBM3"
FILE = "/home/me/kernels/my_sgemm.cu"

# Four sources, each one line away from the one before (the tiling edit, a no-op edit, a bad one).
SOURCES = [(
    "__global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {\n"
    "    int row = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (row < M && col < N) {  // <script>alert('x')</script> & co\n"
    "        float acc = 0.0f;\n"
    "        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];\n"
    "        C[row * N + col] = acc;\n"
    "    }\n"
    "}\n"),
]
SOURCES.append(SOURCES[0].replace("blockIdx.y * blockDim.y + threadIdx.y", "blockIdx.x * blockDim.x + threadIdx.x / 32"))
SOURCES.append(SOURCES[1].replace("float acc = 0.0f;", "float acc = 0.0f;  // accumulate in a register"))
SOURCES.append(SOURCES[2].replace("++k)", "k += 1)"))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def samples_ms(median_ms: float, seed: int, spread: float = 0.004, n: int = 21) -> list[float]:
    """``n`` timed runs around ``median_ms`` with a relative spread (0.4%: a quiet, warm H100)."""
    rng = np.random.default_rng(seed)
    return list(median_ms * (1.0 + spread * rng.standard_normal(n)))


def user_record(source: str, median_ms: float, seed: int, utc: str, *, name: str = "my_sgemm",
                shape=(4096, 4096, 4096), gpu: str = H100, correct: bool = True, profile=None, placement=None,
                cublas_ms: float = 1.0, flush_l2: bool = True) -> RunRecord:
    M, N, K = shape
    row = Row(Measurement(BenchSpec(name, M, N, K), tuple(s * 1e-3 for s in samples_ms(median_ms, seed))),
              Check(correct, "ok" if correct else "12 elements differ, first at (0, 3)", 1e-7 if correct else 0.4),
              info={"family": "user"})
    ref = Row(Measurement(BenchSpec("cublas", M, N, K), tuple(s * 1e-3 for s in samples_ms(cublas_ms, seed + 100))),
              Check(True, "ok", 1e-7), reference=True, info={"family": "cublas"})
    meta = {"kernel": {"name": name, "entry": "cuda", "file": FILE, "function": "sgemm",
                       "source_sha256": sha(source), "source": source, "declaration": {"block": [32, 32, 1]}},
            "shape": {"M": M, "N": N, "K": K}, "dtype": "fp32", "peak": {"flops": 67e12},
            "options": {"timing": {"flush_l2": flush_l2}}}
    if profile is not None:
        meta["profile"] = profile
    if placement is not None:
        meta["placement"] = {"text": placement}
    return RunRecord("user", (row, ref), {"gpu": gpu, "captured_utc": utc}, meta)


PROFILE_V1 = {
    "report": "/tmp/v1.ncu-rep",
    "diagnosis": {"category": "uncoalesced_global_loads", "confidence": "high", "summary": "32 sectors per request"},
    "hot_lines": {"lines": [
        {"file": FILE, "line": 6, "source": "  acc += A[row * K + k] * B[k * N + col];", "share": 0.41,
         "top_stalls": [{"reason": "long_scoreboard", "share": 0.8}, {"reason": "mio_throttle", "share": 0.1}]},
        {"file": "/usr/include/helper.cuh", "line": 12, "source": "x", "share": 0.05, "top_stalls": []},
    ]},
    "finding_line": "94% of the excess global sectors come from line 6, `B[k * N + col]`",
}
PROFILE_V2 = {"diagnosis": {"category": "memory_bound_dram", "confidence": "medium"},
              "hot_lines": {"lines": [{"file": FILE, "line": 6, "source": "acc += A[row * K + k] * B[k * N + col];",
                                       "share": 57.0, "top_stalls": [{"reason": "lg_throttle", "share": 60}]}]}}


def worklog_records() -> list[RunRecord]:
    """v1 10 ms; v2 5 ms (2x faster), re-run once; v3 5.05 ms (1%: the same within noise); v4 6.5 ms
    (slower). Another kernel and a ladder run share the store."""
    return [
        user_record(SOURCES[0], 10.0, 1, "2025-03-01T10:00:00+00:00", profile=PROFILE_V1,
                    placement="below naive_uncoalesced"),
        user_record(SOURCES[1], 5.1, 2, "2025-03-01T11:00:00+00:00", profile=PROFILE_V2,
                    placement="between naive_uncoalesced and coalesced"),
        user_record(SOURCES[1], 5.0, 3, "2025-03-01T11:05:00+00:00"),  # the same source again: v2's latest run
        user_record(SOURCES[2], 5.05, 4, "2025-03-01T12:00:00+00:00"),
        user_record(SOURCES[3], 6.5, 5, "2025-03-01T13:00:00+00:00"),
    ]


@pytest.fixture
def db(tmp_path):
    from fakes_bench import article_result

    path = tmp_path / "runs.sqlite"
    recs = worklog_records()
    with Store(path) as s:
        for i, r in enumerate(recs):
            s.add_record(r, ROW_EXTRAS["user"](r))
            if i == 1:  # other runs between them: not part of my_sgemm's history
                ladder = article_result()
                s.add_record(ladder, ROW_EXTRAS["ladder"](ladder))
                other = user_record("other", 3.0, 9, "2025-03-01T11:01:00+00:00", name="other_gemm")
                s.add_record(other, ROW_EXTRAS["user"](other))
    return path


# ----------------------------------------------------------------------------- store


def test_store_finds_one_kernels_runs_oldest_first_and_lists_the_names(db):
    with Store(db, create=False) as s:
        runs = s.user_runs("my_sgemm")
        kernels = s.user_kernels()
        assert s.user_runs("nope") == [] and s.user_runs("sgemm") == []  # exact name, not a prefix
    assert [r.run_id for r in runs] == [1, 2, 5, 6, 7]  # the ladder run (3) and other_gemm (4) left out
    assert all(r.kind == "user" and r.meta["kernel"]["name"] == "my_sgemm" for r in runs)
    assert [(k.name, k.versions, k.runs) for k in kernels] == [("my_sgemm", 4, 5), ("other_gemm", 1, 1)]
    assert kernels[0].first_utc.startswith("2025-03-01T10") and kernels[0].last_utc.startswith("2025-03-01T13")


# ----------------------------------------------------------------------------- versions and verdicts


def test_runs_are_grouped_by_source_hash_and_the_latest_run_is_the_row():
    h = history("my_sgemm", worklog_records())
    assert [v.label for v in h.versions] == ["v1", "v2", "v3", "v4"]
    assert [len(v.runs) for v in h.versions] == [1, 2, 1, 1] and h.n_runs == 5
    assert [v.sha256 for v in h.versions] == [sha(s) for s in SOURCES]
    v2 = h.versions[1]
    assert v2.short == sha(SOURCES[1])[:8]
    assert v2.latest.created_utc == "2025-03-01T11:05:00+00:00"
    assert v2.latest.row.median_s == pytest.approx(5.0e-3, rel=0.01)  # the re-run, not the first 5.1 ms run
    assert v2.latest.pct_of_cublas == pytest.approx(20.0, rel=0.02)
    assert v2.category == "memory_bound_dram"  # the profile of its profiled run, though the latest was not
    assert h.versions[2].category is None


def test_each_edit_is_judged_by_effect_faster_same_slower():
    h = history("my_sgemm", worklog_records())
    assert [s.edit for s in h.steps] == ["v1 -> v2", "v2 -> v3", "v3 -> v4"]
    assert [s.effect.verdict for s in h.steps] == [FASTER, SAME, SLOWER]
    assert h.steps[0].effect.speedup == pytest.approx(2.0, rel=0.02)
    assert h.steps[1].effect.speedup == pytest.approx(1 / 1.01, rel=0.005)
    assert "under the 3%" in h.steps[1].effect.why
    assert h.steps[2].effect.speedup == pytest.approx(5.05 / 6.5, rel=0.02)
    assert h.steps[0].before_run.run_id is None  # compared with v1's only run (not stored: no id)
    assert h.steps[1].before_run is h.versions[1].latest


def test_the_diff_is_the_one_changed_line():
    h = history("my_sgemm", worklog_records())
    d = h.steps[0].diff
    assert d[0] == f"--- v1 {sha(SOURCES[0])[:8]}/my_sgemm.cu" and d[1] == f"+++ v2 {sha(SOURCES[1])[:8]}/my_sgemm.cu"
    assert [s for s in d if s.startswith(("+", "-")) and not s.startswith(("+++", "---"))] == [
        "-    int row = blockIdx.y * blockDim.y + threadIdx.y;",
        "+    int row = blockIdx.x * blockDim.x + threadIdx.x / 32;",
    ]
    assert (h.steps[0].added, h.steps[0].removed, h.steps[0].lines_changed) == (1, 1, "+1 -1")
    assert any(s.startswith("@@") for s in d)


def test_what_mattered_ranks_the_edits_and_lists_the_noise_as_not_mattering():
    from gemmlab.report.worklog import mattered_table

    h = history("my_sgemm", worklog_records())
    assert [(c.rank, c.optimization, c.effect.verdict) for c in h.mattered] == [(1, "v1 -> v2", FASTER),
                                                                                 (2, "v3 -> v4", SLOWER)]
    assert [c.optimization for c in h.within_noise] == ["v2 -> v3"]
    assert h.not_compared == ()
    assert h.mattered[0].why.startswith("uncoalesced_global_loads -> memory_bound_dram (line 6 41% -> line 6 57%)")
    rows = mattered_table(h)
    assert [r[:3] for r in rows] == [[1, "v1 -> v2", f"{h.mattered[0].speedup:.2f}x"],
                                     [2, "v3 -> v4", f"{h.mattered[1].speedup:.2f}x (slower)"],
                                     ["–", "v2 -> v3", f"{h.within_noise[0].speedup:.2f}x (same)"]]
    assert rows[2][4].startswith("did not matter (within noise)") and rows[0][3] == "+1 -1"


def test_runs_measured_differently_or_wrongly_are_not_compared():
    recs = worklog_records()[:2]
    recs.append(user_record(SOURCES[2], 1.0, 7, "2025-03-02T09:00:00+00:00", shape=(2048, 2048, 2048)))
    recs.append(user_record(SOURCES[3], 0.5, 8, "2025-03-02T10:00:00+00:00", shape=(2048, 2048, 2048), correct=False))
    recs.append(user_record(SOURCES[0], 2.0, 9, "2025-03-02T11:00:00+00:00", shape=(2048, 2048, 2048)))  # v1 again
    h = history("my_sgemm", recs)
    assert [len(v.runs) for v in h.versions] == [2, 1, 1, 1]
    v1_v2, v2_v3, v3_v4 = h.steps
    # v2's latest run is at 4096^3; v1 has a later run at 2048^3 but v1 -> v2 compares like with like
    assert v1_v2.effect.verdict == FASTER and v1_v2.before_run.shape == (4096, 4096, 4096)
    assert v2_v3.effect is None and v2_v3.why_not == (
        "measured differently (v3 vs v2: shape 2048x2048x2048 vs 4096x4096x4096)")
    assert v3_v4.effect is None and "v4 failed the correctness check" in v3_v4.why_not
    assert [s.edit for s in h.not_compared] == ["v2 -> v3", "v3 -> v4"]
    assert [c.optimization for c in h.mattered] == ["v1 -> v2"]
    from gemmlab.report.worklog_html import render

    page = render(h, with_plot=False)
    assert page.count('<tr class="wrong">') == 1 and "v4 WRONG" in page
    assert "not compared</span>: measured differently (v3 vs v2: shape 2048x2048x2048 vs 4096x4096x4096)" in page
    assert "<br>4096x4096x4096 fp32" in page and "<br>2048x2048x2048 fp32" in page  # several shapes: each named
    # another GPU, or a warm L2, is not compared either
    other = [user_record(SOURCES[0], 10.0, 1, "a"), user_record(SOURCES[1], 5.0, 2, "b", gpu="NVIDIA A100"),
             user_record(SOURCES[2], 5.0, 3, "c", gpu="NVIDIA A100", flush_l2=False)]
    why = [s.why_not for s in history("my_sgemm", other).steps]
    assert why == ["measured differently (v2 vs v1: GPU NVIDIA A100 vs NVIDIA H100 80GB HBM3)",
                   "measured differently (v3 vs v2: L2 not flushed vs L2 flushed)"]


def test_hot_lines_are_read_defensively():
    lines = hot_lines(PROFILE_V1)
    assert lines[0].text(FILE) == "line 6 `acc += A[row * K + k] * B[k * N + col];` 41%, long_scoreboard"
    assert lines[1].text(FILE) == "helper.cuh:12 `x` 5%"
    percent = hot_lines(PROFILE_V2)[0]  # written in percent: scaled to a fraction
    assert percent.share == pytest.approx(0.57) and percent.stalls == (("lg_throttle", pytest.approx(0.6)),)
    for bad in ({}, {"hot_lines": "n/a"}, {"hot_lines": {"lines": None}}, {"hot_lines": [1, "x", None]}):
        assert hot_lines(bad) == ()
    odd = hot_lines({"hot_lines": [{"line": "7", "share": "high", "top_stalls": "x"}]})[0]
    assert (odd.line, odd.share, odd.stalls, odd.text()) == (None, None, (), "line ?")


def test_history_json_keeps_every_run_and_the_numbers_unrounded():
    recs = worklog_records()
    d = json.loads(json.dumps(history("my_sgemm", recs).to_dict()))
    assert d["n_versions"] == 4 and d["n_runs"] == 5
    assert d["versions"][1]["median_s"] == recs[2].rows[0].median_s
    assert [r["created_utc"] for r in d["versions"][1]["runs"]] == ["2025-03-01T11:00:00+00:00",
                                                                   "2025-03-01T11:05:00+00:00"]
    assert [s["verdict"] for s in d["steps"]] == ["faster", "same", "slower"]
    assert d["steps"][0]["diff"].count("\n+    int row") == 1
    assert [c["optimization"] for c in d["mattered"]] == ["v1 -> v2", "v3 -> v4"]
    assert d["versions"][0]["top_hot_line"].startswith("line 6 ")


# ----------------------------------------------------------------------------- the command


def test_history_without_a_name_lists_your_kernels(capsys, db):
    code, out, err = run_cli(capsys, "history", "--db", str(db))
    assert code == 0, err
    assert "my_sgemm" in out and "other_gemm" in out and "Versions" in out
    code, out, err = run_cli(capsys, "history", "--db", str(db), "--json")
    assert code == 0, err
    assert [(k["name"], k["versions"], k["runs"]) for k in json.loads(out)["kernels"]] == [
        ("my_sgemm", 4, 5), ("other_gemm", 1, 1)]


def test_history_name_prints_the_versions_and_what_mattered(capsys, db):
    code, out, err = run_cli(capsys, "history", "my_sgemm", "--db", str(db))
    assert code == 0, err
    assert "my_sgemm: 4 versions, 5 runs" in out and "What actually mattered" in out
    for text in ("first version", "faster", "same", "slower", "uncoalesced_global_loads", "long_scoreboard",
                 "naive_uncoalesced", "did not matter"):
        assert text in out, text


def test_history_csv_and_json(capsys, db):
    code, out, err = run_cli(capsys, "history", "my_sgemm", "--db", str(db), "--csv")
    assert code == 0, err
    blocks = out.split("\n\n")
    assert [b.splitlines()[0] for b in blocks] == ["# my_sgemm: 4 versions, 5 runs", "# What actually mattered"]
    versions = list(csv.DictReader(io.StringIO(blocks[0].split("\n", 1)[1])))
    assert [r["Version"] for r in versions] == ["v1", "v2", "v3", "v4"]
    assert versions[1]["Runs"] == "2" and versions[1]["Speed-up vs previous"].endswith("x faster")
    assert versions[0]["Top hot line"] == "line 6 `acc += A[row * K + k] * B[k * N + col];` 41%, long_scoreboard"
    code, out, err = run_cli(capsys, "history", "my_sgemm", "--db", str(db), "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["db"] == str(db) and d["kernel"] == "my_sgemm" and len(d["versions"]) == 4


def test_html_worklog_is_written_escaped_and_never_overwritten_without_force(capsys, db, tmp_path):
    page = tmp_path / "worklog.html"
    code, out, err = run_cli(capsys, "history", "my_sgemm", "--db", str(db), "--html", str(page))
    assert code == 0, err and f"wrote {page}" in out
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html  # the source's <script> is escaped
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; co" in html
    assert '<span class="del">-    int row = blockIdx.y * blockDim.y + threadIdx.y;</span>' in html
    assert '<span class="add">+    int row = blockIdx.x * blockDim.x + threadIdx.x / 32;</span>' in html
    assert html.count('<img src="data:image/png;base64,') == 1
    for text in ("What actually mattered", "Top hot line", "% of cuBLAS", "uncoalesced_global_loads",
                 "94% of the excess global sectors come from line 6", "helper.cuh:12", 'id="v4"'):
        assert text in html, text
    before = page.read_bytes()
    code, _, err = run_cli(capsys, "history", "my_sgemm", "--db", str(db), "--html", str(page))
    assert code == 2 and err.strip() == f"gemmlab: error: --html {page}: file exists; pass --force to replace it"
    assert page.read_bytes() == before
    page.write_text("mine")
    code, out, err = run_cli(capsys, "history", "my_sgemm", "--db", str(db), "--html", str(page), "--force", "--json")
    assert code == 0, err
    assert json.loads(out)["html"] == str(page) and page.read_text().startswith("<!DOCTYPE html>")
    assert f"wrote {page}" in err  # stdout holds only the JSON


def test_the_plot_draws_one_bar_per_version_and_cublas():
    from gemmlab.report.plots import png_bytes
    from gemmlab.report.worklog_html import gflops_figure

    h = history("my_sgemm", worklog_records())
    fig = gflops_figure(h)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([v.latest.row.gflops for v in h.versions])
    assert ax.get_xticklabels()[0].get_text() == f"v1\n{h.versions[0].short}"
    assert png_bytes(fig).startswith(b"\x89PNG")


@pytest.mark.parametrize("argv, line", [
    (["history", "nope"], "gemmlab: error: kernel 'nope': no runs of it in {db}; it has my_sgemm, other_gemm"),
    (["history", "--html", "x.html"], "gemmlab: error: --html needs a kernel NAME"),
])
def test_errors_are_one_line(capsys, db, argv, line):
    code, out, err = run_cli(capsys, *argv, "--db", str(db))
    assert code == 2 and out == ""
    assert err.startswith(line.format(db=db)) and err.count("\n") == 1, err


def test_a_missing_store_or_one_without_your_kernels_is_one_line(capsys, tmp_path):
    missing = tmp_path / "none.sqlite"
    for argv in (["history"], ["history", "my_sgemm"]):
        code, _, err = run_cli(capsys, *argv, "--db", str(missing))
        assert code == 2 and err == f"gemmlab: error: {missing}: no results database yet; `gemmlab bench FILE.cu` " \
                                    "stores each version of your kernel there\n"
    assert not missing.exists()  # reading never creates the database
    from fakes_bench import article_result

    ladder_only = tmp_path / "ladder.sqlite"
    with Store(ladder_only) as s:
        r = article_result()
        s.add_record(r, ROW_EXTRAS["ladder"](r))
    code, _, err = run_cli(capsys, "history", "my_sgemm", "--db", str(ladder_only))
    assert code == 2 and "holds no runs of your own kernels yet" in err and err.count("\n") == 1
    code, out, err = run_cli(capsys, "history", "--db", str(ladder_only), "--json")
    assert code == 0 and json.loads(out)["kernels"] == []
