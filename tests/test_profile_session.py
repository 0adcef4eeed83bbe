"""One profile run end to end with a fake ncu: success, missing report, nothing profiled explained."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gemmlab.errors import UserError
from gemmlab.profile import collect
from gemmlab.profile.targets import Target
from gemmlab.workflows import profile_run

FIX = Path(__file__).parent / "fixtures"
OUT = FIX / "ncu_output"


@pytest.fixture
def fake_argv(monkeypatch):
    """build_argv stands in for the analyzer's command builder: the runner's behaviour is under test here."""
    monkeypatch.setattr(profile_run, "build_argv",
                        lambda ncu, t, c, out, ow, process_scope=None: [ncu, "-o", str(out), *t.app_argv])


def scripted(*steps):
    """A subprocess.run stand-in replaying (stdout, stderr, rc, side effect) per call."""
    calls = []

    def run(argv, **kw):
        calls.append(argv)
        out, err, rc, effect = steps[len(calls) - 1]
        if effect:
            effect(argv)
        return subprocess.CompletedProcess(argv, rc, out, err)

    return run, calls


def test_success_loads_and_diagnoses(tmp_path, fake_argv, monkeypatch):
    report = tmp_path / "r" / "tiled.csv"
    prof = ('==PROF== Connected to process 7 (/usr/bin/python3)\n'
            '==PROF== Profiling "gemm_tiled16" - 5: 0%....50%....100% - 11 passes\n'
            f'==PROF== Disconnected from process 7\n==PROF== Report: {report}\n')
    run, calls = scripted((prof, "", 0, lambda argv: shutil.copy(FIX / "ncu" / "h100" / "gemm_ladder_raw.csv", report)))
    monkeypatch.setattr(profile_run, "diagnose", lambda launches: [f"diag:{k.name}" for k in launches])
    t = Target(("python3", "t.py"), "tiled", kernel_regex="^gemm_tiled16$", launch_skip=5)
    res = profile_run.run_profile(t, collect.default_collection(), ncu="/opt/ncu", output=report, overwrite=False,
                              runner=run)
    assert calls == [["/opt/ncu", "-o", str(report), "python3", "t.py"]]
    assert res.passes == 11 and res.report == report and len(res.launches) == 5
    assert res.diagnoses[2] == "diag:gemm_tiled16"
    d = res.to_dict()
    assert d["kernels"] == [{"name": "gemm_tiled16", "launch": 5, "passes": 11}] and d["report"] == str(report)


def test_no_report_written(tmp_path, fake_argv):
    run, _ = scripted(('==PROF== Profiling "k" - 0: 0%....50%....100% - 4 passes\n', "", 0, None))
    with pytest.raises(UserError, match=r"ncu finished but wrote no report at .*nothere.ncu-rep"):
        profile_run.run_profile(Target(("./a",), "a", kernel_regex="k"), collect.default_collection(), ncu="ncu",
                            output=tmp_path / "nothere.ncu-rep", overwrite=False, runner=run, analyze=False)


def test_nothing_matched_lists_what_ran(tmp_path, fake_argv):
    run, calls = scripted(((OUT / "no_kernels_filtered.txt").read_text(), "", 0, None),
                          ((OUT / "listing_run.txt").read_text(), "", 0, None))
    t = Target(("python3", "t.py"), "t", kernel_regex="^gemm_tiled32$")
    with pytest.raises(UserError) as e:
        profile_run.run_profile(t, collect.default_collection(), ncu="/opt/ncu", output=tmp_path / "x.ncu-rep",
                            overwrite=False, runner=run)
    assert str(e.value) == "no kernel matched -k regex:^gemm_tiled32$; the program ran: gemm_tiled16 (x4)"
    assert calls[1] == ["/opt/ncu", "--target-processes", "all", "--metrics", "launch__grid_size",
                        "--launch-count", "1000", "python3", "t.py"]


def test_launch_skip_that_skips_every_match(tmp_path, fake_argv):
    run, _ = scripted(((OUT / "no_kernels_filtered.txt").read_text(), "", 0, None),
                      ((OUT / "listing_run.txt").read_text(), "", 0, None))
    t = Target(("python3", "t.py"), "t", kernel_regex="^gemm_tiled16$", launch_skip=4)
    with pytest.raises(UserError) as e:
        profile_run.run_profile(t, collect.default_collection(), ncu="ncu", output=tmp_path / "x.ncu-rep",
                            overwrite=False, runner=run)
    assert str(e.value) == ("-k regex:^gemm_tiled16$ --launch-skip 4 matched 4 launch(es) but --launch-skip 4 "
                            "skips them all; lower --launch-skip (or --warmup-launches) below 4")


def test_unfiltered_command_that_launched_nothing(tmp_path, fake_argv):
    run, calls = scripted(((OUT / "no_kernels_filtered.txt").read_text(), "", 0, None))
    with pytest.raises(UserError, match="^ncu profiled no kernel: the program launched no CUDA kernel that ncu could"):
        profile_run.run_profile(Target(("./cpu_only",), "c"), collect.default_collection(), ncu="ncu",
                            output=tmp_path / "x.ncu-rep", overwrite=False, runner=run)
    assert len(calls) == 1  # nothing to list: no second run


def test_primary_category_unwraps_enums():
    import enum
    from types import SimpleNamespace

    class Cat(enum.Enum):
        MEM = "memory-bound"

    assert profile_run.primary_category(SimpleNamespace(primary=SimpleNamespace(category=Cat.MEM))) == "memory-bound"
    assert profile_run.primary_category(SimpleNamespace(primary=None)) is None


# --------------------------------------------------------------------------- the profile command's output

def _fake_result(tmp_path, target, collection):
    from gemmlab.profile.load import load
    from gemmlab.profile.runner import ProfiledKernel

    launches = [k for k in load(FIX / "ncu" / "h100" / "gemm_ladder_raw.csv") if k.name == "gemm_tiled16"]
    res = profile_run.ProfileResult(target, collection, ["/opt/ncu", "--metrics", "x", "./app"], tmp_path / "r.ncu-rep",
                                12.5, [ProfiledKernel("gemm_tiled16", 5, 11)], launches)
    res.diagnoses = profile_run.diagnose(launches)
    return res


def test_profile_command_prints_command_passes_wall_time_and_diagnosis(tmp_path, monkeypatch, capsys):
    from gemmlab.cli import main
    from gemmlab.commands import profile as cmd

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cmd, "find_ncu", lambda explicit: "/opt/ncu")
    calls = []

    def fake_run_profile(target, collection, *, ncu, output, overwrite, timeout_s):
        calls.append((target.app_argv, collection.name, ncu, output, overwrite))
        return _fake_result(tmp_path, target, collection)

    monkeypatch.setattr(profile_run, "run_profile", fake_run_profile)
    main(["profile", "--kernel", "gemm_tiled16", "--launch-skip", "5", "--", "./app"])
    out = capsys.readouterr().out
    assert calls == [(("./app",), "default", "/opt/ncu", Path("gemmlab-profiles/app.ncu-rep"), False)]
    assert "command: /opt/ncu --metrics x ./app" in out
    assert "gemm_tiled16" in out and "11" in out and "wall time: 12.5 s" in out
    assert "shared_memory_throughput" in out or "shared memory throughput" in out.lower()


def test_profile_command_json(tmp_path, monkeypatch, capsys):
    import json

    from gemmlab.cli import main
    from gemmlab.commands import profile as cmd

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cmd, "find_ncu", lambda explicit: "/opt/ncu")
    monkeypatch.setattr(profile_run, "run_profile",
                        lambda target, collection, **kw: _fake_result(tmp_path, target, collection))
    main(["profile", "--kernel", "k", "--full", "--json", "--", "./app"])
    out = json.loads(capsys.readouterr().out)
    assert out["collection"]["set"] == "full" and out["kernels"] == [{"name": "gemm_tiled16", "launch": 5, "passes": 11}]
    assert out["diagnoses"][0]["primary"]["category"] == "shared_memory_throughput"


def test_profile_refuses_to_overwrite_without_a_terminal(tmp_path, monkeypatch, capsys):
    from gemmlab.cli import main
    from gemmlab.commands import profile as cmd

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cmd, "find_ncu", lambda explicit: "/opt/ncu")
    (tmp_path / "old.ncu-rep").write_bytes(b"keep me")
    with pytest.raises(SystemExit) as e:
        main(["profile", "--kernel", "k", "-o", "old", "--", "./app"])
    assert e.value.code == 2
    assert capsys.readouterr().err == ("gemmlab: error: old.ncu-rep already exists; pass --force to overwrite it, "
                                       "or --out PATH to write elsewhere\n")
    assert (tmp_path / "old.ncu-rep").read_bytes() == b"keep me"
