"""Ladder orchestration with a fake bench: order of work, and the derived comparisons."""

from __future__ import annotations

import pytest
from fakes_bench import ARTICLE_MS, FakeBench, article_result, bad_check, record_dict, target

from gemmlab.bench.ladder import run_targets
from gemmlab.bench.results import RunRecord
from gemmlab.report import tables as table


def test_every_kernel_is_checked_first_then_all_are_timed_in_interleaved_rounds():
    launches: list[str] = []
    bench = FakeBench({"a": [2.0], "b": [1.0], "cublas": [0.5]})
    progress: list[tuple] = []
    rows, ref = run_targets(
        [target("a", launches=launches), target("b", launches=launches)],
        target("cublas", launches=launches),
        bench,
        progress=lambda *e: progress.append(e),
    )
    assert bench.calls == [
        ("check", "a"), ("check", "b"), ("check", "cublas"),  # nothing wrong is ever timed before all are checked
        ("time", "a"), ("time", "b"), ("time", "cublas"),  # round 1
        ("time", "cublas"), ("time", "b"), ("time", "a"),  # round 2, reversed: each side once early, once late
    ]  # fmt: skip
    assert launches == ["a", "b", "cublas"]  # the check ran the prepared kernel
    timed = ["first run", "estimate", "warm-up", "measure"]
    assert [p[3] for p in progress if p[0] == "a"] == ["compile", "check", *timed, *timed, "done"]
    assert {(p[1], p[2]) for p in progress if p[0] == "cublas"} == {(2, 3)}
    vs = rows[0].extra["vs_reference"]
    assert [r["kernel_first"] for r in vs["rounds"]] == [True, False]
    assert vs["ratio_median"] == pytest.approx(0.25) and vs["order_flip"] is False
    assert "vs_reference" not in ref.extra and ref.measurement.timing["rounds"] == 2


class PowerCappedBench(FakeBench):
    """A GPU whose clock falls with every timed run (a power cap settling in): each call is 5% slower."""

    def __init__(self, samples_ms: dict):
        super().__init__(samples_ms)
        self.slowdown = 1.0

    def time(self, target, run, on_phase):
        m, clocks = super().time(target, run, on_phase)
        m = type(m)(m.spec, tuple(x * self.slowdown for x in m.samples_s), m.timing)
        clocks = {**clocks, "sm_mhz_before": round(1980 / self.slowdown), "sm_mhz_after": round(1980 / self.slowdown)}
        self.slowdown *= 1.05
        return m, clocks


def test_a_verdict_that_flips_with_the_order_is_flagged():
    """A kernel 2% faster than cuBLAS at equal clocks: with each run 5% slower than the one before, it
    wins the round where it runs first and loses the one where it runs second. Timed only first (the
    old order), it would have looked 5% faster; interleaved, the flip is flagged, with the clocks."""
    rows, _ = run_targets([target("k")], target("cublas"), PowerCappedBench({"k": [0.98], "cublas": [1.0]}))
    vs = rows[0].extra["vs_reference"]
    assert [r["kernel_first"] for r in vs["rounds"]] == [True, False]
    assert vs["rounds"][0]["ratio"] > 1.0 > vs["rounds"][1]["ratio"]
    assert vs["order_flip"] is True
    assert vs["rounds"][0]["kernel_sm_mhz"][0] > vs["rounds"][0]["reference_sm_mhz"][0]
    # a kernel clearly faster (20%) wins both rounds: no flip
    rows, _ = run_targets([target("k")], target("cublas"), PowerCappedBench({"k": [0.8], "cublas": [1.0]}))
    assert rows[0].extra["vs_reference"]["order_flip"] is False
    assert rows[0].extra["vs_reference"]["ratio_min"] > 1.0


def test_article_numbers_are_reproduced():
    """The first article's table: speedups 4.09x, 0.91x, 1.48x and % of cuBLAS 2.5 / 10.2 / 13.8."""
    res = article_result()
    rows = {r.name: r for r in res.rows}
    step, pct, peak = res.speedup_vs_previous, res.pct_of_reference, res.pct_of_peak
    assert step(rows["bad"]) is None
    assert step(rows["coalesced"]) == pytest.approx(55.8695 / 13.6520)
    assert f"{step(rows['coalesced']):.2f}" == "4.09"
    assert f"{step(rows['tiled16']):.2f}" == "0.91"
    assert f"{step(rows['tiled16_unroll']):.2f}" == "1.48"
    assert [f"{pct(rows[n]):.1f}" for n in ("bad", "coalesced", "tiled16_unroll")] == ["2.5", "10.2", "13.8"]
    assert rows["tiled16_unroll"].measurement.gflops == pytest.approx(1692.962, abs=0.005)  # article: time rounded to 0.1 µs
    assert pct(rows["cublas"]) == 100.0 and step(rows["cublas"]) is None
    # % of peak: 1692.962 GFLOP/s of a 20 TFLOP/s peak
    assert peak(rows["tiled16_unroll"]) == pytest.approx(100 * rows["tiled16_unroll"].measurement.gflops * 1e9 / 20e12)
    assert f"{peak(rows['tiled16_unroll']):.2f}" == "8.46"


