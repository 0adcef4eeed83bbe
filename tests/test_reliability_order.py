"""Bad input is reported (exit 2) before a missing GPU or tool (exit 3).

Each test makes the tool or GPU missing, whatever this machine has, so that a command that looks
for it before checking its options exits 3 and fails the test.
"""

from __future__ import annotations

import pytest
from conftest import NCU_H100
from conftest import run_cli as run

from gemmlab.errors import ToolMissing

REP = str(NCU_H100 / "gemm_tiled16.ncu-rep")


def _missing(what: str):
    def fake(*args, **kwargs):
        raise ToolMissing(f"{what} is not here (test)")

    return fake


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr("gemmlab.bench.ceilings.CupyBackend", _missing("CuPy"))


@pytest.fixture
def no_ncu(monkeypatch):
    monkeypatch.setattr("gemmlab.commands.profile.find_ncu", _missing("ncu"))


@pytest.fixture
def no_ncu_report(monkeypatch):
    monkeypatch.setattr("gemmlab.profile.ncu_rep.read_rep", _missing("ncu_report"))


@pytest.fixture
def no_nsys_no_cupti(monkeypatch):
    monkeypatch.setattr("gemmlab.profile.timeline_run.find_nsys", lambda *a, **k: None)
    monkeypatch.setattr("gemmlab.profile.cupti_timeline.cupti_events", _missing("torch/CUPTI"))


def bad_input(capsys, *argv: str, fragment: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2, err
    assert out == "" and err.startswith("gemmlab: error: ") and err.count("\n") == 1, err
    assert fragment in err, err


def test_the_fakes_do_make_the_tools_missing(capsys, no_gpu, no_ncu, no_ncu_report, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(tmp_path / "c.json"))
    assert run(capsys, "ceilings", "--measure")[0] == 3
    assert run(capsys, "profile", "coalesced", "-o", str(tmp_path / "r"))[0] == 3
    assert run(capsys, "analyze", REP)[0] == 3


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--size", "0"], "--size 0"),
        (["--size", "-5"], "--size -5"),
        (["--repeats", "2"], "--repeats 2"),
        (["--copy-mib", "16"], "--copy-mib 16"),
        (["--device", "-1"], "--device -1"),
    ],
)
def test_ceilings_measure_checks_its_options_before_the_gpu(capsys, no_gpu, tmp_path, monkeypatch, argv, fragment):
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(tmp_path / "c.json"))
    bad_input(capsys, "ceilings", "--measure", *argv, fragment=fragment)


def test_ceilings_measure_checks_the_store_before_the_gpu(capsys, no_gpu, tmp_path):
    store = tmp_path / "c.json"
    store.write_text("not json")
    bad_input(capsys, "ceilings", "--measure", "--store", str(store), fragment="not a readable gemmlab ceilings store")


@pytest.mark.parametrize("timeout", ["0", "-1", "nan"])
def test_profile_checks_timeout_before_ncu(capsys, no_ncu, tmp_path, timeout):
    bad_input(capsys, "profile", "coalesced", "--timeout", timeout, "-o", str(tmp_path / "r"),
              fragment=f"--timeout {float(timeout)}")


def test_profile_refuses_an_existing_report_before_ncu(capsys, no_ncu, tmp_path):
    existing = tmp_path / "r.ncu-rep"
    existing.write_bytes(b"x")
    bad_input(capsys, "profile", "coalesced", "-o", str(existing), fragment="already exists; pass --force")


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--timeout", "0", "--", "true"], "--timeout 0.0"),
        (["--script", "no_such_script.py"], "--script no_such_script.py: no such file"),
        (["--via", "bogus", "--", "true"], "--via 'bogus'"),
    ],
)
def test_timeline_checks_its_options_before_nsys_or_cupti(capsys, no_nsys_no_cupti, argv, fragment):
    bad_input(capsys, "timeline", *argv, fragment=fragment)


def test_analyze_checks_the_kernel_regex_before_reading_a_report(capsys, no_ncu_report):
    bad_input(capsys, "analyze", REP, "--kernel", "(", fragment="--kernel '(': not a valid regular expression")


def test_diff_checks_the_kernel_regex_before_reading_reports(capsys, no_ncu_report):
    bad_input(capsys, "diff", REP, REP, "--kernel", "(", fragment="--kernel '('")


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--from-capture", REP, "--ms", "1"], "--ms is for an analytic point"),
        (["--from-capture", REP, "--ceilings", "bogus"], "--ceilings 'bogus'"),
        (["--from-capture", REP, "--plot", "roof.bmp"], "--plot roof.bmp"),
        (["--from-capture", REP, "--kernel", "("], "--kernel '('"),
    ],
)
def test_roofline_checks_its_options_before_reading_a_report(capsys, no_ncu_report, argv, fragment):
    bad_input(capsys, "roofline", *argv, fragment=fragment)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--barriers", "99"], "--barriers 99"),
        (["--carveout", "200"], "--carveout 200"),
        (["--smem-config", "1M"], "shared-memory config"),
        (["--smem", "8K"], "drop --threads/--regs/--smem"),
    ],
)
def test_occupancy_rung_checks_its_options_before_nvcc(capsys, monkeypatch, argv, fragment):
    monkeypatch.setattr("gemmlab.commands.calc.rung_inputs", _missing("nvcc"))
    bad_input(capsys, "occupancy", "--arch", "sm_90", "--rung", "blocktile_2d", *argv, fragment=fragment)


@pytest.mark.parametrize("cmd", ["occupancy", "waves"])
def test_calculators_check_the_kernel_regex_before_reading_a_report(capsys, no_ncu_report, cmd):
    bad_input(capsys, cmd, "--from-capture", REP, "--kernel", "(", fragment="--kernel '('")
