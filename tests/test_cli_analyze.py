"""`gemmlab analyze` end to end: exit codes, one-line errors, the example, and each output format."""

from __future__ import annotations

import json

import pytest
from conftest import NCU_H100, run_cli as run





def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gemmlab: error: ")
    assert "Traceback" not in err
    return lines[0]


def test_missing_file(capsys, tmp_path):
    code, out, err = run(capsys, "analyze", str(tmp_path / "nope.csv"))
    assert code == 2 and out == ""
    line = one_line_error(err)
    assert "nope.csv" in line and "no such file" in line


def test_empty_file(capsys, tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    code, _, err = run(capsys, "analyze", str(p))
    assert code == 2
    assert "empty.csv" in one_line_error(err)


def test_not_an_ncu_export(capsys, tmp_path):
    p = tmp_path / "other.csv"
    p.write_text("a,b,c\n1,2,3\n")
    code, _, err = run(capsys, "analyze", str(p))
    assert code == 2
    assert "other.csv" in one_line_error(err)


def test_kernel_filter_matching_nothing(capsys):
    path = NCU_H100 / "gemm_ladder_raw.csv"
    code, out, err = run(capsys, "analyze", str(path), "--kernel", "no_such_kernel")
    assert code == 2 and out == ""
    line = one_line_error(err)
    assert "gemm_ladder_raw.csv" in line and "no_such_kernel" in line and "gemm_tiled16" in line


def test_invalid_kernel_regex(capsys):
    code, _, err = run(capsys, "analyze", str(NCU_H100 / "gemm_ladder_raw.csv"), "--kernel", "(")
    assert code == 2
    assert "--kernel" in one_line_error(err)


def test_json_and_markdown_are_exclusive(capsys):
    code, out, err = run(capsys, "analyze", "--example", "--json", "--markdown")
    assert code == 2 and out == ""
    assert "--json and --markdown" in one_line_error(err)


def test_file_and_example_are_exclusive(capsys):
    code, _, err = run(capsys, "analyze", str(NCU_H100 / "gemm_ladder_raw.csv"), "--example")
    assert code == 2
    one_line_error(err)


def test_example_runs_and_says_so(capsys):
    code, out, err = run(capsys, "analyze", "--example")
    assert code == 0, err
    assert "bundled example" in out
    for name in ("gemm_uncoalesced", "gemm_coalesced", "gemm_tiled16", "gemm_tiled16_unroll", "gemm_blocktile2d"):
        assert name in out
    assert "uncoalesced_global_loads" in out and "l1_lsu_bound" in out


def test_no_file_means_example(capsys):
    code, out, _ = run(capsys, "analyze", "--kernel", "coalesced$")
    assert code == 0
    assert "bundled example" in out and "gemm_coalesced" in out and "gemm_tiled16" not in out


def test_json_parses(capsys):
    code, out, _ = run(capsys, "analyze", str(NCU_H100 / "gemm_ladder_raw_base.csv"), "--json", "--kernel", "blocktile")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    assert [k["name"] for k in doc["kernels"]] == ["gemm_blocktile2d"]


def test_markdown(capsys):
    code, out, _ = run(capsys, "analyze", "--example", "--markdown", "--kernel", "uncoalesced")
    assert code == 0
    assert out.startswith("# gemmlab analyze")
    assert "## #0 `gemm_uncoalesced` — `uncoalesced_global_loads` (high confidence)" in out
    assert "| metric | value | unit | compared with | why it matters |" in out
    assert "```bash\nncu " in out


def test_app_option_goes_into_the_command(capsys):
    code, out, _ = run(capsys, "analyze", "--example", "--json", "--kernel", "uncoalesced", "--app", "./ladder --size 2048")
    assert code == 0
    argv = json.loads(out)["kernels"][0]["collect_argv"]
    assert argv[-3:] == ["./ladder", "--size", "2048"]


@pytest.mark.parametrize("flag", ["--gemm", "--no-gemm"])
def test_gemm_flag(capsys, flag):
    code, out, _ = run(capsys, "analyze", "--example", "--json", "--kernel", "uncoalesced", flag)
    assert code == 0
    k = json.loads(out)["kernels"][0]
    assert k["is_gemm"] is (flag == "--gemm")
    assert (k["ladder"] is None) is (flag == "--no-gemm")
