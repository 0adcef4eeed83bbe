"""The SM side of a well-tuned kernel, on synthetic records: when a math pipe carrying a busy SM is
compute_bound (at or below peak), when a stall reason explains the gap instead (latency_bound), and
what must not be concluded (a pipe that does not carry the SM, IMAD on the FMA pipe, missing stalls).
"""

from __future__ import annotations

import pytest
from launch_factory import QUIET_STALLS, make_launch

from gemmlab.analysis.diagnose import diagnose
from gemmlab.analysis.evidence import Confidence
from gemmlab.analysis.gemm import LADDER_END
from gemmlab.analysis.vocabulary import Category as C

# Speed of Light of an SM-busy kernel below NVIDIA's high-throughput level, memory quiet
SM_BUSY = dict(sm_pct=65.0, mem_pct=38.0, l1tex_pct=38.0, l2_pct=12.0, dram_pct=2.5, duration=1e6)
# 2 blocks of 128 threads per SM: 12.5% occupancy (the register limit)
LOW_OCC = dict(block_size=128, grid_size=256, sm_count=132, waves=0.97, registers=231, occ_theoretical=12.5,
               occ_achieved=12.3, occ_limit_registers=2, occ_limit_shared_mem=4, occ_limit_warps=16,
               occ_limit_blocks=32, smem_static=0, smem_dynamic=49152, smem_driver=1024)
# Shared-memory GEMM traffic well inside the FMA balance; coalesced and conflict-free
MEMORY = dict(gld_sectors=1.7e7, gld_requests=1.05e6, gst_sectors=1.3e5, gst_requests=3.3e4, gld_bytes_per_sector=32.0,
              gst_bytes_per_sector=32.0, gl_sectors_theoretical=1.71e7, gl_sectors_ideal=1.71e7, smem_ld_inst=1.26e7,
              smem_st_inst=0.0, smem_wavefronts_theoretical=5.0e7, smem_wavefronts_ideal=5.0e7, local_ld_sectors=0.0,
              local_st_sectors=0.0, l1_wavefronts_pct=37.0, l1_shared_wavefronts_pct=36.7, global_atom_inst=0.0,
              global_red_inst=0.0, thread_inst_per_inst=32.0, smem_ld_wavefronts=5.0e7, smem_st_wavefronts=0.0,
              smem_ld_conflicts=0.0, smem_st_conflicts=0.0, pipe_lsu_pct=12.8, gld_hit_rate=0.5)


def math(pipe_fma: float, ffma_share: float = 0.89, inst: float = 3e8) -> dict:
    return dict(pipe_fma_pct=pipe_fma, pipe_alu_pct=6.0, pipe_fp64_pct=0.0, pipe_xu_pct=0.0, pipe_tensor_pct=0.0,
                inst_executed=inst, ffma_thread_inst=ffma_share * inst * 32, ffma_rate=ffma_share * inst * 32 / 1e6,
                sm_cycles_elapsed=1e6)


def sched(issue: float, cpi: float = 2.9, active: float = 2.0, eligible: float = 1.3, **reasons: float) -> dict:
    out = dict(QUIET_STALLS, stall_selected=1.0, warp_cpi=cpi, issue_active=issue, warps_active=active,
               warps_eligible=eligible)
    out.update({f"stall_{k}": v for k, v in reasons.items()})
    return out


def launch(name="gemm_kernel", sol=SM_BUSY, **parts):
    return make_launch(name, **sol, **LOW_OCC, **MEMORY, **parts)


def cats(d):
    return [d.primary.category] + [f.category for f in d.findings]


def test_saturated_fma_pipe_is_compute_bound_at_limit():
    sol = dict(SM_BUSY, sm_pct=93.0)
    d = diagnose(launch(sol=sol, **math(91.0, ffma_share=0.95), **sched(0.96, cpi=2.1, not_selected=0.9)))
    assert d.primary.category == C.COMPUTE_BOUND and d.primary.at_limit
    assert d.primary.confidence == Confidence.HIGH
    assert C.LATENCY_BOUND not in cats(d)  # the SM is at high throughput: stalls are not the story
    assert d.ladder.rung == "autotuned" and LADDER_END in d.ladder.action


def test_fma_pipe_carrying_a_busy_sm_below_peak_is_compute_bound_not_at_limit():
    # the double_buffered picture: no stall reason above 30% of the CPI
    d = diagnose(launch(**math(60.8), **sched(0.68, not_selected=0.88, dispatch_stall=0.75, wait=0.12)))
    p = d.primary
    assert (p.category, p.at_limit, p.confidence) == (C.COMPUTE_BOUND, False, Confidence.HIGH)
    assert p.impact == pytest.approx(0.35)  # min(FMA idle 39.2%, SM headroom 35%)
    assert "32.0% of issue slots find no eligible warp" in p.summary
    assert "dispatch_stall 25.9%" in p.summary and "no single stall reason reaches 30%" in p.summary
    ev = {e.metric: e.value for e in p.evidence}
    assert ev["ffma_inst_share"] == pytest.approx(0.89)
    assert ev["issue_active"] == 0.68 and ev["warps_eligible"] == 1.3
    assert C.LATENCY_BOUND not in cats(d)
    assert d.missing_evidence == [] and d.collect_purpose == "re-measure"
    # an occupancy of 12.5% is named as what leaves too few warps to hide the stalls
    assert any("theoretical occupancy is 12.5%" in r for r in d.recommendations)
    assert d.ladder.rung == "autotuned"  # dispatch stalls: tune the configuration at the last rung
    assert any(LADDER_END.lower() in r.lower() for r in d.recommendations)


