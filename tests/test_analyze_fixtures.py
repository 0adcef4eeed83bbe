"""The analyzer on the real H100 captures (tests/fixtures/ncu/h100): verdicts, evidence values, commands.

The expected verdicts are the checks from the issue; evidence values are asserted against the numbers
in the fixture files themselves (and against M = N = K = 2048, the problem the kernels solved).
"""

from __future__ import annotations

import math

import pytest

from gemmlab.analysis.diagnose import diagnose_all
from gemmlab.analysis.evidence import Confidence
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.profile.load import load

RAW_FILES = ["gemm_ladder_raw.csv", "gemm_ladder_raw_base.csv"]
FFMA_WARP_INST = 2048 ** 3 / 32  # one FMA per (m, n, k), counted per warp


@pytest.fixture(scope="module", params=RAW_FILES)
def dx(request):
    from conftest import NCU_H100

    return {d.name: d for d in diagnose_all(load(NCU_H100 / request.param))}


def ev(finding, metric):
    hits = [e for e in finding.evidence if e.metric == metric]
    assert hits, f"{metric} not in evidence of {finding.category}: {[e.metric for e in finding.evidence]}"
    return hits[0]


def categories(d):
    return [d.primary.category] + [f.category for f in d.findings]


def test_every_kernel_diagnosed_separately(dx):
    assert list(dx) == ["gemm_uncoalesced", "gemm_coalesced", "gemm_tiled16", "gemm_tiled16_unroll",
                        "gemm_blocktile2d"]
    assert [d.kernel_id for d in dx.values()] == [0, 1, 2, 3, 4]
    for d in dx.values():
        assert d.primary.category != C.INCONCLUSIVE
        assert d.missing_evidence == []  # --set full: every metric the rules use is there
        assert d.collect_purpose == "re-measure"


def test_uncoalesced(dx):
    d = dx["gemm_uncoalesced"]
    p = d.primary
    assert p.category == C.UNCOALESCED_GLOBAL_LOADS
    assert p.confidence == Confidence.HIGH
    assert p.at_limit is False
    # 8,858,370,048 sectors / 536,870,912 requests: half the loads (A, strided) touch 32 sectors, half (B,
    # broadcast) touch 1
    assert ev(p, "gld_sectors_per_request").value == pytest.approx(16.5, rel=1e-12)
    assert ev(p, "gld_bytes_per_sector").value == 4.0
    assert ev(p, "gl_sectors_theoretical").value == 8_862_564_352
    assert ev(p, "gl_sectors_ideal").value == 1_342_701_568
    # store excess 4,189,994 × (1 − 4/32) is removed from the load excess
    expect = (8_862_564_352 - 1_342_701_568 - 4_189_994 * 0.875) / 8_858_370_048
    assert ev(p, "gld_excess_fraction").value == pytest.approx(expect, rel=1e-12)
    assert 0.8 < p.impact < 0.9
    assert d.ladder is not None and d.ladder.rung == "coalesced"
    assert "threadIdx.x" in d.ladder.action
    assert C.UNCOALESCED_GLOBAL_STORES in categories(d)  # C is written with one sector per thread too


def test_coalesced(dx):
    d = dx["gemm_coalesced"]
    p = d.primary
    assert p.category == C.L1_LSU_BOUND
    # L1/LSU at 82%: 2 points above the 80% line, so another capture could read it below: medium, and why
    assert p.confidence == Confidence.MEDIUM and "within 5 points of the 80% line" in p.summary
    assert p.at_limit is True  # L1/LSU at 82% with coalesced traffic: only reuse helps
    # broadcast A + coalesced B: 2.5 sectors per request, 26.4 bytes per sector — not uncoalesced
    assert C.UNCOALESCED_GLOBAL_LOADS not in categories(d)
    assert ev(p, "ffma_warp_inst").value == pytest.approx(FFMA_WARP_INST, rel=1e-5)
    assert ev(p, "global_requests_per_ffma").value == pytest.approx((536_870_912 + 131_072) / FFMA_WARP_INST,
                                                                   rel=1e-5)
    assert d.ladder.rung == "smem_tiled"
    assert any("tile through shared memory" in r for r in d.recommendations)


