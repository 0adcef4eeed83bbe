"""Reading numbers back out of Nsight Compute's rule messages (real text from the H100 details export)."""

from __future__ import annotations

import csv

import pytest
from conftest import NCU_H100

from gemmlab.analysis import ncu_rules
from gemmlab.profile.records import RuleResult


def rules_by_kernel() -> dict[str, list[RuleResult]]:
    out: dict[str, list[RuleResult]] = {}
    with open(NCU_H100 / "gemm_ladder_details.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if not row["Rule Name"]:
                continue
            sp = row["Estimated Speedup"]
            out.setdefault(row["ID"], []).append(RuleResult(
                row["Rule Name"], row["Rule Type"], row["Rule Description"], row["Section Name"],
                row["Estimated Speedup Type"], float(sp) if sp else None))
    return out


@pytest.fixture(scope="module")
def facts():
    return {k: ncu_rules.parse(v) for k, v in rules_by_kernel().items()}


def test_uncoalesced_kernel(facts):
    f = facts["0"]
    assert f.global_excess_count == 7_519_862_784
    assert f.global_total_sectors == 8_862_564_352
    assert f.global_excess_sectors.value == pytest.approx(7_519_862_784 / 8_862_564_352)
    assert f.global_excess_sectors.estimated_speedup == 61.79
    assert f.bytes_per_sector[("global", "load")].value == 4.0
    assert f.bytes_per_sector[("global", "store")].value == 4.0
    assert f.stalls["lg_throttle"].value == 399.3
    assert set(f.stalls) == {"lg_throttle"}


def test_coalesced_kernel(facts):
    f = facts["1"]
    assert f.bytes_per_sector[("global", "load")].value == 26.4
    assert ("global", "store") not in f.bytes_per_sector
    assert f.global_excess_sectors is None  # ncu's UncoalescedGlobalAccess did not fire
    assert not f.stalls


def test_unrolled_kernel_mio_stall(facts):
    assert facts["3"].stalls["mio_throttle"].value == 12.8


def test_blocktile2d(facts):
    f = facts["4"]
    assert f.shared_conflicts["load"].value == pytest.approx(0.50)
    assert f.shared_nway["load"] == 3.2
    assert f.shared_excess_wavefronts.value == pytest.approx(67_108_864 / 138_412_032)
    assert f.theoretical_occupancy.value == 25.0
    assert f.occupancy_limiters == ["registers"]
    assert f.bytes_per_sector[("global", "store")].value == 4.0
    assert ("global", "load") not in f.bytes_per_sector
    assert f.global_excess_sectors.value == pytest.approx(3_670_016 / 20_971_520)
    assert f.issue_every.value == 1.8


def test_markup_is_stripped():
    text = "Start by analyzing L1 in the @section:MemoryWorkloadAnalysis_Chart:Memory Workload Analysis@ section."
    assert ncu_rules.plain(text) == "Start by analyzing L1 in the Memory Workload Analysis section."


def test_unknown_and_malformed_rules_are_ignored():
    f = ncu_rules.parse([RuleResult("SomethingNew", "OPT", "whatever 12 things"),
                         RuleResult("CPIStall", "OPT", "On average, each warp spends lots of cycles")])
    assert not f.stalls and f.global_excess_sectors is None
    assert len(f.messages) == 2
