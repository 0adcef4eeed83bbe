"""The ncu runner on captured ncu texts (tests/fixtures/ncu_output/README.md says where each came from)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gemmlab.errors import ToolMissing, UserError
from gemmlab.profile import runner
from gemmlab.profile.runner import NoKernelsProfiled, ProfiledKernel, read_output

OUT = Path(__file__).parent / "fixtures" / "ncu_output"


def text(name: str) -> str:
    return (OUT / name).read_text()


def fake_run(stdout: str = "", stderr: str = "", rc: int = 0, wall: float = 1.5) -> runner.NcuRun:
    """Run through run_ncu with a fake subprocess and a fake clock, as the command does."""
    ticks = iter([10.0, 10.0 + wall])

    def fake(argv, **kw):
        assert kw["timeout"] == 60 and kw["capture_output"] and kw["text"]
        return subprocess.CompletedProcess(argv, rc, stdout, stderr)

    return runner.run_ncu(["ncu", "x"], timeout_s=60, runner=fake, clock=lambda: next(ticks))


# --------------------------------------------------------------------------- pass counts

def test_pass_count_per_kernel():
    o = read_output(text("success_full.txt"), "")
    assert o.kernels == [ProfiledKernel("rgbToGray", 0, 31)]
    assert o.report == "/nfsmnt/118010200/CUHKSZ-CSC4005/project1/build/../profile/cuda_PartA.ncu-rep"


def test_pass_count_same_on_either_stream():
    assert read_output("", text("failed_midway.txt")).kernels == read_output(text("failed_midway.txt"), "").kernels


def test_passes_after_an_interrupting_warning_and_singular_pass():
    o = read_output(text("interrupted_progress.txt"), "")
    assert o.kernels == [ProfiledKernel("mm_gpu_kernel_basic", 0, 1), ProfiledKernel("mm_gpu_kernel_2d", 1, 1)]
    assert o.warnings[0].startswith("Launching the workload is taking more time")


def test_recent_counter_format_and_markers_after_program_output():
    assert read_output(text("counter_format_new.txt"), "").kernels == [ProfiledKernel("dtw_regtile_kernel", 0, 1)]
    o = read_output("", text("inline_output.txt"))
    assert [k.name for k in o.kernels] == ["shmem_no_swizzle", "shmem_swizzle"]
    assert o.program_lines == ["Running shmem no swizzle tile kernel ...", "Running shmem swizzle tile kernel ..."]


def test_unfinished_progress_bar_keeps_its_pass_count():
    o = read_output(text("failed_midway.txt"), "")
    assert [k.passes for k in o.kernels] == [19, 19, 19, 19, 19] and o.max_passes() == 19
    assert o.kernels[-1].index == 4


def test_run_keeps_wall_time_and_argv():
    run = fake_run(stdout=text("success_full.txt"), wall=2.25)
    assert run.wall_s == 2.25 and run.argv == ["ncu", "x"] and run.returncode == 0
    runner.check(run)  # a good run raises nothing


# --------------------------------------------------------------------------- failures: one line each

def one_line(exc) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_permission_error():
    with pytest.raises(ToolMissing) as e:
        runner.check(fake_run(stdout=text("perm_denied.txt"), rc=0))
    msg = one_line(e)
    assert e.value.code == 3
    assert "ERR_NVGPUCTRPERM" in msg and "NVreg_RestrictProfilingToAdminUsers=0" in msg and "root" in msg
    assert "https://developer.nvidia.com/ERR_NVGPUCTRPERM" in msg


def test_program_crash_quotes_exit_code_and_last_stderr_lines():
    # the crash wins over the "No kernels were profiled" that follows it
    with pytest.raises(UserError) as e:
        runner.check(fake_run(stderr=text("app_crashed_cuda_init.txt"), rc=1))
    msg = one_line(e)
    assert msg.startswith("the profiled program crashed: exit code 1; its last stderr lines: ")
    assert msg.endswith("RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
                        "before calling NumCudaDevices() that might have already set an error? Error 36: API call "
                        "is not supported in the installed CUDA driver")
    assert "torch._C._cuda_init()" in msg and not isinstance(e.value, NoKernelsProfiled)


def test_ncu_own_error_beats_the_exit_code():
    with pytest.raises(UserError) as e:
        runner.check(fake_run(stderr=text("driver_stub.txt"), rc=1))
    assert one_line(e) == ("ncu failed: Nsight Compute failed to connect to the CUDA driver "
                           "(stub libcuda.so[.1] on path?). (program exit code 1)")


def test_multi_line_driver_error_is_joined():
    with pytest.raises(UserError) as e:
        runner.check(fake_run(stdout=text("driver_resource_dcgm.txt"), rc=9))
    msg = one_line(e)
    assert msg.startswith("ncu failed: An error was reported by the driver: Profiling failed because a driver "
                          "resource was unavailable. Ensure that no other tool (like DCGM) is concurrently")
    assert msg.endswith("(program exit code 9)")


def test_failed_to_profile_is_reported_as_ncus_failure():
    with pytest.raises(UserError) as e:
        runner.check(fake_run(stdout=text("failed_midway.txt"), rc=15))
    assert one_line(e) == ('ncu failed: Failed to profile "volta_h884gemm_128x256_ldg8_nn" in process 24701 '
                           '(program exit code 15)')


def test_no_kernels_profiled_carries_the_run():
    with pytest.raises(NoKernelsProfiled) as e:
        runner.check(fake_run(stdout=text("no_kernels_filtered.txt")))
    assert e.value.run.output.no_kernels_profiled and e.value.code == 2


def test_nonzero_exit_without_ncu_messages():
    with pytest.raises(UserError) as e:
        runner.check(fake_run(stdout=text("success_full.txt"), stderr="Segmentation fault\n", rc=139))
    assert one_line(e) == "ncu exited with code 139; last lines: Segmentation fault"


def test_timeout_and_missing_executable():
    def slow(argv, **kw):
        raise subprocess.TimeoutExpired(argv, kw["timeout"])

    with pytest.raises(UserError, match=r"did not finish within 5 s; raise --timeout"):
        runner.run_ncu(["ncu"], 5, runner=slow)

    def missing(argv, **kw):
        raise FileNotFoundError(argv[0])

    with pytest.raises(ToolMissing, match="cannot be executed"):
        runner.run_ncu(["/nope/ncu"], 5, runner=missing)


# --------------------------------------------------------------------------- listing kernels that ran

def test_no_match_message_lists_kernels_with_counts():
    ran = runner.kernels_that_ran(read_output(text("listing_run.txt"), ""))
    msg = runner.no_match_message("-k regex:^gemm_tiled32$", 0, ran, capped=False)
    assert msg == "no kernel matched -k regex:^gemm_tiled32$; the program ran: gemm_tiled16 (x4)"
    assert "launched no CUDA kernel" in runner.no_match_message("--nvtx-include gemmlab/", 0, ran.__class__(), False)


def test_list_kernels_argv_is_unfiltered_and_cheap():
    assert runner.list_kernels_argv("/opt/ncu", ["python3", "t.py", "--x"], max_launches=50) == [
        "/opt/ncu", "--target-processes", "all", "--metrics", "launch__grid_size", "--launch-count", "50",
        "python3", "t.py", "--x"]


def test_skip_message():
    assert runner.skip_message("-k regex:^g$", 5, 5) == (
        "-k regex:^g$ matched 5 launch(es) but --launch-skip 5 skips them all; lower --launch-skip (or --warmup-launches) below 5")


# --------------------------------------------------------------------------- finding ncu

def exe_set(*paths):
    return lambda p: p in paths


def test_find_ncu_order():
    env = {"GEMMLAB_NCU": "/env/ncu"}
    which = lambda name: "/path/ncu"  # noqa: E731
    glob = lambda pat: []  # noqa: E731
    is_exe = exe_set("/cli/ncu", "/env/ncu", "/path/ncu")
    assert runner.find_ncu("/cli/ncu", env, which, glob, is_exe) == "/cli/ncu"
    assert runner.find_ncu(None, env, which, glob, is_exe) == "/env/ncu"
    assert runner.find_ncu(None, {}, which, glob, is_exe) == "/path/ncu"


def test_find_ncu_newest_install_folder():
    installed = ["/opt/nvidia/nsight-compute/2024.1.1/ncu", "/opt/nvidia/nsight-compute/2025.3.1/ncu",
                 "/opt/nvidia/nsight-compute/2025.10.0/ncu"]
    glob = lambda pat: installed if pat.startswith("/opt") else []  # noqa: E731
    got = runner.find_ncu(None, {}, lambda n: None, glob, exe_set(*installed))
    assert got == "/opt/nvidia/nsight-compute/2025.10.0/ncu"


def test_find_ncu_missing_says_where_it_looked():
    with pytest.raises(ToolMissing) as e:
        runner.find_ncu(None, {}, lambda n: None, lambda p: [], lambda p: False)
    msg = one_line(e)
    assert e.value.code == 3
    for place in ("--ncu", "$GEMMLAB_NCU", "PATH", "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda/bin/ncu"):
        assert place in msg
    assert "--ncu PATH or GEMMLAB_NCU=PATH" in msg


def test_find_ncu_bad_explicit_paths():
    with pytest.raises(ToolMissing, match=r"^--ncu /x/ncu: not an executable file"):
        runner.find_ncu("/x/ncu", {}, lambda n: None, lambda p: [], lambda p: False)
    with pytest.raises(ToolMissing, match=r"^GEMMLAB_NCU=/y: not an executable file"):
        runner.find_ncu(None, {"GEMMLAB_NCU": "/y"}, lambda n: None, lambda p: [], lambda p: False)


def test_has_option_reads_ncu_help_once(tmp_path):
    import stat

    from gemmlab.profile.runner import _OPTIONS, has_option

    calls = tmp_path / "calls"
    for name, text in (("new", "--nvtx-push-pop-scope arg  thread|process"), ("old", "--nvtx-include arg")):
        ncu = tmp_path / name
        ncu.write_text(f"#!/bin/sh\necho x >> {calls}\necho '{text}'\n")
        ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    new, old = str(tmp_path / "new"), str(tmp_path / "old")
    assert has_option(new, "--nvtx-push-pop-scope") is True
    assert has_option(new, "--nvtx-push-pop-scope") is True  # cached: ncu --help ran once
    assert has_option(old, "--nvtx-push-pop-scope") is False
    assert has_option(str(tmp_path / "missing"), "--nvtx-push-pop-scope") is None
    assert calls.read_text().count("x") == 2
    for k in (new, old, str(tmp_path / "missing")):
        _OPTIONS.pop(k, None)


def test_a_range_without_process_scope_warns(tmp_path, monkeypatch):
    from gemmlab.profile import collect, runner
    from gemmlab.profile.runner import NcuMessages, NcuRun, ProfiledKernel
    from gemmlab.profile.targets import Target
    from gemmlab.workflows import profile_run

    monkeypatch.setattr(runner, "has_option", lambda ncu, option: False)
    report = tmp_path / "r.ncu-rep"

    def run(argv, timeout_s, _runner):
        assert "--nvtx-push-pop-scope" not in argv
        report.write_text("x")
        return NcuRun(argv, 0, "", "", 1.0, NcuMessages(kernels=[ProfiledKernel("k", 0, 1)]))

    monkeypatch.setattr(runner, "run_ncu", run)
    monkeypatch.setattr(runner, "check", lambda r: None)
    res = profile_run.run_profile(Target(("python", "s.py"), "s", nvtx_range="step"), collect.default_collection(),
                                  ncu="/opt/ncu-2024", output=report, overwrite=False, analyze=False)
    assert len(res.warnings) == 1 and "PyTorch's backward pass" in res.warnings[0]
