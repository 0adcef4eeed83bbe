""".ncu-rep through NVIDIA's ncu_report (the PyPI package here; the one shipping with ncu if present).

gemm_tiled16.ncu-rep is a separate --set full capture of gemm_tiled16 alone, so against the raw
page it is compared only on what does not vary between runs: launch geometry, registers, shared
memory, occupancy limits, instruction and sector counts.
"""

from __future__ import annotations

import sys

import pytest

from conftest import NCU_H100
from gemmlab.errors import ToolMissing
from gemmlab.profile import metrics as M
from gemmlab.profile import ncu_rep
from gemmlab.profile.load import load

REP = NCU_H100 / "gemm_tiled16.ncu-rep"


def _ncu_report_missing() -> str:
    try:
        ncu_rep.ncu_report_module()
    except ToolMissing as e:
        return str(e)
    return ""


needs_ncu_report = pytest.mark.skipif(bool(_ncu_report_missing()), reason=_ncu_report_missing() or "-")


@pytest.fixture(scope="module")
def rep():
    (launch,) = load(REP, metrics="all")
    return launch


@needs_ncu_report
def test_default_decode_keeps_the_metrics_gemmlab_reads(rep):
    (lean,) = load(REP)
    assert 300 < len(lean.metrics) < len(rep.metrics)
    assert all(lean.metrics[n] == m or m.value != m.value for n, m in rep.metrics.items() if n in lean.metrics)
    assert (lean.name, lean.block, lean.grid, lean.cc, lean.rules) == (rep.name, rep.block, rep.grid, rep.cc, rep.rules)


@needs_ncu_report
def test_identity(rep):
    assert (rep.id, rep.name, rep.format, rep.device, rep.cc, rep.arch) == (
        0, "gemm_tiled16", "ncu-rep", "0", "9.0", "sm_90")
    assert rep.demangled == "gemm_tiled16(const float *, const float *, float *, int, int, int)"
    assert (rep.block, rep.grid) == ((16, 16, 1), (128, 128, 1))
    assert rep.source == str(REP)
    assert len(rep.metrics) == 2230


@needs_ncu_report
def test_values_read_exactly_in_base_units(rep):
    assert rep.metrics["gpu__time_duration.sum"].value == 2_869_792
    assert rep.metrics["gpu__time_duration.sum"].unit == "ns"
    assert M.value(rep, "replay_passes") == 38
    assert M.value(rep, "occ_achieved") == 97.7019724938364
    assert M.value(rep, "waves") == 15.515151515151516  # the raw page rounds this to 15.52
    assert M.value(rep, "stall_long_scoreboard") == 2.2706373739350214
    assert rep.metrics["launch__func_cache_config"].value == "CachePreferNone"
    assert rep.metrics["device__attribute_display_name"].value == "NVIDIA H100 80GB HBM3"
    # metrics ncu_report holds without a value (no PC samples) are missing, as "no data" is in CSV
    assert "sass__inst_executed_register_spilling_mem_local" not in rep.metrics


# Not gst_sectors: 524,312 in the report, 524,276 on the raw page (store sectors vary run to run).
STABLE = ["registers", "block_size", "grid_size", "sm_count", "smem_static", "smem_dynamic", "smem_driver",
          "smem_config", "occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks",
          "occ_limit_barriers", "occ_theoretical", "gld_sectors", "gld_requests",
          "gst_requests", "smem_ld_inst", "smem_st_inst", "inst_executed", "replay_passes"]


@needs_ncu_report
def test_stable_values_match_the_raw_page_of_the_ladder_capture(rep):
    raw = load(NCU_H100 / "gemm_ladder_raw.csv", kernel="^gemm_tiled16$")[0]
    for short in STABLE:
        assert M.value(rep, short) == M.value(raw, short), short
    # same names, same base units (ncu_report gives idc__requests.sum a unit the CSV leaves out)
    assert set(raw.metrics) <= set(rep.metrics)
    assert [n for n, m in raw.metrics.items() if m.unit != rep.metrics[n].unit] == ["idc__requests.sum"]


@needs_ncu_report
def test_rules_in_the_words_of_the_csv_pages(rep):
    assert [(r.name, r.type, r.section, r.speedup_type) for r in rep.rules] == [
        ("SOLBottleneck", "INF", "SpeedOfLight", ""),
        ("HighPipeUtilization", "INF", "ComputeWorkloadAnalysis", ""),
        ("MemoryL2Compression", "OPT", "MemoryWorkloadAnalysis_Chart", "global"),
        ("SOLFPRoofline", "INF", "SpeedOfLight_RooflineChart", ""),
    ]
    assert rep.rules[2].estimated_speedup == pytest.approx(0.34887326811687813)
    assert rep.rules[0].description.endswith("Start by analyzing workloads in the Compute Workload Analysis section.")
    assert ("See the Profiling Guide (https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#roofline) "
            "for more details") in rep.rules[3].description
    assert not any("@" in r.description for r in rep.rules)


def test_plain_text():
    assert ncu_rep.plain_text("see @url:the Guide:https://x.y/z#a@ now") == "see the Guide (https://x.y/z#a) now"
    assert ncu_rep.plain_text("in the @section:SourceCounters:Source Counters@ section") == (
        "in the Source Counters section")
    assert ncu_rep.plain_text("no markup, 5 @ 3") == "no markup, 5 @ 3"


def test_missing_ncu_report_is_a_tool_missing_line(monkeypatch):
    monkeypatch.setenv("GEMMLAB_NCU_REP_ISOLATE", "0")  # the module lookup of the reading process itself
    monkeypatch.setattr(ncu_rep, "module_dirs", lambda: [])
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import ncu_report → ImportError
    ncu_rep.ncu_report_module.cache_clear()
    try:
        with pytest.raises(ToolMissing) as e:
            load(REP)
    finally:
        ncu_rep.ncu_report_module.cache_clear()
    assert e.value.code == 3
    assert "pip install ncu-report" in str(e.value)
    assert "\n" not in str(e.value)


def test_module_shipping_with_ncu_is_preferred(monkeypatch, tmp_path):
    shipped = tmp_path / "extras" / "python"
    shipped.mkdir(parents=True)
    (shipped / "ncu_report.py").write_text("SHIPPED_WITH_NCU = True\n")
    monkeypatch.setenv("GEMMLAB_NCU_PYTHON", str(shipped))
    monkeypatch.delitem(sys.modules, "ncu_report", raising=False)
    ncu_rep.ncu_report_module.cache_clear()
    try:
        mod = ncu_rep.ncu_report_module()
        assert getattr(mod, "SHIPPED_WITH_NCU", False)
        assert str(shipped) not in sys.path  # the path was only borrowed for the import
    finally:
        sys.modules.pop("ncu_report", None)
        ncu_rep.ncu_report_module.cache_clear()
    assert ncu_rep.module_dirs()[0] == shipped
