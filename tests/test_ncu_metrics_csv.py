"""ncu --metrics LIST --csv: long format, section "Command line profiler metrics", raw names.

The input is HAND-MADE (tests/fixtures/ncu/handmade/README.md): the layout of the real captures,
values of the gemm_tiled16 and gemm_blocktile2d rows of gemm_ladder_raw.csv as ncu displays them.
"""

from __future__ import annotations

from conftest import FIXTURES
from gemmlab.profile import metrics as M
from gemmlab.profile.load import load

METRICS_LIVE = FIXTURES / "ncu" / "handmade" / "metrics_live.csv"


def test_metrics_csv_records():
    tiled, bt = load(METRICS_LIVE)
    assert (tiled.id, tiled.name, tiled.block, tiled.grid, tiled.cc) == (0, "gemm_tiled16", (16, 16, 1), (128, 128, 1), "9.0")
    assert (bt.id, bt.name, bt.block, bt.grid) == (1, "gemm_blocktile2d", (256, 1, 1), (16, 16, 1))
    assert {tiled.format, bt.format} == {"metrics-csv"}
    assert tiled.notes[0] == "==PROF== Connected to process 3120 (/tmp/ladder)"
    assert len(tiled.notes) == 4  # the program's own line is not a note
    # raw names are kept as they are, scaled units become base units
    assert M.value(tiled, "duration") == 2_870_000  # "2.87" ms
    assert M.value(bt, "duration") == 684_540  # "684.54" us
    assert M.value(bt, "dram_bytes_read") == 33_670_000  # "33.67" Mbyte
    assert M.value(tiled, "gld_requests") == 33_554_432
    assert M.value(bt, "gld_sectors") / M.value(bt, "gld_requests") == 4.0
    assert M.value(bt, "smem_ld_conflicts") == 67_112_006
    assert M.value(tiled, "stall_long_scoreboard") == 2.26
    assert M.value(bt, "registers") == 96
    assert tiled.rules == [] and bt.rules == []


def test_na_is_missing_and_passes_come_from_the_prof_lines():
    tiled, bt = load(METRICS_LIVE)
    assert "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active" not in tiled.metrics
    assert len(tiled.metrics) == 8  # 7 values + the pass count
    # ==PROF== Profiling "gemm_tiled16" - 0: ... - 4 passes
    assert M.value(tiled, "replay_passes") == 4
    assert M.value(bt, "replay_passes") == 4


def test_kernel_filter():
    assert [k.name for k in load(METRICS_LIVE, kernel="blocktile")] == ["gemm_blocktile2d"]
    assert [k.name for k in load(METRICS_LIVE, kernel=r"^gemm_tiled16$")] == ["gemm_tiled16"]
