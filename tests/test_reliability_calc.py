"""Physically impossible calculator inputs are refused in one line (exit 2), naming the input."""

from __future__ import annotations

import pytest
from conftest import NCU_H100
from conftest import run_cli as run

from gemmlab.analysis.roofline import Ceilings, RooflinePoint, point_from_gemm
from gemmlab.hardware import GPUS

RAW = str(NCU_H100 / "gemm_ladder_raw.csv")
H100 = GPUS["h100-sxm"]


def one_error_line(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 2, err
    assert out == ""
    assert err.startswith("gemmlab: error: ") and err.count("\n") == 1, err
    for f in fragments:
        assert f in err, (f, err)


@pytest.fixture(autouse=True)
def empty_store(tmp_path, monkeypatch):  # spec ceilings, never a measured store of this machine
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(tmp_path / "ceilings.json"))


def test_roofline_refuses_a_time_faster_than_the_gpu(capsys):
    code, out, err = run(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", "0.0001", "--gpu", "H100")
    one_error_line(code, out, err, "--ms 0.0001", "1,374,389.5 TFLOP/s", "66.9 TFLOP/s FP32 roof",
                   "NVIDIA H100 SXM5", "1.25 ×")


def test_roofline_keeps_a_real_time(capsys):
    code, out, err = run(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", "2.3", "--gpu", "H100")
    assert code == 0, err
    assert "% of roof" in out


@pytest.mark.parametrize("factor, ok", [(1.2, True), (1.3, False)])
def test_the_margin_above_the_spec_roof(capsys, factor, ok):
    flops = 2.0 * 4096**3
    ms = flops / (factor * H100.fp32_flops) * 1e3
    code, _, err = run(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", f"{ms:.6f}", "--gpu", "h100", "--json")
    assert (code == 0) is ok, err


def test_roofline_refuses_bytes_faster_than_dram(capsys):
    # 16384 x 16384 x 1: 1 GB of C alone, far beyond the 50 MiB L2; 0.1 ms would be 10 TB/s
    code, out, err = run(capsys, "roofline", "--shape", "16384,16384,1", "--ms", "0.1", "--gpu", "h100")
    one_error_line(code, out, err, "--shape 16384,16384,1 --ms 0.1", "10,214 GB/s", "3350 GB/s memory roof")


def test_an_l2_resident_gemm_may_sit_above_the_memory_roof(capsys):
    # 4 MB of operands fit in the L2: a repeated benchmark reads them from there, not from DRAM
    code, _, err = run(capsys, "roofline", "--shape", "1024,1024,1", "--ms", "0.0005", "--gpu", "h100", "--json")
    assert code == 0, err


@pytest.mark.parametrize("ms", ["nan", "inf", "-1", "0"])
def test_roofline_time_must_be_a_positive_number(capsys, ms):
    code, out, err = run(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", ms, "--gpu", "h100")
    one_error_line(code, out, err, f"--ms {float(ms)}", "positive number of milliseconds")


def test_a_capture_under_another_gpus_ceilings_is_refused(capsys):
    code, out, err = run(capsys, "roofline", "--from-capture", RAW, "--gpu", "t4", "--ceilings", "spec")
    one_error_line(code, out, err, f"--from-capture {RAW}: kernel 'gemm_blocktile2d'", "25.1 TFLOP/s",
                   "NVIDIA Tesla T4")


def test_a_capture_under_its_own_ncu_peaks_is_kept(capsys):
    code, _, err = run(capsys, "roofline", "--from-capture", RAW, "--json")
    assert code == 0, err


def test_impossible_checks_measured_dram_bytes_of_ncu_points():
    from gemmlab.analysis.roofline import impossible

    ceil = Ceilings("gpu", 10e12, 1e12, "ncu", "test")
    fast = RooflinePoint("k", 1e9, 2e9, 1e-3, "ncu")  # 2 TB/s of measured DRAM traffic on a 1 TB/s GPU
    assert "2,000 GB/s" in impossible(fast, ceil)
    assert impossible(RooflinePoint("k", 1e9, 1.05e9, 1e-3, "ncu"), ceil) is None  # within 10 %
    # analytic bytes are compulsory traffic, maybe from L2: unchecked without the L2 size
    assert impossible(point_from_gemm("g", 16384, 16384, 1, 1e-4), Ceilings("g", 1e15, 1e12, "spec", "")) is None


@pytest.mark.parametrize(
    "argv, fragments",
    [
        (["occupancy", "--arch", "sm_90", "--threads", "1x1x128", "--regs", "32"],
         ["--threads '1x1x128'", "z dimension must be 1..64"]),
        (["occupancy", "--arch", "sm_90", "--threads", "2048x1", "--regs", "32"],
         ["--threads '2048x1'", "x dimension must be 1..1024"]),
        (["waves", "--grid", "10x70000", "--blocks-per-sm", "2", "--sms", "132"],
         ["--grid '10x70000'", "y dimension must be 1..65535"]),
        (["waves", "--grid", "100", "--blocks-per-sm", "40", "--sms", "132"],
         ["--blocks-per-sm 40", "1..32"]),
        (["waves", "--grid", "100", "--blocks-per-sm", "20", "--arch", "sm_75", "--sms", "40"],
         ["--blocks-per-sm 20", "1..16", "sm_75"]),
        (["waves", "--grid", "100", "--blocks-per-sm", "-1", "--sms", "132"], ["--blocks-per-sm -1"]),
        (["waves", "--grid", "100", "--blocks-per-sm", "4", "--sms", "0"], ["--sms 0"]),
        (["banks", "tid", "--block", "1x1x128"], ["--block '1x1x128'", "z dimension must be 1..64"]),
    ],
)
def test_impossible_launch_geometry_is_refused(capsys, argv, fragments):
    code, out, err = run(capsys, *argv)
    one_error_line(code, out, err, *fragments)
