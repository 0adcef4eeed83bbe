"""What gemmlab profile runs: exact argument lists for the three modes, filters, no-overwrite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gemmlab.errors import InputError, UserError
from gemmlab.profile import targets
from gemmlab.profile.targets import Target

PY = "/usr/bin/python3"


def fixed(kernel):
    return lambda rung, M, N, K: kernel


def test_rung_target_profiles_the_launch_after_the_warmups():
    t = targets.rung_target("coalesced", (2048, 2048, 2048), warmup=5, python=PY, resolve=fixed("gemmlab_coalesced"))
    assert t.app_argv == (PY, "-m", "gemmlab.profile.target", "--rung", "coalesced", "--shape", "2048,2048,2048",
                          "--warmup", "5")
    assert (t.kernel_regex, t.nvtx_range, t.launch_skip, t.launch_count) == ("^gemmlab_coalesced$", None, 5, 1)
    assert t.label == "coalesced_2048x2048x2048"
    assert t.describe_filter() == "-k regex:^gemmlab_coalesced$ --launch-skip 5"


def test_rung_whose_kernel_only_the_run_knows_uses_the_nvtx_range():
    t = targets.rung_target("autotuned", (4096, 4096, 1024), warmup=3, python=PY, resolve=fixed(None))
    assert (t.kernel_regex, t.nvtx_range, t.nvtx_include, t.launch_skip, t.launch_count) == (
        None, "gemmlab", "gemmlab/", 0, 1)


def test_script_target(tmp_path):
    s = tmp_path / "bench_step.py"
    s.write_text("print('hi')\n")
    t = targets.script_target(str(s), ["--n", "3"], nvtx_range="step", python=PY)
    assert t.app_argv == (PY, str(s), "--n", "3") and t.nvtx_include == "step/" and t.label == "bench_step"
    t = targets.script_target(str(s), [], kernel="gemm.*", launch_skip=2, launch_count=3, python=PY)
    assert (t.kernel_regex, t.launch_skip, t.launch_count, t.nvtx_range) == ("gemm.*", 2, 3, None)


def test_script_needs_a_filter_and_a_file(tmp_path):
    s = tmp_path / "x.py"
    s.write_text("")
    with pytest.raises(InputError, match=r"--range NAME .* or --kernel REGEX"):
        targets.script_target(str(s))
    with pytest.raises(InputError, match="no such file"):
        targets.script_target(str(tmp_path / "missing.py"), kernel="k")


def test_command_target_as_given():
    t = targets.command_target(["./sgemm", "4096"], kernel="regex-less", launch_skip=1)
    assert t.app_argv == ("./sgemm", "4096") and t.label == "sgemm" and t.launch_skip == 1
    t = targets.command_target(["python", "-c", "pass"])
    assert not t.filtered and t.describe_filter() == "any kernel"


@pytest.mark.parametrize("kw, msg", [
    (dict(launch_skip=-1), "launch_skip -1: expected 0 or more"),
    (dict(launch_count=0), "launch_count 0: expected 1 or more"),
    (dict(kernel_regex="gemm("), "kernel 'gemm(': not a valid regular expression"),
    (dict(nvtx_range="a/b"), "range 'a/b': expected an NVTX range name without '/'"),
])
def test_target_validation(kw, msg):
    with pytest.raises(InputError) as e:
        Target(("./app",), "app", **kw)
    assert str(e.value).startswith(msg)


def test_empty_command():
    with pytest.raises(InputError, match="nothing to profile"):
        targets.command_target([])


def test_report_path():
    assert targets.report_path(None, "coalesced_2048x2048x2048", False) == Path(
        "gemmlab-profiles/coalesced_2048x2048x2048.ncu-rep")
    assert targets.report_path(None, "x", True) == Path("gemmlab-profiles/x_full.ncu-rep")
    assert targets.report_path("out/run1", "x", False) == Path("out/run1.ncu-rep")  # ncu adds it too
    assert targets.report_path("a.ncu-rep", "x", True) == Path("a.ncu-rep")


def test_never_overwrites_without_asking(tmp_path):
    rep = tmp_path / "r.ncu-rep"
    never = lambda q: pytest.fail("must not ask")  # noqa: E731
    assert targets.may_overwrite(rep, force=False, isatty=False, confirm=never) is False  # new file
    rep.write_bytes(b"earlier report")
    with pytest.raises(InputError) as e:
        targets.may_overwrite(rep, force=False, isatty=False, confirm=never)
    assert str(e.value) == f"{rep} already exists; pass --force to overwrite it, or --out PATH to write elsewhere"
    assert targets.may_overwrite(rep, force=True, isatty=False, confirm=never) is True
    asked = []
    assert targets.may_overwrite(rep, False, True, lambda q: asked.append(q) or True) is True
    assert asked == [f"{rep} exists. Overwrite it?"]
    with pytest.raises(UserError, match="exists and was kept"):
        targets.may_overwrite(rep, False, True, lambda q: False)
    assert rep.read_bytes() == b"earlier report"


def test_rung_target_defaults_to_this_python():
    t = targets.rung_target("coalesced", (64, 64, 64), resolve=fixed("k"))
    assert t.app_argv[0] == sys.executable and t.launch_skip == targets.DEFAULT_WARMUP == 5


# --------------------------------------------------------------------------- exact ncu argument lists
# Built through the analyzer's gemmlab.profile.command.ncu_command.


def test_argv_rung_default_collection():
    from gemmlab.profile import collect

    t = targets.rung_target("coalesced", (2048, 2048, 2048), warmup=5, python=PY, resolve=fixed("gemmlab_coalesced"))
    c = collect.default_collection()
    argv = targets.build_argv("/opt/ncu", t, c, Path("gemmlab-profiles/coalesced_2048x2048x2048.ncu-rep"), False)
    assert argv == ["/opt/ncu", "--section", "SourceCounters", "--metrics", ",".join(c.metrics),
                    "-k", "regex:^gemmlab_coalesced$",
                    "--launch-skip", "5", "--launch-count", "1", "--clock-control", "none",
                    "--target-processes", "all", "-o", "gemmlab-profiles/coalesced_2048x2048x2048.ncu-rep",
                    PY, "-m", "gemmlab.profile.target", "--rung", "coalesced", "--shape", "2048,2048,2048",
                    "--warmup", "5"]


def test_argv_rung_full_over_an_agreed_file():
    from gemmlab.profile import collect

    t = targets.rung_target("autotuned", (4096, 4096, 4096), warmup=3, python=PY, resolve=fixed(None))
    argv = targets.build_argv("ncu", t, collect.full_collection(), Path("r.ncu-rep"), True)
    assert argv == ["ncu", "--set", "full", "--nvtx", "--nvtx-include", "gemmlab/", "--nvtx-push-pop-scope", "process",
                    "--launch-count", "1",
                    "--clock-control", "none", "--target-processes", "all", "-f", "-o", "r.ncu-rep",
                    PY, "-m", "gemmlab.profile.target", "--rung", "autotuned", "--shape", "4096,4096,4096",
                    "--warmup", "3"]


def test_argv_script_with_range(tmp_path):
    from gemmlab.profile import collect

    s = tmp_path / "step.py"
    s.write_text("")
    t = targets.script_target(str(s), ["--batch", "8"], nvtx_range="step", python=PY)
    argv = targets.build_argv("ncu", t, collect.default_collection(["speed_of_light"]), Path("o.ncu-rep"), False)
    assert argv == ["ncu", "--metrics", ",".join(collect.default_collection(["speed_of_light"]).metrics),
                    "--nvtx", "--nvtx-include", "step/", "--nvtx-push-pop-scope", "process", "--launch-count", "1",
                    "--clock-control", "none", "--target-processes", "all", "-o", "o.ncu-rep", PY, str(s), "--batch", "8"]
    # an ncu without the option (runner.has_option said False): the range stays per thread
    old = targets.build_argv("ncu", t, collect.default_collection(["speed_of_light"]), Path("o.ncu-rep"), False,
                             process_scope=False)
    assert "--nvtx-push-pop-scope" not in old and "--nvtx-include" in old


def test_argv_command_with_kernel_regex():
    from gemmlab.profile import collect

    t = targets.command_target(["./sgemm", "4096"], kernel="^sgemm", launch_skip=1, launch_count=2)
    argv = targets.build_argv("ncu", t, collect.default_collection(["coalescing"]), Path("s.ncu-rep"), False)
    assert argv == ["ncu", "--metrics", ",".join(collect.default_collection(["coalescing"]).metrics),
                    "-k", "regex:^sgemm", "--launch-skip", "1", "--launch-count", "2", "--clock-control", "none",
                    "--target-processes", "all", "-o", "s.ncu-rep", "./sgemm", "4096"]


def test_dry_run_prints_the_exact_command(tmp_path, capsys, monkeypatch):
    from gemmlab.cli import main

    monkeypatch.setenv("GEMMLAB_NCU", sys.executable)  # any executable stands in for ncu here
    monkeypatch.chdir(tmp_path)
    main(["profile", "--kernel", "^k$", "--groups", "coalescing", "--dry-run", "--", "./app", "--n", "3"])
    out = capsys.readouterr().out
    metrics = ",".join(__import__("gemmlab.profile.collect", fromlist=["x"]).default_collection(["coalescing"]).metrics)
    assert out == (f"{sys.executable} --metrics {metrics} -k 'regex:^k$' --launch-count 1 --clock-control none "
                   f"--target-processes all -o gemmlab-profiles/app.ncu-rep ./app --n 3\n")
    assert not (tmp_path / "gemmlab-profiles").exists()  # a dry run writes nothing


def test_launched_kernel_follows_the_registry():
    assert targets.launched_kernel("coalesced", 2048, 2048, 2048) == "gemmlab_coalesced"
    assert targets.launched_kernel("vectorized", 2048, 2048, 2048) == "gemmlab_vectorized"
    assert targets.launched_kernel("vectorized", 2047, 2047, 2047) == "gemmlab_vectorized_scalar"  # K % 4 != 0
    assert targets.launched_kernel("autotuned", 2048, 2048, 2048) is None  # chosen at run time


def test_rung_shape_like_the_ladder_command():
    from gemmlab.commands.common import resolve_shape as rung_shape  # profile takes the ladder's own

    assert rung_shape(None, None) == (2048, 2048, 2048)
    assert rung_shape(1000, None) == (1000, 1000, 1000)
    assert rung_shape(None, "4096,4096,1024") == (4096, 4096, 1024)
    with pytest.raises(InputError, match="give either --size or --shape, not both"):
        rung_shape(1, "1,1,1")
    with pytest.raises(InputError, match="--size must be a positive integer, got 0"):
        rung_shape(0, None)
    with pytest.raises(InputError, match="--shape expects three positive integers"):
        rung_shape(None, "1,2")
    with pytest.raises(InputError, match="32-bit int"):  # the kernels' indexing limit, as the ladder says
        rung_shape(70000, None)