def test_no_peak_means_no_pct_of_peak():
    res = article_result(peak_flops=None)
    assert all(res.pct_of_peak(r) is None for r in res.rows)


def test_failed_check_is_kept_and_reported():
    res = article_result(checks={"tiled16": bad_check()})
    assert [r.name for r in res.failures] == ["tiled16"]
    d = record_dict(res)
    row = next(r for r in d["rows"] if r["kernel"] == "tiled16")
    assert row["correct"] is False and row["check"]["n_nonfinite"] == 3
    cells = table.ladder_rows(res)
    assert cells[2][-1] == "FAIL: 3 elements are NaN or inf, first at (0, 1)"
    assert cells[1][-1] == "ok"


def test_ladder_table_cells():
    res = article_result()
    cells = table.ladder_rows(res)
    assert [c[0] for c in cells] == ["bad", "coalesced", "tiled16", "tiled16_unroll", "cublas"]
    assert cells[0][1:5] == ["55.8695", "0.0%", "307.5", None]
    assert cells[1][4] == "4.09x"
    assert cells[3][5] == "13.8"
    assert cells[4][4] is None and cells[4][5] == "100.0"
    # tiled16_unroll's IQR: q1 10.1478, q3 10.1478 over median 10.1478 -> 0%; not noisy
    assert cells[3][2] == "0.0%"
    cap = table.caption(res)
    assert "M,N,K = 2048,2048,2048 FP32" in cap and "L2 flushed between runs" in cap
    assert "bad 1755→1980" in cap and "~ noisy: IQR/median > 5%" in cap


def test_noisy_rows_are_marked():
    bench = FakeBench({"n": [1.0, 1.0, 1.2, 1.4, 1.4]})
    rows, _ = run_targets([target("n")], None, bench)
    assert rows[0].measurement.noisy
    assert table.ladder_rows(RunRecord("bench", rows))[0][2] == "33.3% ~"  # IQR 0.4 ms over median 1.2 ms


def test_sweep_table_has_one_column_per_parameter():
    bench = FakeBench({"t8": [2.0], "t16u": [1.0]})
    rows, _ = run_targets([target("t8", TILE=8, UNROLL=0), target("t16u", TILE=16, UNROLL=1)], None, bench)
    cols, cells = table.sweep_table(RunRecord("sweep", rows))
    assert cols[:3] == ["Variant", "TILE", "UNROLL"]
    assert cells[0][:3] == ["t8", "8", "0"] and cells[1][:3] == ["t16u", "16", "1"]


def test_row_dict_keeps_raw_samples():
    d = record_dict(article_result())
    row = d["rows"][3]
    assert row["samples_s"] == [v * 1e-3 for v in ARTICLE_MS["tiled16_unroll"]] * 2  # both rounds' samples
    assert row["clocks"]["sm_mhz_before"] == 1755 and row["clocks"]["sm_mhz_after"] == 1980
    assert row["clocks"]["rounds"] == [{"source": "fake", "sm_mhz_before": 1755, "sm_mhz_after": 1980}] * 2
    assert row["spec"]["M"] == 2048 and row["info"]["summary"] == "tiled16_unroll kernel"


def test_what_was_launched_is_recorded():
    class Prepared:
        class rung:
            name = "double_buffered_128x128"
            params = {"BM": 128, "BN": 128}

        grid, block, smem = (16, 16, 1), (256, 1, 1), 32768

        def __call__(self, a, b, c, alpha, beta):
            pass

    from gemmlab.bench.ladder import Target
    from gemmlab.bench.spec import BenchSpec

    t = Target(BenchSpec("autotuned", 2048, 2048, 2048), Prepared)
    rows, _ = run_targets([t], None, FakeBench({"autotuned": [1.0]}))
    assert rows[0].to_dict()["launched"] == {
        "rung": "double_buffered_128x128",
        "params": {"BM": 128, "BN": 128},
        "grid": [16, 16, 1],
        "block": [256, 1, 1],
        "smem": 32768,
    }
    rows, _ = run_targets([target("plain")], None, FakeBench({"plain": [1.0]}))
    assert rows[0].launched == {}


def test_the_caption_says_the_rounds_and_names_an_order_dependent_kernel():
    rows, ref = run_targets([target("k"), target("fast")], target("cublas"),
                            PowerCappedBench({"k": [0.98], "fast": [0.5], "cublas": [1.0]}))
    meta = {"shape": {"M": 2048, "N": 2048, "K": 2048}, "options": {"timing": {}}, "dtype": "fp32"}
    cap = table.caption(RunRecord("ladder", tuple(rows) + (ref,), {}, meta))
    assert "in 2 interleaved rounds" in cap
    flagged = cap.split("ORDER-DEPENDENT")[1].split("JSON): ")[1].split(";")[0]
    assert flagged == "k"  # 2% faster at equal clocks: flips; 2x faster: does not
