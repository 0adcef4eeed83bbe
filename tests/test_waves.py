"""Waves and tail cost, against ncu's launch__waves_per_multiprocessor and NVIDIA's tail rule."""

from __future__ import annotations

import math

import pytest
from ncu_raw_records import NCU_H100, number, raw_launches, raw_rows

from gemmlab.analysis.waves import cluster_waves, waves, waves_from_launch
from gemmlab.errors import InputError
from gemmlab.profile.records import Metric


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


def test_clusters_that_do_not_all_fit_make_a_partial_wave():
    # 33 clusters of 4 on 132 SMs where 30 fit (cuOccupancyMaxActiveClusters, H100 and H200): ncu's
    # waves per SM read 1.0; the last 3 clusters run after the first 30
    w = waves(132, 1, 132, cluster_size=4, clusters_at_once=30)
    assert (w.blocks_per_wave, w.full_waves, w.tail_blocks) == (120, 1, 12)
    assert w.waves == pytest.approx(1.1) and w.tail_cost_pct == 50.0
    assert w.cluster_limited and w.idle_sm_pct is None
    assert not w.ncu_would_flag  # 132 blocks for 132 slots: ncu sees one whole wave
    assert "30 fit at once, 120 blocks a wave, not 132" in w.summary()
    assert "ncu's waves per SM miss it" in w.summary()
    # pairs that all fit: the same as without clusters
    p = waves(132, 1, 132, cluster_size=2, clusters_at_once=66)
    assert (p.blocks_per_wave, p.waves, p.cluster_limited) == (132, 1.0, False)
    assert p.to_dict()["clusters_at_once"] == 66


def test_cluster_waves():
    assert cluster_waves(132, 4, 30) == pytest.approx(1.1)
    assert cluster_waves(132, 1, 30) is None and cluster_waves(132, 0, 0) is None
    assert cluster_waves(132, 4, None) is None


def test_clusters_need_whole_clusters_and_their_count():
    with pytest.raises(InputError, match="not a whole number of clusters of 4"):
        waves(130, 1, 132, cluster_size=4, clusters_at_once=30)
    with pytest.raises(InputError, match="cuOccupancyMaxActiveClusters"):
        waves(132, 1, 132, cluster_size=4)


def test_waves_from_launch_reads_the_clusters():
    launch = raw_launches()[0]  # 16384 blocks, 8 per SM, 132 SMs
    launch.metrics["launch__cluster_size"] = Metric(8.0)
    launch.metrics["launch__cluster_max_active"] = Metric(120.0)  # 960 blocks a wave, not 1056
    w = waves_from_launch(launch)
    assert (w.cluster_size, w.clusters_at_once, w.blocks_per_wave) == (8, 120, 960)
    del launch.metrics["launch__cluster_max_active"]
    with pytest.raises(InputError, match="launch__cluster_max_active is missing"):
        waves_from_launch(launch)
