"""FP32 lanes per SM come from the one architecture table (used for the clock-derived peak)."""

from gemmlab.bench.env import fp32_peak
from gemmlab.hardware import arch_for_cc


def test_lanes_per_sm_by_architecture():
    assert arch_for_cc((9, 0)).fp32_lanes_per_sm == 128  # GH100
    assert arch_for_cc((8, 0)).fp32_lanes_per_sm == 64  # GA100
    assert arch_for_cc((8, 6)).fp32_lanes_per_sm == 128  # GA10x doubled FP32
    assert arch_for_cc((7, 5)).fp32_lanes_per_sm == 64
    assert arch_for_cc((4, 2)) is None


def test_h100_clock_derived_peak():
    # 132 SMs x 128 lanes x 2 FLOP x 1980 MHz = 66.9 TFLOP/s, the figure the harness reports
    env = {"sm_count": 132, "fp32_lanes_per_sm": arch_for_cc((9, 0)).fp32_lanes_per_sm,
           "sm_clock_max_mhz": 1980}
    assert fp32_peak(env)["flops"] == 132 * 128 * 2 * 1980e6
