"""Square brackets print as written: in help (typer) and in every table and line gemmlab prints (rich).

rich markup read "[tid]" in "As[tid][k]" as a style tag and dropped it: `gemmlab banks --help` showed
"As", so the documented example could not be typed back, and table cells lost their indices.
"""

from __future__ import annotations

import io

from conftest import run_cli as run
from rich.console import Console

from gemmlab import output


def test_banks_help_shows_the_2d_example_literally(capsys):
    code, out, _ = run(capsys, "banks", "--help")
    assert code == 0
    assert "As[tid][k]" in out and "As[row][col]" in out


def test_the_help_example_runs(capsys):
    code, out, err = run(capsys, "banks", "As[tid][k]", "--row-length", "32", "--var", "k=0")
    assert code == 0, err
    assert "As[tid][k]" in out  # the index cell of the table, as typed


def test_print_table_prints_brackets_literally(capsys):
    output.print_table(["h[c]", "n"], [["x[i][j]", 1], ["[bold]b[/]", None]], title="t[a]", caption="c[b]")
    out = capsys.readouterr().out
    for text in ("x[i][j]", "[bold]b[/]", "t[a]", "c[b]", "h[c]", "–"):
        assert text in out, (text, out)


def test_console_lines_print_brackets_literally(capsys):
    output.console.print("stride of As[tid]: 32 → 33 [red]")
    output.warn("kernel k[0] was [skipped]")
    got = capsys.readouterr()
    assert "stride of As[tid]: 32 → 33 [red]" in got.out
    assert got.err == "gemmlab: warning: kernel k[0] was [skipped]\n"


def test_the_warning_prefix_keeps_its_colour(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(output, "err_console", Console(file=buf, force_terminal=True, color_system="standard",
                                                       width=200))
    output.warn("x[i]")
    text = buf.getvalue()
    assert "\x1b[33mgemmlab: warning:\x1b[0m x[i]" in text