@pytest.mark.parametrize("name", ["gemm_tiled16", "gemm_tiled16_unroll"])
def test_tiled(dx, name):
    d = dx[name]
    p = d.primary
    assert p.category in (C.L1_LSU_BOUND, C.SHARED_MEMORY_THROUGHPUT)
    assert p.confidence == Confidence.HIGH
    assert C.SHARED_BANK_CONFLICTS not in categories(d)  # 0 excess wavefronts in the source counters
    assert C.UNCOALESCED_GLOBAL_LOADS not in categories(d)
    assert d.ladder.rung in ("blocktile_1d", "blocktile_2d")
    assert any("several outputs per thread in registers" in r for r in d.recommendations)
    ratio = ev(p, "smem_wavefronts_per_ffma").value
    assert ratio > 1.0  # one output per thread: every FFMA pulls its own operands from shared memory


def test_tiled16_not_unrolled_shows_instruction_overhead(dx):
    """The seed article's lesson: unrolling the tiled loop mattered. The counters show why."""
    d = dx["gemm_tiled16"]
    over = [f for f in d.findings if f.category == C.INSTRUCTION_OVERHEAD]
    assert over, categories(d)
    assert ev(over[0], "inst_per_ffma").value == pytest.approx(2_621_571_072 / FFMA_WARP_INST, rel=1e-5)
    assert any("#pragma unroll" in r for r in d.recommendations)
    assert C.INSTRUCTION_OVERHEAD not in categories(dx["gemm_tiled16_unroll"])


def test_unrolled_mio_stall_supports_shared_throughput(dx):
    p = dx["gemm_tiled16_unroll"].primary
    mio = ev(p, "stall_mio_throttle")
    assert mio.value == pytest.approx(12.8, abs=0.005)
    assert mio.unit == "cycle"


def test_blocktile2d(dx):
    d = dx["gemm_blocktile2d"]
    cats = categories(d)
    assert C.UNCOALESCED_GLOBAL_STORES in cats
    assert C.OCCUPANCY_REGISTERS in cats
    assert C.UNCOALESCED_GLOBAL_LOADS not in cats  # loads are coalesced: all the excess is in the stores
    stores = [f for f in [d.primary] + d.findings if f.category == C.UNCOALESCED_GLOBAL_STORES][0]
    assert ev(stores, "gst_sectors_per_request").value == pytest.approx(4_137_344 / 131_072, rel=1e-12)
    assert ev(stores, "gst_sectors_per_request").value > 31
    occ = [f for f in d.findings if f.category == C.OCCUPANCY_REGISTERS][0]
    assert ev(occ, "occ_theoretical").value == 25.0
    assert ev(occ, "occ_limit_registers").value == 2.0
    # gemmlab's occupancy calculator: 65536 / (3 blocks × 8 warps) → 2560 per warp → 80 per thread
    assert any("from 96 to 80" in r and "__launch_bounds__(256, 3)" in r for r in occ.recommendations)
    # the largest problem: half the shared wavefronts are bank conflicts (memory_l1_wavefronts_shared vs ideal)
    assert d.primary.category == C.SHARED_BANK_CONFLICTS
    assert ev(d.primary, "smem_excess_wavefronts_fraction").value == pytest.approx(
        1 - 71_303_168 / 138_412_032, rel=1e-12)
    assert d.ladder.rung == "bank_conflict_free"


def test_impacts_are_fractions_and_sorted(dx):
    for d in dx.values():
        impacts = [f.impact for f in d.findings]
        assert impacts == sorted(impacts, reverse=True)
        for f in [d.primary] + d.findings:
            assert 0.0 <= f.impact <= 1.0 and not math.isnan(f.impact)
            assert f.impact_basis
            assert f.evidence


def test_remeasure_command_targets_the_kernel(dx):
    d = dx["gemm_tiled16"]
    argv = d.collect_argv
    assert argv[0] == "ncu"
    assert argv[argv.index("-k") + 1] == "regex:^gemm_tiled16$"
    assert argv[argv.index("--launch-skip") + 1] == "1"
    assert argv[argv.index("--launch-count") + 1] == "1"
    assert argv[argv.index("--clock-control") + 1] == "none"
    assert argv[argv.index("-o") + 1] == "gemm_tiled16_evidence"
    assert argv[-1] == "./ladder"  # the process name the export gives
    assert "'regex:^gemm_tiled16$'" in d.collect_command  # quoted so the shell leaves $ alone
