"""Piped output is laid out for its content, not folded at rich's 80-column fallback (issue #12:
"Versio n" headers, "fract…" units when a command's output went to a file or a pipe)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gemmlab.output import PIPE_WIDTH

SRC = Path(__file__).resolve().parents[1] / "src"


def _run(*argv: str, columns: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["PYTHONPATH"] = str(SRC)
    if columns:
        env["COLUMNS"] = columns
    out = subprocess.run([sys.executable, "-m", "gemmlab", *argv], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _layout(text: str) -> list[str]:
    """The laid-out lines: the commands and card titles are printed whole on purpose, to copy and paste."""
    return [line for line in text.splitlines()
            if not line.lstrip().startswith(("ncu ", "gemmlab profile ", "export GEMMLAB_METRICS", "── #"))]


def test_piped_tables_keep_headers_and_units_whole():
    text = _run("analyze", "--example")
    lines = _layout(text)
    assert max(len(line) for line in lines) <= PIPE_WIDTH
    assert max(len(line) for line in lines) > 80  # not folded at rich's fallback width
    assert any("compared with" in line and "why it matters" in line for line in lines)
    assert "fraction " in text and "fract…" not in text


def test_columns_still_sets_the_width():
    text = _run("analyze", "--example", columns="100")
    assert max(len(line) for line in _layout(text)) <= 100


def test_a_narrow_terminal_never_splits_a_number_or_a_name(monkeypatch):
    """At 80 columns a wide table wraps its prose at spaces and is printed wider than the terminal
    rather than folding "55.8695" into "55.869" / "5" or a kernel name into pieces."""
    import io

    from rich.console import Console

    from gemmlab import output

    buf = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=buf, width=80, markup=False))
    cells = [["naive_uncoalesced", "55.8695", "12308.8", "1.00e-07", "the first article's deliberately bad kernel"],
             ["bank_conflict_free", "0.4654", "36911.0", "8.10e-07", "ok"]]
    output.print_table(["Version", "Time (ms)", "GFLOP/s", "Rel. error", "Note"] * 2, [r * 2 for r in cells])
    text = buf.getvalue()
    for row in cells:
        for cell in row[:4]:
            assert cell in text, cell
