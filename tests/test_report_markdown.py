"""The Markdown report: the same tables as the HTML page, plots as files next to it."""

from __future__ import annotations

from pathlib import Path

import pytest
import report_samples as samples

from gemmlab.bench.results import RunRecord
from gemmlab.report import content, markdown
from gemmlab.report.model import RunView

REPO = Path(__file__).resolve().parents[1]
H100_RUN = REPO / "docs" / "results" / "harness-h100-2026-11-21" / "ladder2048.json"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def table_rows(text: str, header_start: str) -> list[list[str]]:
    """The rows of the first Markdown table whose header begins with ``header_start``."""
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


@pytest.fixture(scope="module")
def h100_md() -> tuple[str, dict]:
    view = samples.view_of_file(H100_RUN)
    return markdown.render(content.build(view, with_plots=False), None, generated_utc="2026-11-22 00:00:00 UTC")


def test_the_ladder_table_matches_the_recorded_run(h100_md):
    text, files = h100_md
    assert files == {}
    head = "| " + " | ".join(content.LADDER_COLUMNS) + " |"
    assert head in text
    rows = {r[0]: r for r in table_rows(text, head)}
    assert rows["`naive_uncoalesced`"][1:6] == ["17.676", "0.002", "971.9", "baseline", "1.9%"]
    assert rows["`coalesced`"][4] == "5.63x"
    assert rows["`cublas`"][4:6] == ["reference", "100.0%"]
    assert len(rows) == 12


def test_the_header_and_sections(h100_md):
    text, _ = h100_md
    for heading in ("# gemmlab report: NVIDIA H100 80GB HBM3", "## SGEMM ladder", "### Plots", "## Kernels",
                    "## Environment"):
        assert heading + "\n" in text
    assert "| Driver | 580.159.04 |" in text
    assert f"Data source: {markdown.esc(str(H100_RUN))}" in text
    assert "Plots omitted (--no-plots)." in text


def test_plots_are_files_the_text_links_to():
    view = samples.run()
    rep = content.build(view)
    text, files = markdown.render(rep, "report_files")
    assert set(files) == {f"report_files/{p.key}.png" for p in rep.plots}
    for rel, png in files.items():
        assert png.startswith(PNG_MAGIC)
        assert f"]({rel})" in text
    assert f"> **Data:** {markdown.esc(samples.SAMPLE_NOTE)}" in text


def test_without_a_plot_folder_the_plots_are_left_out_with_a_note():
    rep = content.build(samples.run(with_diagnoses=False))
    text, files = markdown.render(rep, None)
    assert files == {}
    assert f"{len(rep.plots)} plots left out of this Markdown file" in text
    assert "![" not in text


def test_cards_carry_the_diagnosis_and_its_command():
    view = samples.run(with_sweep=False)
    text, _ = markdown.render(content.build(view, with_plots=False), None)
    d = view.diagnoses["kernels"][0]
    assert "### `gemm_uncoalesced`" in text
    assert f"Primary: **{markdown.esc(d['primary']['category'])}**" in text
    assert "```sh\n" + d["collect_command"] + "\n```" in text
    assert d["collect_profile"] and "```sh\n" + d["collect_profile"] + "\n```" in text


def test_markdown_special_characters_do_not_break_tables_or_formatting():
    r = samples.kernel_row("a|b*c_d", 8, 8, 8, samples_s=(1e-3, 2e-3))
    view = RunView(RunRecord("ladder", (r,), {"k|ey": "<b>v</b>"},
                             {"gpu": "GPU | *bold*", "shape": {"M": "run `x` | y", "N": 8, "K": 8}}))
    text, _ = markdown.render(content.build(view, with_plots=False), None)
    assert "`a\\|b*c_d`" in text  # in a code span: only the pipe needs escaping
    assert "# gemmlab report: GPU \\| \\*bold\\*" in text
    assert "| k\\|ey | \\<b\\>v\\</b\\> |" in text
    assert "``" in text and "run `x` \\| y" in text  # a backtick inside code gets a double fence
    for line in text.splitlines():
        if line.startswith("| k"):
            assert line.count(" | ") == 1  # still two cells


def test_esc_and_code():
    assert markdown.esc("a*b_c [x](y) <i>\nnext") == "a\\*b\\_c \\[x\\](y) \\<i\\> next"
    assert markdown.code("plain") == "`plain`"
    assert markdown.code("has ` tick") == "`` has ` tick ``"
