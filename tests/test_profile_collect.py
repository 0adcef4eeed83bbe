"""The default metric collection: complete groups, real metric names, nothing twice."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from gemmlab.errors import InputError
from gemmlab.profile import collect
from gemmlab.profile.metrics import METRICS

RAW = Path(__file__).parent / "fixtures" / "ncu" / "h100" / "gemm_ladder_raw.csv"

# ncu metrics that --set full does not collect on sm_90, so the H100 capture cannot vouch for them
# directly: the roofline's FP32 instruction counters (the capture's derived__smsp__sass_thread_inst_
# executed_op_ffma_pred_on_x2 is built on the first, so it exists there).
NOT_IN_FULL_SET = {
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    # the sub-unit of lts__throughput that --set full does not list (the fabric between the L2 partitions);
    # the H100 collected it under ncu's breakdown: prefix (docs/results/sol-breakdown-h100-2026-11-25)
    "lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed",
}


def h100_metric_names() -> set[str]:
    with RAW.open(newline="") as f:
        return set(next(csv.reader(f)))


def test_every_default_metric_exists_on_h100_or_is_a_known_extra():
    have = h100_metric_names()
    missing = {m for m in collect.default_collection().metrics if m not in have}
    assert missing == NOT_IN_FULL_SET


def test_metrics_list_holds_only_plain_counter_names():
    # derived__ metrics are defined inside section files and memory_*/sass__* are source-level metrics:
    # neither can be named in --metrics, so they must come through a section group.
    for m in collect.default_collection().metrics:
        assert not m.startswith(("derived__", "memory_", "sass__", "group:", "breakdown:", "regex:")), m


def test_every_table_metric_is_collected_or_excluded_with_a_reason():
    in_groups = {s for g in collect.GROUPS for s in g.shorts}
    assert in_groups | set(collect.NOT_COLLECTED) == set(METRICS)
    assert not in_groups & set(collect.NOT_COLLECTED)


def test_no_metric_twice_and_one_lean_section():
    c = collect.default_collection()
    section_shorts = {s for g in collect.GROUPS if g.section for s in g.shorts}
    listed = {s for g in collect.GROUPS if g.section for s in g.listed}  # also named so every export prints them
    assert listed == {s for s in section_shorts if s.startswith("pcsamp_")}
    assert len(c.metrics) == len(set(c.metrics)) == \
        len(METRICS) - len(collect.NOT_COLLECTED) - len(section_shorts) + len(listed) == 91 + 19
    assert c.sections == ("SourceCounters",) and c.set_name is None and c.groups == collect.GROUP_NAMES
    assert collect.collected_names(c) >= {"memory_l2_theoretical_sectors_global", "memory_l1_wavefronts_shared_ideal"}


def test_launch_group_costs_no_pass_and_is_the_only_free_one():
    assert [g.name for g in collect.GROUPS if g.free] == ["launch"]
    assert [g.name for g in collect.GROUPS if g.section] == ["source_counters"]


def test_chosen_groups_keep_whole_groups():
    c = collect.default_collection(["coalescing", "speed_of_light"])
    assert c.groups == ("coalescing", "speed_of_light")
    assert c.metrics[:4] == ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                             "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                             "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
    assert len(c.metrics) == 8 + 25 and c.sections == () and c.name == "groups:coalescing,speed_of_light"


def test_full_is_the_full_set():
    assert collect.full_collection().to_dict() == {"name": "full", "set": "full", "sections": [], "groups": [],
                                                   "metrics": []}


def test_uncovered_names_what_a_collection_misses():
    c = collect.default_collection(["speed_of_light"])
    assert collect.uncovered(["sm_pct", "dram_pct", "stall_barrier"], c) == ["stall_barrier"]
    c = collect.default_collection(["source_counters"])
    assert all(m.startswith("smsp__pcsamp_warps_issue_stalled_") for m in c.metrics) and len(c.metrics) == 19
    assert c.sections == ("SourceCounters",)
    assert collect.uncovered(["gl_sectors_ideal", "gld_sectors"], c) == ["gld_sectors"]
    assert collect.uncovered(["stall_barrier"], collect.full_collection()) == []


def test_parse_groups_validates():
    assert collect.parse_groups("coalescing, occupancy") == ["coalescing", "occupancy"]
    assert collect.parse_groups("") is None
    with pytest.raises(InputError, match=r"groups 'sol': unknown metric group; expected some of speed_of_light"):
        collect.parse_groups("sol")


def test_requested_names_are_table_names():
    assert collect.request_name("global_atom_inst") == "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
    assert collect.request_name("sm_pct") == "sm__throughput.avg.pct_of_peak_sustained_elapsed"
    for short in collect.REQUEST_INSTEAD:
        assert collect.request_name(short) in METRICS[short].names


def test_base_name_for_query_metrics():
    assert collect.base_name("sm__throughput.avg.pct_of_peak_sustained_elapsed") == "sm__throughput"
    assert collect.base_name("sm__maximum_warps_per_active_cycle_pct") == "sm__maximum_warps_per_active_cycle_pct"


# --------------------------------------------------------------------------- same diagnosis as --set full
# The H100 capture is --set full. Keeping only the metrics the default collection asks for (and none
# of ncu's rule results, which only sections produce) must leave the analyzer's primary diagnosis of
# every kernel unchanged: the CPU-side check of the "same primary diagnosis as --set full".

LADDER_FULL = sorted((RAW.parent).glob("ladder_*_2048_full.ncu-rep"))


@pytest.mark.parametrize("capture", [RAW] + LADDER_FULL, ids=lambda p: p.name)
def test_default_collection_keeps_every_primary_diagnosis_of_the_full_capture(capture):
    import dataclasses

    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.profile.load import load

    full = load(capture)
    keep = collect.collected_names(collect.default_collection())
    projected = [dataclasses.replace(k, metrics={n: m for n, m in k.metrics.items() if n in keep}, rules=[])
                 for k in full]
    assert all(len(p.metrics) < len(k.metrics) for p, k in zip(projected, full))
    got = [(d.name, d.primary.category.value, d.primary.confidence.value) for d in diagnose_all(projected)]
    want = [(d.name, d.primary.category.value, d.primary.confidence.value) for d in diagnose_all(full)]
    assert got == want  # same primary, at the same confidence
    assert all(d.missing_evidence == [] for d in diagnose_all(projected))  # and nothing asked for


def test_the_four_ladder_captures_are_there():
    assert [p.name for p in LADDER_FULL] == [f"ladder_{r}_2048_full.ncu-rep" for r in
                                             ("autotuned", "bank_conflict_free", "double_buffered", "warptiling")]


def test_default_collection_covers_everything_the_analyzer_declares_it_needs():
    from gemmlab.analysis.diagnose import FAMILIES, SOL_NEEDS

    needs = set(SOL_NEEDS)
    for family in FAMILIES:
        needs |= set(family.NEEDS)
    assert collect.uncovered(sorted(needs), collect.default_collection()) == []
