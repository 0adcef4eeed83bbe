"""The ladder table and "What actually mattered" ranking, on seed 01's timings and the H100 captures."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab.analysis.mattered import (
    RungRow,
    ladder_table,
    profiler_signal,
    what_mattered,
)
from gemmlab.bench.results import Row
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.stats import Measurement
from gemmlab.profile.load import load
from gemmlab.report.mattered import render_markdown

H100 = Path(__file__).parent / "fixtures" / "ncu" / "h100"
FLOP = 2 * 2048**3

# Seed 01's measured times (RTX 5060, 2048^3), in seconds.
SEED01 = [("bad", 55.8695e-3), ("coalesced", 13.6520e-3), ("tiled16", 15.0255e-3), ("tiled16_unroll", 10.1478e-3)]


def meas(name, t, q1_s=None, q3_s=None):
    """A measurement with median ``t`` and, when given, quartiles q1, q3 (five samples); else one sample."""
    samples = (t,) if q1_s is None else (q1_s, q1_s, t, q3_s, q3_s)
    return Measurement(BenchSpec(name, 2048, 2048, 2048), samples)


def rows(**extra):
    out = []
    for n, t in SEED01:
        e = dict(extra.get(n, {}))
        q1, q3 = e.pop("q1_s", None), e.pop("q3_s", None)
        out.append(RungRow(Row(meas(n, t, q1, q3)), **e))
    return out


def test_table_speedups_match_the_article():
    t = ladder_table(rows())
    assert [r.version for r in t] == ["bad", "coalesced", "tiled16", "tiled16_unroll"]
    assert t[0].speedup_vs_previous is None
    assert [round(r.speedup_vs_previous, 2) for r in t[1:]] == [4.09, 0.91, 1.48]
    assert round(t[0].gflops, 1) == 307.5  # the article's 307.5001 GFLOP/s


def test_ranking_puts_the_slower_change_last_and_flags_it():
    ch = what_mattered(rows())
    assert [(c.rank, c.optimization, round(c.speedup, 2), c.slower) for c in ch] == [
        (1, "bad -> coalesced", 4.09, False),
        (2, "tiled16 -> tiled16_unroll", 1.48, False),
        (3, "coalesced -> tiled16", 0.91, True),
    ]
    assert all(c.why == "not profiled" for c in ch)


def test_why_comes_from_the_diagnosis_change():
    extra = {"coalesced": {"bottleneck": "memory (L1/TEX)", "signal": "82% L1/TEX"},
             "tiled16": {"bottleneck": "latency: short_scoreboard", "signal": "87% SM"},
             "tiled16_unroll": {"bottleneck": "latency: short_scoreboard", "signal": "94% L1/TEX"}}
    ch = {c.after: c for c in what_mattered(rows(**extra))}
    assert ch["tiled16"].why == "memory (L1/TEX) -> latency: short_scoreboard (82% L1/TEX -> 87% SM)"
    assert ch["tiled16_unroll"].why == "same bottleneck: latency: short_scoreboard (87% SM -> 94% L1/TEX)"
    assert ch["coalesced"].why == "not profiled"  # "bad" has no diagnosis


def test_overlapping_iqrs_are_within_noise():
    extra = {"tiled16": {"q1_s": 14.9e-3, "q3_s": 15.2e-3}, "tiled16_unroll": {"q1_s": 10.1e-3, "q3_s": 10.2e-3},
             "coalesced": {"q1_s": 13.6e-3, "q3_s": 15.0e-3}}
    ch = {c.after: c for c in what_mattered(rows(**extra))}
    assert ch["tiled16"].within_noise and not ch["tiled16_unroll"].within_noise
    assert not ch["coalesced"].within_noise  # "bad" has no IQR: nothing is claimed


def test_markdown_has_both_tables():
    md = render_markdown(ladder_table(rows()), what_mattered(rows()))
    assert "| Version | Time | GFLOP/s | Speedup vs previous | Profiler signal | Main bottleneck |" in md
    assert "| coalesced | 13.6520 ms | 1258.4 | 4.09x | – | – |" in md
    assert "| 3 | coalesced -> tiled16 | 0.91x (slower) | not profiled |" in md


def test_bad_time_rejected():
    with pytest.raises(ValueError, match="samples must be finite positive seconds; x has"):
        RungRow(Row(meas("x", 0.0)))


def test_profiler_signal_on_the_h100_captures():
    got = {k.name: profiler_signal(k) for k in load(H100 / "gemm_ladder_raw.csv")}
    assert got == {
        "gemm_uncoalesced": "98.8% L1/TEX, 16.5 ld sectors/req (4 of 32 B used), 32.0 st sectors/req (4 of 32 B used)",
        "gemm_coalesced": "82.1% L1/TEX",
        "gemm_tiled16": "86.7% SM",
        "gemm_tiled16_unroll": "94.0% L1/TEX, mio_throttle 37% of stalls",
        "gemm_blocktile2d": "86.5% L1/TEX, 31.6 st sectors/req (4 of 32 B used), 50% smem ld conflicts",
    }


# --------------------------------------------------------------------------- ladder --profile assembly

def test_ladder_report_from_harness_rows_and_profiles(tmp_path):
    from types import SimpleNamespace

    from gemmlab.profile import collect
    from gemmlab.profile.targets import Target
    from gemmlab.workflows import ladder_profile, profile_run

    launches = {k.name: k for k in load(H100 / "gemm_ladder_raw.csv")}

    def prof(rung, kernel, category):
        diag = SimpleNamespace(primary=SimpleNamespace(category=category))
        res = profile_run.ProfileResult(Target(("p",), rung), collect.default_collection(), ["ncu"], tmp_path / "r",
                                    1.0, [], [launches[kernel]], [diag])
        return ladder_profile.RungProfile(rung, res)

    from gemmlab.bench.results import Row, RunRecord

    record = RunRecord("ladder", (Row(meas("coalesced", 2.5062e-3, 2.50e-3, 2.51e-3)), Row(meas("smem_tiled", 2.8698e-3)),
                                  Row(meas("cublas", 0.2e-3), reference=True)))
    profiles = [prof("coalesced", "gemm_coalesced", "l1_lsu_bound"),
                ladder_profile.RungProfile("smem_tiled", error="ncu failed: boom")]
    rep = ladder_profile.build_report(record, profiles)
    assert [r.version for r in rep["table"]] == ["coalesced", "smem_tiled"]  # the reference is not a rung
    assert rep["table"][0].signal == "82.1% L1/TEX" and rep["table"][0].bottleneck == "l1 lsu bound"
    assert rep["table"][1].bottleneck is None and round(rep["table"][1].speedup_vs_previous, 2) == 0.87
    c, = rep["mattered"]
    assert c.slower and c.why == "not profiled"
    assert "| 1 | coalesced -> smem_tiled | 0.87x (slower) | not profiled |" in rep["markdown"]
    assert profiles[1].to_dict()["error"] == "ncu failed: boom"


def test_fresh_dir_never_reuses_a_folder(tmp_path):
    from gemmlab.workflows import ladder_profile

    d1 = ladder_profile.fresh_dir(tmp_path, now=lambda: 0.0)
    d1.mkdir()
    d2 = ladder_profile.fresh_dir(tmp_path, now=lambda: 0.0)
    assert d1 != d2 and d2.name == d1.name + "-2"


def test_profile_ladder_result_with_a_fake_profiler(monkeypatch, tmp_path, capsys):
    import json
    from types import SimpleNamespace

    from gemmlab.bench.results import Row, RunRecord
    from gemmlab.commands import profiled as cmd
    from gemmlab.profile import collect
    from gemmlab.profile.targets import Target
    from gemmlab.workflows import ladder_profile, profile_run

    launches = {k.name: k for k in load(H100 / "gemm_ladder_raw.csv")}
    kernel_of = {"naive_uncoalesced": "gemm_uncoalesced", "coalesced": "gemm_coalesced"}
    seen = []

    def fake_profile_rungs(rungs, shape, *, ncu, full, on_rung):
        out = []
        for i, r in enumerate(rungs):
            on_rung(i, r)
            seen.append((r, shape, ncu, full))
            diag = SimpleNamespace(primary=SimpleNamespace(category="uncoalesced_global_loads"))
            res = profile_run.ProfileResult(Target(("p",), r), collect.default_collection(), ["ncu"], tmp_path / r, 1.0,
                                        [], [launches[kernel_of[r]]], [diag])
            out.append(ladder_profile.RungProfile(r, res))
        return out

    monkeypatch.setattr(ladder_profile, "profile_rungs", fake_profile_rungs)
    result = RunRecord("ladder", (Row(meas("naive_uncoalesced", 34.3e-3)), Row(meas("coalesced", 2.51e-3)),
                                  Row(meas("cublas", 0.2e-3), reference=True)),
                       meta={"shape": {"M": 2048, "N": 2048, "K": 2048}})
    rep = cmd.profile_ladder_record(result, "/opt/ncu")
    assert seen == [("naive_uncoalesced", (2048, 2048, 2048), "/opt/ncu", False),
                    ("coalesced", (2048, 2048, 2048), "/opt/ncu", False)]
    cmd.show_ladder_profile(rep, as_json=True)
    out = json.loads(capsys.readouterr().out)
    assert out["table"][0]["signal"] == "98.8% L1/TEX, 16.5 ld sectors/req (4 of 32 B used), 32.0 st sectors/req (4 of 32 B used)"
    assert out["table"][0]["bottleneck"] == "uncoalesced global loads"
    assert out["mattered"][0]["optimization"] == "naive_uncoalesced -> coalesced" and not out["mattered"][0]["slower"]


def test_a_kernel_that_counts_no_flops_shows_no_gflops():
    """A lesson variant that does no arithmetic (a copy, a strided read) has no GFLOP/s: none is
    made up from the spec's 2·M·N·K."""
    copy = Row(meas("strided", 1.0), extra={"flops": None})
    gemm = Row(meas("naive", 1.0))
    assert RungRow(copy).gflops is None and ladder_table([RungRow(copy)])[0].gflops is None
    assert RungRow(gemm).gflops == pytest.approx(2 * 2048**3 / 1.0 / 1e9)
