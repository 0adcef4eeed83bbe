"""The HTML report: sections, exact numbers, escaping, self-contained; and the figures behind it."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import report_samples as samples

from gemmlab.bench.results import RunRecord
from gemmlab.report import content, html, plots
from gemmlab.report.model import RunView, SweepPoint
from gemmlab.workflows import report_inputs

REPO = Path(__file__).resolve().parents[1]
H100_RUN = REPO / "docs" / "results" / "harness-h100-2026-11-21" / "ladder2048.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """Collects what the tests look at: tags with attributes, table rows, text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def ids(self) -> set[str]:
        return {a["id"] for _, a in self.tags if "id" in a}


@pytest.fixture(scope="module")
def h100_page() -> tuple[str, Page]:
    view = report_inputs.attach(samples.view_of_file(H100_RUN), ceilings=report_inputs.ceilings_for("NVIDIA H100 80GB HBM3"))
    text = html.render(content.build(view), generated_utc="2026-11-22 00:00:00 UTC")
    return text, Page(text)


@pytest.fixture(scope="module")
def sample_page() -> tuple[str, Page]:
    text = html.render(content.build(samples.run()))
    return text, Page(text)


def test_sections_are_all_there(h100_page):
    _, page = h100_page
    assert {"ladder", "plots", "kernels", "environment", "data-source"} <= page.ids()
    figure_ids = {a["id"] for t, a in page.tags if t == "figure"}
    assert figure_ids == {"plot-ladder-2048x2048x2048", "plot-timing-2048x2048x2048", "plot-roofline-2048x2048x2048"}


def test_the_ladder_table_shows_the_recorded_h100_numbers(h100_page):
    _, page = h100_page
    ladder = page.tables[0]
    assert ladder[0] == list(content.LADDER_COLUMNS)
    rows = {r[0]: r for r in ladder[1:]}
    assert len(rows) == 12  # 11 rungs + cuBLAS
    # the same figures the harness printed for this run (docs/results/harness-h100-2026-11-21/README.md)
    assert rows["naive_uncoalesced"][1:6] == ["17.676", "0.002", "971.9", "baseline", "1.9%"]
    assert rows["coalesced"][3:6] == ["5,472.7", "5.63x", "10.9%"]
    assert rows["warptiling"][4] == "0.98x"  # a rung that made it slower is shown as such
    assert rows["cublas"][3:6] == ["50,043.9", "reference", "100.0%"]
    assert rows["vectorized"][6] == "ok (rel err 8.087e-07)"


def test_the_header_names_gpu_driver_cuda_date_and_command(h100_page):
    _, page = h100_page
    text = " ".join(page.text)
    for needle in ("NVIDIA H100 80GB HBM3", "580.159.04", "13.2", "2026-11-21T19:57:02+00:00",
                   "gemmlab ladder --shape 2048,2048,2048", "ladder2048.json"):
        assert needle in text


def test_one_card_per_kernel(h100_page):
    _, page = h100_page
    cards = [a["id"] for t, a in page.tags if t == "article"]
    assert len(cards) == 12 and "kernel-naive-uncoalesced" in cards
    assert "12 of 12 kernels have no diagnosis" in " ".join(page.text)


def test_the_page_is_self_contained(h100_page, sample_page):
    for text, page in (h100_page, sample_page):
        for tag, attrs in page.tags:
            for key in ("src", "href"):
                v = attrs.get(key)
                assert v is None or not re.match(r"\s*(https?:)?//", v), f"<{tag} {key}={v}> reaches out"
            assert tag not in ("script", "link", "iframe", "object")
        assert "@import" not in text and "url(" not in text
        imgs = [a["src"] for t, a in page.tags if t == "img"]
        assert imgs
        for src in imgs:
            assert src.startswith("data:image/png;base64,")
            assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_MAGIC)


def test_diagnosis_cards_carry_evidence_missing_evidence_and_the_ncu_command(sample_page):
    _, page = sample_page
    text = " ".join(page.text)
    view = samples.run()
    d = view.diagnoses["kernels"][0]
    assert d["primary"]["summary"] in text
    assert d["collect_command"] in text
    assert d["collect_profile"] and d["collect_profile"] in text  # the gemmlab profile shortcut too
    evidence_tables = [t for t in page.tables if t and t[0][:2] == ["Metric", "Value"]]
    assert evidence_tables
    first_metric = d["primary"]["evidence"][0]["metric"]
    assert any(row[0].startswith(first_metric) for t in evidence_tables for row in t[1:])
    for k in view.diagnoses["kernels"]:
        for m in k["missing_evidence"]:
            assert m["metric"] in text


