"""Roofline: FLOP and bytes from the H100 capture against the GEMM's own counts, placement, plots."""

from __future__ import annotations

import pytest
from ncu_raw_records import number, raw_launches, raw_rows

from gemmlab.analysis.roofline import (
    Ceilings,
    RooflinePoint,
    gemm_counts,
    ncu_ceilings,
    place,
    point_from_gemm,
    point_from_launch,
    spec_ceilings,
)
from gemmlab.errors import InputError
from gemmlab.hardware import GPUS, find_gpu
from gemmlab.profile.records import KernelLaunch, Metric
from gemmlab.report.roofline_plot import plot_roofline

N = 2048  # every fixture kernel computes a 2048³ SGEMM


def test_gemm_counts():
    assert gemm_counts(N, N, N) == (2.0 * N**3, 4.0 * 3 * N * N)
    assert gemm_counts(N, N, N, beta_nonzero=True)[1] == 4.0 * 4 * N * N
    assert gemm_counts(128, 256, 64) == (2.0 * 128 * 256 * 64, 4.0 * (128 * 64 + 64 * 256 + 128 * 256))
    with pytest.raises(InputError, match="K = 0"):
        gemm_counts(4, 4, 0)


def test_ncu_flop_count_equals_the_gemm_flop_count():
    # The raw export has only the roofline section's per-cycle rates (two decimals), so the count is
    # rate × SM sub-partition cycles: it must give 2·N³ to the export's rounding (≤ 1e-5 here).
    for launch in raw_launches():
        p = point_from_launch(launch)
        assert p.source == "ncu"
        assert p.flops == pytest.approx(2.0 * N**3, rel=1e-5), launch.name


def test_ncu_bytes_and_time_come_from_the_capture():
    for launch, row in zip(raw_launches(), raw_rows()):
        p = point_from_launch(launch)
        assert p.dram_bytes == number(row, "dram__bytes_read.sum") + number(row, "dram__bytes_write.sum")
        assert p.seconds == number(row, "gpu__time_duration.sum") * 1e-9


def test_fixture_placement_on_ncu_ceilings():
    launches = raw_launches()
    ceil = ncu_ceilings(launches[0])
    row = raw_rows()[0]
    # ncu's peaks: 2 × 16896 FFMA/cycle × SM clock; 1280 B/cycle × DRAM clock.
    assert ceil.fp32_flops == 2 * 16896 * number(row, "sm__cycles_elapsed.avg.per_second")
    assert ceil.dram_bytes_per_s == 1280 * number(row, "dram__cycles_elapsed.avg.per_second")
    assert ceil.gpu == "NVIDIA H100 80GB HBM3" and ceil.source == "ncu"
    blocktile = place(point_from_launch(launches[4]), ceil)
    # 2·2048³ FLOP over 36.5 MB of DRAM traffic (the matrices stay in the 50 MB L2): far right of the ridge.
    assert blocktile.bound == "compute" and blocktile.point.intensity > 400
    assert blocktile.pct_of_attainable == pytest.approx(100 * (2.0 * N**3 / 684544e-9) / ceil.fp32_flops, rel=1e-5)


def test_spec_table_agrees_with_ncu_peaks_of_the_h100():
    """The datasheet bandwidth equals ncu's DRAM peak; the datasheet FP32 peak uses the 1980 MHz boost
    clock, ncu the clock the kernel ran at (1995 MHz here), so they differ by that ratio."""
    ceil = ncu_ceilings(raw_launches()[0])
    spec = find_gpu(ceil.gpu)
    assert spec is GPUS["h100-sxm"]
    assert spec.dram_bytes_per_s == pytest.approx(ceil.dram_bytes_per_s, rel=0.001)
    sm_hz = number(raw_rows()[0], "sm__cycles_elapsed.avg.per_second")
    assert spec.fp32_flops * sm_hz / 1.98e9 == pytest.approx(ceil.fp32_flops, rel=1e-9)


def test_analytic_point_and_bound():
    ceil = Ceilings("H100", 67e12, 3.35e12, "spec", "test")
    assert ceil.ridge == pytest.approx(20.0)
    p = place(point_from_gemm("cublas", 4096, 4096, 4096, 2.69e-3), ceil)
    # 2·4096³ / (4·3·4096²) = 4096 / 6 = 682.7 FLOP/byte
    assert p.point.intensity == pytest.approx(4096 / 6)
    assert p.bound == "compute" and p.attainable == 67e12
    assert p.point.rate == pytest.approx(2 * 4096**3 / 2.69e-3)
    copy_like = place(RooflinePoint("axpy", 2e6, 12e6, 1e-5, "analytic"), ceil)
    assert copy_like.bound == "memory" and copy_like.attainable == pytest.approx(3.35e12 / 6)


def test_spec_ceilings_formula():
    g = GPUS["a100-80gb"]  # 108 SMs × 64 FP32 lanes × 2 × 1.41 GHz = 19.49 TFLOP/s
    assert spec_ceilings(g).fp32_flops == pytest.approx(19.49e12, rel=1e-3) and spec_ceilings(g).source == "spec"
    assert find_gpu("NVIDIA A100-SXM4-80GB") is g and find_gpu("NVIDIA GeForce RTX 4090").key == "rtx4090"
    assert find_gpu("NVIDIA H100 PCIe").key == "h100-pcie" and find_gpu("h100").key == "h100-sxm"
    assert find_gpu("NVIDIA GeForce RTX 5060 Ti") is None and find_gpu("Radeon") is None


def test_missing_metrics_say_how_to_collect_them():
    launch = KernelLaunch(id=0, name="k", demangled="k", metrics={"gpu__time_duration.sum": Metric(1000.0, "ns")})
    with pytest.raises(InputError) as e:
        point_from_launch(launch)
    assert "--set roofline" in e.value.message
    # With the GEMM shape the duration is enough.
    p = point_from_launch(launch, gemm=(64, 64, 64))
    assert (p.source, p.flops) == ("analytic", 2.0 * 64**3) and p.seconds == pytest.approx(1e-6)


def test_bad_points_and_ceilings():
    with pytest.raises(InputError, match="time is 0"):
        RooflinePoint("k", 1.0, 1.0, 0, "analytic")
    with pytest.raises(InputError, match="must be > 0"):
        Ceilings("x", 0, 1, "spec", "")


def test_plot_png_and_svg_and_no_silent_overwrite(tmp_path):
    ceil = Ceilings("H100", 67e12, 3.35e12, "spec", "test")
    pts = [place(point_from_gemm("g", 2048, 2048, 2048, 1e-3), ceil), place(RooflinePoint("m", 1e9, 1e9, 1e-3, "ncu"), ceil)]
    png = plot_roofline(pts, ceil, tmp_path / "r.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = plot_roofline(pts, ceil, tmp_path / "r.svg")
    assert "<svg" in svg.read_text()[:500]
    with pytest.raises(InputError, match="--force"):
        plot_roofline(pts, ceil, tmp_path / "r.png")
    before = (tmp_path / "r.png").stat().st_mtime_ns
    plot_roofline(pts, ceil, tmp_path / "r.png", overwrite=True)
    assert (tmp_path / "r.png").stat().st_mtime_ns >= before
    with pytest.raises(InputError, match=".png"):
        plot_roofline(pts, ceil, tmp_path / "r.jpg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.png", "r.svg"]  # no temp files left