def test_dominant_stall_on_a_busy_sm_is_latency_bound_and_names_the_pipe_secondary():
    # same pipe level, but one latency reason takes 45% of the CPI: it explains the idle issue slots
    d = diagnose(launch(**math(60.0), **sched(0.62, cpi=4.0, long_scoreboard=1.8, not_selected=0.5)))
    assert d.primary.category == C.LATENCY_BOUND
    assert "45.0%" in d.primary.summary and "no eligible warp in 38.0% of cycles" in d.primary.summary
    comp = next(f for f in d.findings if f.category == C.COMPUTE_BOUND)
    assert not comp.at_limit and "long_scoreboard alone is above 30%" in comp.summary
    assert d.ladder.rung == "double_buffered"


def test_busy_sm_with_a_quiet_fma_pipe_and_long_scoreboard_is_latency_bound_not_compute_bound():
    d = diagnose(launch(**math(30.0, ffma_share=0.5), **sched(0.65, cpi=4.0, long_scoreboard=1.6)))
    assert d.primary.category == C.LATENCY_BOUND
    assert C.COMPUTE_BOUND not in cats(d)  # the FMA pipe (30%) does not carry the SM (65%)


def test_dispatch_stalls_above_a_third_of_the_cpi_lead_with_low_issue_activity():
    d = diagnose(launch(**math(55.0), **sched(0.6, cpi=3.0, dispatch_stall=1.2, not_selected=0.4)))
    assert d.primary.category == C.LATENCY_BOUND
    assert "dispatch conflicts 40.0%" in d.primary.summary


def test_math_pipe_throttle_on_a_busy_sm_is_not_latency():
    d = diagnose(launch(**math(62.0), **sched(0.68, cpi=3.0, math_pipe_throttle=1.2)))
    assert d.primary.category == C.COMPUTE_BOUND
    assert C.LATENCY_BOUND not in cats(d)


def test_fma_pipe_busy_with_imad_is_not_called_high_confidence_math():
    d = diagnose(launch(**math(60.0, ffma_share=0.2), **sched(0.7, not_selected=0.9, wait=0.5)))
    assert d.primary.category == C.COMPUTE_BOUND and d.primary.confidence == Confidence.MEDIUM
    assert "only 20.0% of instructions are FFMA" in d.primary.summary


def test_without_stall_reasons_compute_bound_is_medium_and_asks_for_them():
    parts = {k: v for k, v in sched(0.68).items() if not k.startswith("stall_") and k != "warp_cpi"}
    d = diagnose(launch(**math(60.8), **parts))
    assert d.primary.category == C.COMPUTE_BOUND and d.primary.confidence == Confidence.MEDIUM
    assert "stall reasons are missing" in d.primary.summary
    assert {"warp_cpi", "stall_long_scoreboard"} <= {m.metric for m in d.missing_evidence}
    assert d.collect_purpose == "missing-evidence"


def test_memory_bound_kernel_is_not_compute_bound():
    sol = dict(sm_pct=40.0, mem_pct=90.0, l1tex_pct=30.0, l2_pct=40.0, dram_pct=90.0, duration=1e6)
    d = diagnose(launch(sol=sol, **math(35.0), **sched(0.4, cpi=8.0, long_scoreboard=2.0)))
    assert C.COMPUTE_BOUND not in cats(d)


def test_complete_data_without_a_cause_is_inconclusive_but_never_says_nothing_is_missing():
    # the SM is busy with something the counters do not break out (the FMA pipe far below it, no stall
    # above 30%, no overhead): inconclusive, and the per-instruction view is what to collect
    d = diagnose(launch(**math(35.0, ffma_share=0.6), **sched(0.65, not_selected=0.9, wait=0.6)))
    assert d.primary.category == C.INCONCLUSIVE and d.primary.confidence == Confidence.LOW
    assert d.missing_evidence and d.collect_purpose == "missing-evidence"
    assert "--section" in d.collect_argv and "SourceCounters" in d.collect_argv
    assert "none found a cause above 5%" in d.primary.summary


def test_no_fixture_is_inconclusive_without_evidence_to_collect():
    from pathlib import Path

    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.profile.load import load

    h100 = Path(__file__).parent / "fixtures" / "ncu" / "h100"
    seen = 0
    for f in sorted(h100.glob("*.csv")) + sorted(h100.glob("*.ncu-rep")):
        for d in diagnose_all(load(f)):
            if d.primary.category == C.INCONCLUSIVE:
                seen += 1
                assert d.missing_evidence and d.collect_purpose == "missing-evidence", (f.name, d.name)
            else:
                assert not any("Collect the missing evidence" in r for r in d.recommendations), (f.name, d.name)
    assert seen >= 5  # the details page and the default-sections output stay inconclusive