def test_every_piece_of_text_is_escaped():
    evil = '<script>alert("x")</script>&'
    r = samples.kernel_row(evil, 64, 64, 64, samples_s=(1e-3, 1.1e-3), info={"function": "f"})
    diag = {"source": evil, "kernels": [{"name": evil, "primary": {"category": evil, "confidence": "high",
                                                                   "summary": evil, "evidence": [
                                                                       {"metric": evil, "value": 1, "unit": evil}]},
                                         "findings": [], "missing_evidence": [{"metric": evil, "why": evil}],
                                         "collect_command": evil, "recommendations": [evil]}]}
    record = RunRecord("ladder", (r,), {evil: evil}, {"gpu": evil, "shape": {"M": evil, "N": 1, "K": 1}}, source=evil)
    view = RunView(record, diagnoses=diag, data_note=evil)
    text = html.render(content.build(view))
    assert "<script" not in text
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;" in text
    page = Page(text)
    assert evil in page.text  # what the browser shows is the original text


def test_sample_data_carries_its_banner_and_real_data_does_not(h100_page, sample_page):
    assert "data-note" in sample_page[1].ids()
    assert samples.SAMPLE_NOTE in " ".join(sample_page[1].text)
    assert "data-note" not in h100_page[1].ids()


def test_a_wrong_kernel_is_marked_in_the_table_and_in_red_on_the_chart():
    d = samples.ladder_result()
    d["rows"][2]["correct"] = False
    view = samples.view_of(d, "run.json")
    page = Page(html.render(content.build(view, with_plots=False)))
    row = next(r for r in page.tables[0] if r and r[0] == "gemm_tiled16")
    assert row[6].startswith("WRONG")
    assert ("tr", {"class": "wrong"}) in page.tags
    fig = plots.ladder_figure(view.ladder(view.shapes[0]), None, [None] * 5, "t")
    colors = [tuple(round(c, 3) for c in p.get_facecolor()[:3]) for p in fig.axes[0].patches]
    red = tuple(round(c, 3) for c in plots.matplotlib.colors.to_rgb(plots.COLOR_FAILED))
    assert [c == red for c in colors] == [False, False, True, False, False]
    plots.plt.close(fig)


def test_what_is_left_out_is_said():
    d = samples.ladder_result()
    d["env"]["gpu"] = "Mystery GPU 9000"
    for r in d["rows"]:  # one timed run per kernel: no distribution to draw
        r["samples_s"] = [r["median_s"]]
    view = samples.view_of(d, "run.json")
    rep = content.build(view)
    assert [p.key for p in rep.plots] == ["ladder-2048x2048x2048"]
    assert any("omitted: the run kept one sample per kernel" in n for n in rep.notes)
    assert any("Roofline omitted: no ceilings for Mystery GPU 9000" in n for n in rep.notes)
    assert content.build(view, with_plots=False).notes == ("Plots omitted (--no-plots).",)


def test_a_profiled_ladder_adds_the_articles_two_columns():
    d = samples.ladder_result()
    d["profile"] = {"profiles": [{"rung": "gemm_coalesced", "bottleneck": "l1 lsu bound", "signal": "82.1% L1/TEX",
                                  "error": None, "report": None}]}
    page = Page(html.render(content.build(samples.view_of(d, "run.json"), with_plots=False)))
    head = page.tables[0][0]
    assert head[-2:] == ["Profiler signal", "Main bottleneck"]
    row = next(r for r in page.tables[0] if r[0] == "gemm_coalesced")
    assert row[-2:] == ["82.1% L1/TEX", "l1 lsu bound"]


# --- the figures ------------------------------------------------------------------------------
def test_ladder_bars_are_the_gflops_and_the_reference_is_a_line():
    view = samples.view_of_file(H100_RUN)
    shape = view.shapes[0]
    ladder, ref = view.ladder(shape), view.reference(shape)
    fig = plots.ladder_figure(ladder, ref, [view.pct_of_reference(r) for r in ladder], "t")
    ax = fig.axes[0]
    assert [p.get_height() for p in ax.patches] == [r.gflops for r in ladder]
    assert ax.lines[0].get_ydata()[0] == ref.gflops
    labels = [t.get_text() for t in ax.texts]
    assert labels[0] == "972\n1.9%"
    plots.plt.close(fig)


def test_timing_plot_uses_a_log_axis_only_when_medians_span_more_than_10x():
    k = samples.kernel_row
    wide = [k("a", 8, 8, 8, samples_s=(1e-3, 1.1e-3)), k("b", 8, 8, 8, samples_s=(11e-3, 12e-3))]
    narrow = [k("a", 8, 8, 8, samples_s=(1e-3, 1.1e-3)), k("b", 8, 8, 8, samples_s=(9e-3, 9.5e-3))]
    f1, f2 = plots.timing_figure(wide, "t"), plots.timing_figure(narrow, "t")
    assert f1.axes[0].get_xscale() == "log" and f2.axes[0].get_xscale() == "linear"
    # the right panel: % from each kernel's own median
    offsets = f2.axes[1].collections[-1].get_offsets()[:, 0]
    assert sorted(np.round(offsets, 6)) == sorted(np.round([100 * (9e-3 / 9.25e-3 - 1), 100 * (9.5e-3 / 9.25e-3 - 1)], 6))
    plots.plt.close(f1)
    plots.plt.close(f2)


