"""The same capture through every export format: the diagnosis must agree, with lower confidence where
the raw counters are missing.

Each export of the H100 capture is read through `load()`; the details page and the live `ncu --csv`
output are also simulated from the raw records (keeping only the metrics those pages show, plus the
rule messages of the real details export), so the degraded-input behaviour does not depend on one
importer's choices.
"""

from __future__ import annotations

import csv
import re

from conftest import NCU_H100
from launch_factory import uncollected

from gemmlab.analysis.diagnose import diagnose_all
from gemmlab.analysis.evidence import Confidence
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.profile.load import load
from gemmlab.profile.records import RuleResult

# Header metrics of the sections a details page prints (from NVIDIA's .section files): SOL, launch
# statistics, occupancy, scheduler and warp-state headers, instruction count, memory hit rates.
DETAILS_VISIBLE = re.compile(
    r"^(sm__throughput\.avg\.pct|gpu__compute_memory_throughput\.avg\.pct|gpu__dram_throughput\.avg\.pct"
    r"|l1tex__throughput\.avg\.pct_of_peak_sustained_active|lts__throughput\.avg\.pct|gpu__time_duration\.sum"
    r"|sm__cycles_active\.avg$|launch__|sm__maximum_warps|sm__warps_active\.avg|smsp__issue_active\.avg\.per_cycle"
    r"|smsp__warps_eligible\.avg\.per_cycle|smsp__warps_active\.avg\.per_cycle|smsp__average_warp_latency_per_inst"
    r"|smsp__thread_inst_executed_per_inst|smsp__thread_inst_executed_pred_on_per_inst|smsp__inst_executed\.sum$"
    r"|sm__inst_executed\.avg\.per_cycle_active|l1tex__t_sector_hit_rate\.pct|lts__t_sector_hit_rate\.pct"
    r"|derived__local_spilling_requests|smsp__sass_average_branch_targets_threads_uniform)")
# What `ncu --csv APP` prints with the default sections: SOL, launch statistics, occupancy.
BASIC_VISIBLE = re.compile(
    r"^(sm__throughput\.avg\.pct|gpu__compute_memory_throughput\.avg\.pct|gpu__dram_throughput\.avg\.pct"
    r"|l1tex__throughput\.avg\.pct_of_peak_sustained_active|lts__throughput\.avg\.pct|gpu__time_duration\.sum"
    r"|sm__cycles_active\.avg$|launch__|sm__maximum_warps|sm__warps_active\.avg)")


def details_rules() -> dict[int, list[RuleResult]]:
    out: dict[int, list[RuleResult]] = {}
    with open(NCU_H100 / "gemm_ladder_details.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            if row["Rule Name"]:
                sp = row["Estimated Speedup"]
                out.setdefault(int(row["ID"]), []).append(RuleResult(
                    row["Rule Name"], row["Rule Type"], row["Rule Description"], row["Section Name"],
                    row["Estimated Speedup Type"], float(sp) if sp else None))
    return out


def simulated(visible: re.Pattern, with_rules: bool):
    launches = load(NCU_H100 / "gemm_ladder_raw.csv")
    rules = details_rules()
    for k in launches:
        k.metrics = {n: m for n, m in k.metrics.items() if visible.match(n)}
        k.rules = rules[k.id] if with_rules else [r for r in rules[k.id] if r.name == "SOLBottleneck"]
    return {d.name: d for d in diagnose_all(launches)}


def all_findings(d):
    return [d.primary] + d.findings


def check_details(dx):
    assert dx["gemm_uncoalesced"].primary.category == C.UNCOALESCED_GLOBAL_LOADS
    assert dx["gemm_uncoalesced"].primary.confidence == Confidence.MEDIUM
    bt = dx["gemm_blocktile2d"]
    assert bt.primary.category == C.SHARED_BANK_CONFLICTS
    assert bt.primary.confidence == Confidence.MEDIUM
    assert {C.UNCOALESCED_GLOBAL_STORES, C.OCCUPANCY_REGISTERS} <= {f.category for f in bt.findings}
    for d in dx.values():
        assert d.primary.confidence != Confidence.HIGH  # no sector, wavefront or pipe counters on this page
        assert d.missing_evidence and d.collect_purpose == "missing-evidence"
        # never a contradiction of the raw-page verdict: either the same category or "inconclusive"
    raw = {d.name: d for d in diagnose_all(load(NCU_H100 / "gemm_ladder_raw.csv"))}
    for name, d in dx.items():
        assert d.primary.category in (raw[name].primary.category, C.INCONCLUSIVE), name


def check_basic(dx):
    assert len(dx) == 5
    for d in dx.values():
        assert all(f.confidence != Confidence.HIGH for f in all_findings(d)), d.name
        assert d.primary.category == C.INCONCLUSIVE
        assert d.missing_evidence
        argv = d.collect_argv
        assert argv[argv.index("-k") + 1] == f"regex:^{d.name}$"
        assert argv[argv.index("--clock-control") + 1] == "none"
        assert argv[argv.index("--launch-skip") + 1] == "1"
        assert "-o" in argv and uncollected(argv, d.missing_evidence) == []
        assert d.collect_profile.startswith("gemmlab profile --kernel")  # the default collection covers them


def test_details_page_content():
    check_details(simulated(DETAILS_VISIBLE, with_rules=True))


def test_basic_live_csv_content():
    check_basic(simulated(BASIC_VISIBLE, with_rules=False))


def test_details_csv_file():
    check_details({d.name: d for d in diagnose_all(load(NCU_H100 / "gemm_ladder_details.csv"))})


def test_basic_csv_file():
    dx = {d.name: d for d in diagnose_all(load(NCU_H100 / "gemm_ladder_basic.csv"))}
    check_basic(dx)


def test_ncu_rep_file():
    (d,) = diagnose_all(load(NCU_H100 / "gemm_tiled16.ncu-rep"))
    assert d.name == "gemm_tiled16"
    assert d.primary.category == C.SHARED_MEMORY_THROUGHPUT
    assert d.primary.confidence == Confidence.HIGH
    assert d.ladder is not None and d.ladder.rung == "blocktile_1d"
