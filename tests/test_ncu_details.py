"""The details page (ncu --page details --csv): display labels, display rounding, rule rows."""

from __future__ import annotations

import pytest

from conftest import NCU_H100
from gemmlab.profile import metrics as M
from gemmlab.profile.load import load
from gemmlab.profile.records import Metric

DETAILS = NCU_H100 / "gemm_ladder_details.csv"
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
          '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value","Rule Name",'
          '"Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"')


@pytest.fixture(scope="module")
def details():
    return load(DETAILS)


@pytest.fixture(scope="module")
def raw():
    return load(NCU_H100 / "gemm_ladder_raw.csv")


def test_launches_and_identity_match_the_raw_page(details, raw):
    assert [(k.id, k.name, k.demangled, k.block, k.grid, k.device, k.cc, k.process) for k in details] == [
        (k.id, k.name, k.demangled, k.block, k.grid, k.device, k.cc, k.process) for k in raw
    ]
    assert {k.format for k in details} == {"details-csv"}
    assert all(k.notes == [] for k in details)


def test_labels_become_metric_names_in_base_units(details):
    unc = details[0]
    assert len(unc.metrics) == 86
    assert not [n for n in unc.metrics if n.startswith("label:")]  # every label of ncu 2025.3 is known
    assert unc.metrics["gpu__time_duration.sum"].value == 34_310_000  # "34.31" ms, display-rounded
    assert unc.metrics["gpu__time_duration.sum"].unit == "ns"
    # "Memory Throughput" twice: % of peak in Speed Of Light, bandwidth in Memory Workload Analysis
    assert unc.number("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed") == 98.11
    assert unc.metrics["dram__bytes.sum.per_second"] == Metric(1_430_000_000, "byte/s")  # "1.43" Gbyte/s
    assert unc.number("launch__shared_mem_per_block_driver") == 1020  # "1.02" Kbyte/block
    assert unc.number("profiler__pmsampler_interval_time") == 12_000  # "12" us
    assert unc.number("launch__grid_size") == 16384  # "16,384"
    assert unc.metrics["launch__func_cache_config"].value == "CachePreferNone"
    assert details[4].number("launch__occupancy_limit_registers") == 2


def test_rule_rows_are_kept_with_their_evidence(details):
    unc = details[0]
    assert [(r.name, r.type, r.section, r.speedup_type, r.estimated_speedup) for r in unc.rules] == [
        ("SOLBottleneck", "INF", "SpeedOfLight", "", None),
        ("SOLFPRoofline", "INF", "SpeedOfLight_RooflineChart", "", None),
        ("HighPipeUtilization", "OPT", "ComputeWorkloadAnalysis", "local", 97.68),
        ("MemoryL2Compression", "OPT", "MemoryWorkloadAnalysis_Chart", "global", 0.02878),
        ("MemoryCacheAccessPattern", "OPT", "MemoryWorkloadAnalysis_Tables", "global", 85.84),
        ("MemoryCacheAccessPattern", "OPT", "MemoryWorkloadAnalysis_Tables", "global", 85.84),
        ("IssueSlotUtilization", "OPT", "SchedulerStats", "local", 1.892),
        ("CPIStall", "OPT", "WarpStateStats", "global", 1.892),
        ("CPIStall", "INF", "WarpStateStats", "", None),
        ("UncoalescedGlobalAccess", "OPT", "SourceCounters", "global", 61.79),
    ]
    assert unc.rules[-1].description.startswith(
        "This kernel has uncoalesced global accesses resulting in a total of 7519862784 excessive sectors"
        " (85% of the total 8862564352 sectors).")
    bt = details[4]
    assert ("SharedMemoryConflicts", 43.26) in [(r.name, r.estimated_speedup) for r in bt.rules]
    assert [len(k.rules) for k in details] == [10, 6, 4, 7, 11]


# The headline numbers the analyzer reads, which the details page shows (rounded for display).
HEADLINE = ["duration", "sm_pct", "mem_pct", "dram_pct", "l1tex_pct", "l2_pct", "registers", "block_size",
            "grid_size", "waves", "sm_count", "smem_static", "smem_dynamic", "occ_limit_registers",
            "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks", "occ_limit_barriers",
            "occ_theoretical", "occ_achieved", "issue_active", "warps_eligible", "warps_active", "warp_cpi",
            "thread_inst_per_inst", "l1_hit_pct", "l2_hit_pct", "dram_bytes_per_s", "branch_uniform_pct",
            "elapsed_cycles", "sm_active_cycles", "inst_executed", "dram_clock"]


def test_details_and_raw_pages_give_the_analyzer_the_same_numbers(details, raw):
    for d, r in zip(details, raw):
        for short in HEADLINE:
            dv, rv = M.value(d, short), M.value(r, short)
            assert dv is not None and rv is not None, (d.name, short)
            # display rounding: 2 decimals, or 3-4 significant digits after a unit prefix
            assert dv == pytest.approx(rv, rel=5e-3, abs=5e-3), (d.name, short, dv, rv)
        # the SOL "SM Frequency" of the details page is the GPC clock; within 0.6% of the SM clock here
        assert M.value(d, "sm_clock") == pytest.approx(M.value(r, "sm_clock"), rel=6e-3)


def test_what_the_details_page_does_not_carry(details):
    # body tables (stall reasons, sector counts) are not exported on the details page: missing,
    # and ncu's own rule rows are the evidence left for them
    unc = details[0]
    for short in ("stall_long_scoreboard", "stall_lg_throttle", "gld_sectors", "gld_requests", "smem_ld_conflicts"):
        assert M.value(unc, short) is None, short
    assert "UncoalescedGlobalAccess" in [r.name for r in unc.rules]


def test_na_value_is_missing_and_unknown_label_is_kept(tmp_path):
    text = DETAILS.read_text()
    text = text.replace('"Duration","ms","34.31"', '"Duration","ms","n/a"')
    assert text.count("Branch Efficiency") == 5
    text = text.replace('"Branch Efficiency"', '"Branch Efficiency v2"')
    p = tmp_path / "edited_details.csv"
    p.write_text(text)
    launches = load(p)
    assert "gpu__time_duration.sum" not in launches[0].metrics
    assert M.value(launches[0], "duration") is None
    assert launches[1].number("gpu__time_duration.sum") == 2_510_000  # "2.51" ms, untouched
    assert launches[0].number("label:Source Counters/Branch Efficiency v2") == 100
    assert launches[0].metrics["label:Source Counters/Branch Efficiency v2"].unit == "%"


def test_print_metric_name_name(tmp_path):
    """Hand-made: three rows as --print-metric-name name writes them (raw names in Metric Name),
    values copied from the gemm_tiled16 rows of gemm_ladder_details.csv."""
    ident = ('"2","1889","ladder","127.0.0.1","gemm_tiled16(const float *, const float *, float *, int, int, int)",'
             '"1","7","(16, 16, 1)","(128, 128, 1)","0","9.0"')
    p = tmp_path / "names.csv"
    p.write_text("\n".join([
        HEADER,
        ident + ',"GPU Speed Of Light Throughput","gpu__time_duration.sum","ms","2.87",',
        ident + ',"GPU Speed Of Light Throughput","gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","%","0.50",',
        ident + ',"Launch Statistics","launch__registers_per_thread","register/thread","22",',
    ]) + "\n")
    (k,) = load(p)
    assert (k.id, k.name, k.block, k.format) == (2, "gemm_tiled16", (16, 16, 1), "details-csv")
    assert M.value(k, "duration") == 2_870_000
    assert M.value(k, "dram_pct") == 0.5
    assert M.value(k, "registers") == 22
