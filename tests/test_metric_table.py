"""The one metric-name table: short names, version fallbacks, and the details page's display labels.

The label table is checked against the capture itself: gemm_ladder_details.csv and
gemm_ladder_raw.csv are two exports of the same report, so every label's value must equal the
raw metric's value for the same launch, up to the details page's display rounding.
"""

from __future__ import annotations

import csv
import re

import pytest

from conftest import NCU_H100
from gemmlab.profile import metrics as M
from gemmlab.profile.load import load
from gemmlab.profile.records import KernelLaunch, Metric
from gemmlab.profile.units import parse_value, unit_scale


def _details_rows():
    with open(NCU_H100 / "gemm_ladder_details.csv", newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    c = {h: i for i, h in enumerate(header)}
    for r in rows[1:]:
        if r[c["Metric Name"]]:
            yield int(r[c["ID"]]), r[c["Section Name"]], r[c["Metric Name"]], r[c["Metric Unit"]], r[c["Metric Value"]]


def _display_half_step(text: str, unit: str) -> float:
    """Half of the last printed digit, in base units: "34.31" ms → 0.005 ms = 5000 ns."""
    digits = text.replace(",", "").partition(".")[2]
    return 0.5 * 10.0 ** -len(digits) * float(unit_scale(unit)[1] or 1)


def test_every_details_label_is_mapped_and_matches_the_raw_page():
    raw = load(NCU_H100 / "gemm_ladder_raw.csv")
    checked = set()
    for launch_id, section, label, unit, text in _details_rows():
        name = M.LABELS.get((section, label))
        assert name is not None, f"unmapped details label ({section!r}, {label!r})"
        expected = raw[launch_id].metrics[name]
        value, base_unit = parse_value(text, unit)
        if isinstance(value, str):
            assert value == expected.value, (section, label)
        else:
            assert abs(value - expected.value) <= _display_half_step(text, unit) * (1 + 1e-9), (
                f"{section}/{label} → {name}: details {text} {unit}, raw {expected.value} (launch {launch_id})"
            )
        checked.add((section, label))
    # every entry of the table was proven on this capture: none is a guess
    assert checked == set(M.LABELS)
    assert len(checked) == 87


def test_same_label_in_two_sections_maps_to_two_metrics():
    assert M.LABELS[("GPU Speed Of Light Throughput", "Memory Throughput")] == (
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    assert M.LABELS[("Memory Workload Analysis", "Memory Throughput")] == "dram__bytes.sum.per_second"


def test_name_for_label():
    assert M.name_for_label("GPU Speed Of Light Throughput", "Duration") == "gpu__time_duration.sum"
    assert M.name_for_label("Occupancy", "Block Limit Registers") == "launch__occupancy_limit_registers"
    # --print-metric-name name and --metrics rows carry raw names already
    assert M.name_for_label("GPU Speed Of Light Throughput", "gpu__time_duration.sum") == "gpu__time_duration.sum"
    assert M.name_for_label(M.COMMAND_LINE_SECTION, "smsp__inst_executed.sum") == "smsp__inst_executed.sum"
    # a label this table does not know is kept, not dropped
    assert M.name_for_label("Memory Workload Analysis", "Some New Label") == (
        "label:Memory Workload Analysis/Some New Label")


@pytest.mark.parametrize("text,expected", [
    ("gpu__time_duration.sum", True),
    ("breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed", True),
    ("FBSP.TriageCompute.dramc__throughput.avg.pct_of_peak_sustained_elapsed", True),
    ("derived__local_spilling_requests", True),
    ("Duration", False),
    ("L1/TEX Hit Rate", False),
    ("# SMs", False),
])
def test_is_metric_name(text, expected):
    assert M.is_metric_name(text) is expected


def test_fallback_names_resolve():
    only_old = KernelLaunch(0, "k", "k()", metrics={
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": Metric(41.5, "%")})
    assert M.resolve(only_old, "dram_pct") == ("dram__throughput.avg.pct_of_peak_sustained_elapsed", 41.5)
    both = KernelLaunch(0, "k", "k()", metrics={
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": Metric(41.5, "%"),
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed": Metric(40.0, "%")})
    assert M.resolve(both, "dram_pct") == ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 40.0)
    gpc_only = KernelLaunch(0, "k", "k()", metrics={"gpc__cycles_elapsed.avg.per_second": Metric(1.99e9, "hz")})
    assert M.value(gpc_only, "sm_clock") == 1.99e9
    assert M.value(KernelLaunch(0, "k", "k()"), "dram_pct") is None
    # Blackwell GB20x's names for the DRAM bytes (ncu 2025.3.1 --query-metrics --chip gb202)
    gb20x = KernelLaunch(0, "k", "k()", metrics={"dram__bytes_op_read.sum": Metric(3.0e9, "byte"),
                                               "dram__bytes_op_write.sum": Metric(1.0e9, "byte")})
    assert (M.value(gb20x, "dram_bytes_read"), M.value(gb20x, "dram_bytes_write")) == (3.0e9, 1.0e9)


def test_text_values_do_not_resolve_as_numbers():
    k = KernelLaunch(0, "k", "k()", metrics={"gpu__time_duration.sum": Metric("n/a?", "ns")})
    assert M.value(k, "duration") is None


def test_table_is_well_formed():
    assert len({d.short for d in M.METRICS.values()}) == len(M.METRICS)
    for d in M.METRICS.values():
        assert d.names and all(M.is_metric_name(n) for n in d.names), d.short
        assert re.fullmatch(r"[a-z][a-z0-9_]*", d.short), d.short
    with pytest.raises(KeyError, match="unknown metric short name"):
        M.definition("no_such_metric")


def test_short_names_resolve_in_a_full_capture():
    """--set full (ncu 2025.3, sm_90) fills every short name but the FP32 instruction counts, which need
    --metrics (the roofline sections only collect them per cycle), and the L2 partition fabric's activity
    (a sub-unit of lts__throughput no section lists)."""
    raw = load(NCU_H100 / "gemm_ladder_raw.csv")[2]
    absent = [d.short for d in M.METRICS.values() if M.resolve(raw, d.short) is None]
    assert absent == ["ffma_thread_inst", "fadd_thread_inst", "fmul_thread_inst", "l2_fabric_pct"]


def test_missing_names_the_section_to_collect():
    basic = load(NCU_H100 / "gemm_ladder_basic.csv")[0]  # default sections only
    gaps = M.missing(basic, ["duration", "warp_cpi", "stall_long_scoreboard", "gld_sectors", "registers"])
    assert [(d.short, d.section) for d in gaps] == [
        ("warp_cpi", "WarpStateStats"), ("stall_long_scoreboard", "WarpStateStats"),
        ("gld_sectors", "MemoryWorkloadAnalysis_Tables")]
