"""The ncu command builder: exact argv lists, quoting, and option validation."""

from __future__ import annotations

import shlex

import pytest

from gemmlab.errors import UserError
from gemmlab.profile.command import NcuOptions, kernel_filter, ncu_argv, ncu_command, render, sort_sections


def test_full_evidence_command():
    argv = ncu_command(["./ladder", "--size", "2048"], kernel_name="gemm_tiled16",
                       sections=["WarpStateStats", "MemoryWorkloadAnalysis_Tables", "SourceCounters"],
                       launch_skip=1, launch_count=1, output="gemm_tiled16_evidence")
    assert argv == ["ncu", "--section", "MemoryWorkloadAnalysis_Tables", "--section", "WarpStateStats",
                    "--section", "SourceCounters", "-k", "regex:^gemm_tiled16$", "--launch-skip", "1",
                    "--launch-count", "1", "--clock-control", "none", "-o", "gemm_tiled16_evidence",
                    "./ladder", "--size", "2048"]


def test_metrics_and_set():
    argv = ncu_command(["./app"], metrics=["gpu__time_duration.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed"],
                       set_name="full", clock_control="base")
    assert argv == ["ncu", "--set", "full", "--metrics",
                    "gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed",
                    "--clock-control", "base", "./app"]


def test_regex_and_python_options():
    argv = ncu_argv(["python", "bench.py"], NcuOptions(kernel_regex="gemm_.*", target_processes="all",
                                                       nvtx_include=("bench/",), import_source=True,
                                                       cache_control="all", replay_mode="kernel"))
    assert argv == ["ncu", "--nvtx", "--nvtx-include", "bench/", "-k", "regex:gemm_.*", "--clock-control", "none",
                    "--cache-control", "all", "--replay-mode", "kernel", "--target-processes", "all",
                    "--import-source", "yes", "python", "bench.py"]


def test_never_overwrites_unless_asked():
    assert "-f" not in ncu_command(["./a"], output="x")
    assert ncu_command(["./a"], output="x", force_overwrite=True)[-4:] == ["-f", "-o", "x", "./a"]


def test_kernel_name_is_escaped_and_anchored():
    assert kernel_filter(NcuOptions(kernel_name="k.v2+x")) == r"regex:^k\.v2\+x$"


def test_render_round_trips_through_the_shell():
    argv = ncu_command(["./my app"], kernel_name="gemm_tiled16", output="out")
    line = render(argv)
    assert "'regex:^gemm_tiled16$'" in line
    assert "'./my app'" in line
    assert shlex.split(line) == argv


def test_sections_keep_ncu_order_and_drop_duplicates():
    assert sort_sections(["SourceCounters", "SpeedOfLight", "Custom", "SpeedOfLight", "LaunchStats"]) == \
        ["SpeedOfLight", "LaunchStats", "SourceCounters", "Custom"]


@pytest.mark.parametrize("kwargs,needle", [
    (dict(clock_control="locked"), "clock_control='locked'"),
    (dict(launch_skip=-1), "launch_skip=-1"),
    (dict(launch_count=0), "launch_count=0"),
    (dict(launch_count=True), "launch_count=True"),
    (dict(sections=("Warp State",)), "section='Warp State'"),
    (dict(sections=("A", "A")), "each section once"),
    (dict(metrics=("a,b",)), "metric='a,b'"),
    (dict(kernel_regex="("), "kernel_regex='('"),
    (dict(kernel_name="a", kernel_regex="b"), "not both"),
    (dict(output="-o"), "output='-o'"),
    (dict(replay_mode="fast"), "replay_mode='fast'"),
])
def test_invalid_options_name_the_argument(kwargs, needle):
    with pytest.raises(UserError) as e:
        NcuOptions(**kwargs)
    assert needle in str(e.value)
    assert "\n" not in str(e.value)


def test_app_is_required():
    with pytest.raises(UserError, match="app_argv"):
        ncu_argv([], NcuOptions())


def test_kernel_name_base_goes_before_the_filter():
    """-k matches the bare function name unless --kernel-name-base says otherwise (a demangled-name filter
    tells apart two functors of one template)."""
    argv = ncu_argv(["./app"], NcuOptions(kernel_regex=r"CUDAFunctor_add<float>", kernel_name_base="demangled"))
    assert argv[1:5] == ["--kernel-name-base", "demangled", "-k", "regex:CUDAFunctor_add<float>"]
    assert "--kernel-name-base" not in ncu_argv(["./app"], NcuOptions(kernel_name="k", kernel_name_base="function"))
    with pytest.raises(UserError, match="kernel_name_base='name'"):
        NcuOptions(kernel_name_base="name")
