"""Files a user shares get ordinary permissions (issue #12: the HTML report was written 0600)."""

from __future__ import annotations

import os
import stat

import pytest

from gemmlab.fileio import write_atomic


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_written_files_follow_the_umask_not_the_temp_file_mode(tmp_path, umask):
    old = os.umask(umask)
    try:
        out = tmp_path / "report.html"
        write_atomic(out, b"<html></html>")
    finally:
        os.umask(old)
    assert out.read_bytes() == b"<html></html>"
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left behind


def test_the_report_command_writes_a_readable_page(tmp_path, capsys):
    import json

    import report_samples as samples
    from conftest import run_cli

    run = tmp_path / "run.json"
    run.write_text(json.dumps(samples.ladder_result()))
    out = tmp_path / "page.html"
    old = os.umask(0o022)
    try:
        code, _, err = run_cli(capsys, "report", str(run), "--out", str(out), "--no-plots")
    finally:
        os.umask(old)
    assert code == 0, err
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