def test_a_tile_by_unroll_sweep_is_one_grid_with_tile_on_the_rows():
    view = samples.view_of(samples.sweep_result(), "sweep.json")
    (grid,) = plots.sweep_grids(view.sweep)
    # BX, BY, BK move together (one value per tile size): they share the rows
    assert grid.y_params == ("BX", "BY", "BK") and grid.x_params == ("UNROLL",)
    assert [v[0] for v in grid.y_values] == [8, 16, 32] and grid.x_values == ((0,), (1,))
    best, gflops = grid.best()
    assert best == {"BX": 16, "BY": 16, "BK": 16, "UNROLL": 1}
    p = next(p for p in view.sweep if p.params["BX"] == 16 and p.params["UNROLL"] == 1)
    assert gflops == p.gflops


def test_the_registry_sweep_fills_a_5_by_4_grid():
    from gemmlab.kernels.registry import sweep_variants

    pts = [SweepPoint("smem_tiled", dict(v.params), samples.kernel_row(v.name, 64, 64, 64, median_s=1e-3 * (1 + i / 100)))
           for i, v in enumerate(sweep_variants())]
    (grid,) = plots.sweep_grids(pts)
    assert grid.y_params == ("BX", "BY", "BK") and grid.x_params == ("EXTRA_SYNC", "UNROLL")
    arr = np.asarray(grid.gflops)
    assert arr.shape == (5, 4) and not np.isnan(arr).any()
    fig = plots.sweep_figure(grid)
    assert "not run" not in [t.get_text() for t in fig.axes[0].texts]
    plots.plt.close(fig)


def test_a_missing_combination_is_a_blank_cell():
    pts = [SweepPoint("k", {"tile": t, "unroll": u}, samples.kernel_row(f"k{t}{u}", 8, 8, 8, median_s=1e-3))
           for t, u in ((8, 0), (8, 1), (16, 0))]
    (grid,) = plots.sweep_grids(pts)
    arr = np.asarray(grid.gflops)
    assert np.isnan(arr[1, 1]) and np.isfinite(arr).sum() == 3
    fig = plots.sweep_figure(grid)
    assert [t.get_text() for t in fig.axes[0].texts].count("not run") == 1
    plots.plt.close(fig)


def test_the_roofline_points_are_calcs_placements():
    view = samples.run(with_sweep=False, with_diagnoses=False)
    rep = content.build(view)
    assert any(p.key == "roofline-2048x2048x2048" for p in rep.plots)
    from gemmlab.analysis.roofline import place, point_from_gemm

    r = view.results[0]
    pl = place(point_from_gemm(r.name, *r.shape, r.median_s), view.ceilings)
    fig = plots.roofline_figure([pl], view.ceilings, "t")
    x, y = fig.axes[0].collections[0].get_offsets()[0]
    assert x == pytest.approx(2 * 2048**3 / (4 * 3 * 2048**2)) and y == pytest.approx(r.gflops)
    plots.plt.close(fig)


def test_a_diagnosed_program_leads_with_where_its_gpu_time_goes():
    """Issue #9 item 10: the overview of `gemmlab analyze` (groups ranked by GPU time, time by category)
    leads the report's diagnoses too; built from the real 125-launch H100 corpus capture."""
    from gemmlab.analysis import overview
    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.profile.load import load

    capture = REPO / "tests" / "fixtures" / "corpus" / "h100" / "corpus_targeted_raw.csv"
    diag = report_inputs.load_diagnoses([capture])
    assert len(diag["overviews"]) == 1 and diag["overviews"][0]["source"] == str(capture)
    view = report_inputs.attach(samples.view_of_file(H100_RUN), diagnoses=diag)
    rep = content.build(view)
    (ov,) = rep.overviews
    launches = load(capture)
    expected = overview.build(launches, diagnose_all(launches))
    assert len(ov.rows) == min(content.OVERVIEW_ROWS, len(expected.groups))
    assert ov.more == max(0, len(expected.groups) - content.OVERVIEW_ROWS)
    assert [r[1] for r in ov.rows] == [g.label for g in expected.groups[:content.OVERVIEW_ROWS]]
    page = Page(html.render(rep))
    assert "overview" in page.ids()
    tables = [t for t in page.tables if t and tuple(t[0]) == content.OVERVIEW_COLUMNS]
    assert len(tables) == 1 and tables[0][1][1] == expected.groups[0].label
    cat_tables = [t for t in page.tables if t and tuple(t[0]) == content.CATEGORY_COLUMNS]
    assert len(cat_tables) == 1 and len(cat_tables[0]) - 1 == len(expected.categories)
    text = "".join(page.text)
    assert expected.where_time_goes() in text
