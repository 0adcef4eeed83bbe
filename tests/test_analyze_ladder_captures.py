"""gemmlab's top ladder rungs, real H100 captures (--set full, 2048³; README in the fixture folder).

These kernels run at 70–89% of cuBLAS FP32: the SM is the busiest unit, the FMA pipe carries it at
56–67% of peak, FFMA is 86–90% of the instructions, occupancy is 12.5–25%, and no single stall reason
reaches 30% of the CPI. The analyzer must say compute_bound below peak (not inconclusive), name what
keeps the pipe from peak, and point at the next rung from the stall that keeps warps ineligible.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab.analysis.diagnose import diagnose_all
from gemmlab.analysis.evidence import Confidence
from gemmlab.analysis.gemm import LADDER_END
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.profile.load import load
from gemmlab.profile.ncu_rep import session_command, split_ncu_command

H100 = Path(__file__).parent / "fixtures" / "ncu" / "h100"

# rung: (FMA pipe %, issue active, FFMA share, eligible warps, theoretical occupancy %, impact, next rung,
#        top ineligible stall)
EXPECTED = {
    "bank_conflict_free": (56.141795575829946, 0.63621165376908, 0.8852089228670417, 1.8196953641906162, 25.0,
                           0.3784725938704796, "double_buffered", "long_scoreboard 19.5%"),
    "warptiling": (56.62920805999104, 0.6272640962891856, 0.900052874810303, 1.1272537066360115, 12.5,
                   0.39817732827698216, "double_buffered", "long_scoreboard 17.8%"),
    "double_buffered": (60.7790559246284, 0.6779117964251801, 0.8897759132164362, 1.2711567977503164, 12.5,
                        0.34626643620803743, "autotuned", "dispatch_stall 25.9%"),
    "autotuned": (67.32879193258083, 0.7769444002647644, 0.8563998693237505, 1.734066452234917, 18.75,
                  0.2564453090158971, "autotuned", "dispatch_stall 10.9%"),
}


def capture(rung: str) -> Path:
    return H100 / f"ladder_{rung}_2048_full.ncu-rep"


@pytest.mark.parametrize("rung", list(EXPECTED))
def test_top_rungs_are_compute_bound_below_peak(rung):
    fma, issue, share, eligible, occ, impact, next_rung, top_stall = EXPECTED[rung]
    (d,) = diagnose_all(load(capture(rung)))
    p = d.primary
    assert (p.category, p.at_limit, p.confidence) == (C.COMPUTE_BOUND, False, Confidence.HIGH)
    assert p.impact == pytest.approx(impact, rel=1e-12)
    ev = {e.metric: e.value for e in p.evidence}
    assert ev["pipe_fma_pct"] == pytest.approx(fma, rel=1e-12)
    assert ev["issue_active"] == pytest.approx(issue, rel=1e-12)
    assert ev["ffma_inst_share"] == pytest.approx(share, rel=1e-12)
    assert ev["warps_eligible"] == pytest.approx(eligible, rel=1e-12)
    assert ev["occ_theoretical"] == occ
    # the pipe's level agrees with issue rate × FFMA share (one warp-FFMA per cycle per scheduler)
    assert abs(fma / 100 - issue * share) < 0.01
    assert f"{100 * (1 - issue):.1f}% of issue slots find no eligible warp" in p.summary
    assert f"top stalls {top_stall}" in p.summary
    assert "no single stall reason reaches 30%" in p.summary
    # not concluded: latency (no reason above 30% of the CPI), a limit reached, or a missing-data verdict
    cats = [f.category for f in d.findings]
    assert C.LATENCY_BOUND not in cats and C.INCONCLUSIVE not in cats
    assert C.OCCUPANCY_REGISTERS in cats  # the low occupancy stays visible, ranked below the primary
    assert d.missing_evidence == [] and d.collect_purpose == "re-measure"
    assert not any("Collect the missing evidence" in r for r in d.recommendations)
    assert d.ladder.rung == next_rung
    assert any(LADDER_END.lower() in r.lower() for r in d.recommendations)


@pytest.mark.parametrize("rung", list(EXPECTED))
def test_collect_command_uses_the_program_recorded_in_the_report(rung):
    (d,) = diagnose_all(load(capture(rung)))
    assert d.collect_argv[-9:] == ["/opt/torch/.venv/bin/python3", "-m", "gemmlab.profile.target", "--rung", rung,
                                   "--shape", "2048,2048,2048", "--warmup", "5"]
    assert "./app" not in d.collect_argv
    assert "recorded in the report" in d.collect_note
    # the same launch as the report: gemmlab profile skipped 5 warm-ups by kernel name; autotuned was
    # picked by its NVTX range instead (its kernel is chosen at run time), so no skip was recorded
    i = d.collect_argv.index("--launch-skip")
    if rung == "autotuned":
        assert d.collect_argv[i + 1] == "1" and "warm-up launch" in d.collect_note
    else:
        assert d.collect_argv[i + 1] == "5" and "--launch-skip 5 is the skip the report was profiled with" in d.collect_note


def test_an_explicit_program_keeps_the_default_skip():
    from gemmlab.analysis.diagnose import AnalyzeOptions

    (d,) = diagnose_all(load(capture("warptiling")), AnalyzeOptions(app_argv=("./my_app", "2048")))
    i = d.collect_argv.index("--launch-skip")
    assert d.collect_argv[i + 1] == "1" and d.collect_argv[-2:] == ["./my_app", "2048"]


def test_session_command_and_its_program():
    cmd = session_command(capture("autotuned"))
    assert cmd.endswith("ncu --set full --nvtx --nvtx-include gemmlab/ --launch-count 1 --clock-control none "
                        "--target-processes all -f -o /tmp/ex/1795292413/full_autotuned /opt/torch/.venv/bin/python3 "
                        "-m gemmlab.profile.target --rung autotuned --shape 2048,2048,2048 --warmup 5")
    ncu, app = split_ncu_command(cmd)
    assert ncu[-2:] == ["-o", "/tmp/ex/1795292413/full_autotuned"] and app[0] == "/opt/torch/.venv/bin/python3"
    _, app = split_ncu_command(session_command(H100 / "gemm_tiled16.ncu-rep"))
    assert app == ["/tmp/ladder", "gemm_tiled16"]
    assert split_ncu_command("python3 x.py") == ([], [])
    assert split_ncu_command("ncu --metrics=a,b -- ./app --x") == (["ncu", "--metrics=a,b", "--"], ["./app", "--x"])


def test_a_recorded_argument_keeps_its_quote_characters():
    # ncu records argv joined by spaces, unquoted: '{"config":"x"}' comes back whole, and the
    # printed command quotes it for the shell again
    from gemmlab.profile import command as cmd
    from gemmlab.profile.evidence_command import build
    from launch_factory import make_launch

    line = 'ncu --launch-skip 1 -o r python3 plan.py --policy {"config":"128x128pp"}'
    assert split_ncu_command(line)[1] == ["python3", "plan.py", "--policy", '{"config":"128x128pp"}']
    launch = make_launch("k")
    launch.command_line = line
    ev = build(launch, shorts=["pipe_tensor_pct"], sections=[], metrics=[], all_needed=True)
    assert cmd.render(ev.argv).endswith("""--policy '{"config":"128x128pp"}'""")
    # an argument that held a space cannot be told apart from two: where quotes hint at one, the
    # note says so; a plain line gets no such note
    assert "held a space" in ev.note
    launch.command_line = "ncu -o r python3 plan.py --shape 4096,4096,4096"
    assert "held a space" not in build(launch, shorts=["pipe_tensor_pct"], sections=[], metrics=[],
                                       all_needed=True).note
