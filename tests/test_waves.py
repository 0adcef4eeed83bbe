"""Waves and tail cost, against ncu's launch__waves_per_multiprocessor and NVIDIA's tail rule."""

from __future__ import annotations

import math

import pytest
from ncu_raw_records import NCU_H100, number, raw_launches, raw_rows

from gemmlab.analysis.waves import waves, waves_from_launch
from gemmlab.errors import InputError


def test_waves_equal_ncu_on_every_fixture_kernel():
    # The raw CSV prints waves with two decimals; ours must round to the same text.
    for launch, row in zip(raw_launches(), raw_rows()):
        w = waves_from_launch(launch)
        assert f"{w.waves:.2f}" == row["launch__waves_per_multiprocessor"], launch.name


def test_waves_equal_ncu_exactly_on_the_ncu_rep():
    ncu_report = pytest.importorskip("ncu_report")
    action = ncu_report.load_report(str(NCU_H100 / "gemm_tiled16.ncu-rep")).range_by_idx(0).action_by_idx(0)
    ncu = action.metric_by_name("launch__waves_per_multiprocessor").as_double()
    # gemm_tiled16: 128 × 128 blocks, 8 per SM (warp limit), 132 SMs.
    assert math.isclose(waves(128 * 128, 8, 132).waves, ncu, rel_tol=1e-12)


def test_many_full_waves_and_a_small_tail():
    w = waves(16384, 8, 132)  # the first four fixture kernels
    assert (w.blocks_per_wave, w.full_waves, w.tail_blocks) == (1056, 15, 544)
    assert w.tail_cost_pct == pytest.approx(100 / 16)  # NVIDIA: 100 / (1 + floor(w))
    assert not w.ncu_would_flag  # 6.25 % is below the 20 % ncu reports
    assert w.tail_utilisation == pytest.approx(544 / 1056)


def test_one_partial_wave():
    w = waves(256, 2, 132)  # gemm_blocktile2d: 256 blocks for 264 slots
    assert (w.full_waves, w.tail_blocks, w.tail_cost_pct, w.idle_sm_pct) == (0, 256, None, None)
    assert "single partial wave" in w.summary()


def test_one_and_a_half_waves_is_flagged():
    w = waves(396, 2, 132)  # 1.5 waves: the tail takes up to 50 %
    assert w.tail_cost_pct == 50.0 and w.ncu_would_flag


def test_grid_smaller_than_the_sm_count():
    w = waves(100, 4, 132)
    assert w.idle_sm_pct == pytest.approx(100 * 32 / 132) and w.ncu_would_flag


def test_whole_waves_have_no_tail():
    w = waves(264, 2, 132)
    assert (w.waves, w.tail_blocks, w.tail_cost_pct, w.tail_utilisation) == (1.0, 0, None, None)


def test_bad_input():
    with pytest.raises(InputError, match="cannot launch"):
        waves(100, 0, 132)
    with pytest.raises(InputError, match="grid 0"):
        waves(0, 1, 132)


def test_waves_from_launch_needs_grid_and_sms():
    launch = raw_launches()[0]
    launch.metrics.pop("launch__sm_count")
    launch.metrics.pop("device__attribute_multiprocessor_count")
    with pytest.raises(InputError, match="launch__sm_count"):
        waves_from_launch(launch)
    assert number(raw_rows()[0], "launch__sm_count") == 132
