"""The shape map on a CPU: grids, option validation, classes, % of cuBLAS, goals, the orchestration
with a fake bench, the store and the command's CPU paths (SAMPLE DATA, not measured)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from fakes_bench import bad_check
from shape_samples import ShapeBench, _targets, fake_result

from gemmlab.errors import InputError
from gemmlab.shapes import grids
from gemmlab.shapes import shapemap as S
from gemmlab.shapes.measure import run_grid
from gemmlab.store import Store


# --- grids and options -----------------------------------------------------------------------
def test_default_grid_has_what_the_issue_asks_for():
    dims = {s.dims for s in grids.DEFAULT}
    for d in [(1024, 1024, 1024), (1023, 1023, 1023), (1025, 1025, 1025), (4096, 4096, 4096), (4095, 4095, 4095),
              (4097, 4097, 4097), (1, 4096, 4096), (4096, 1, 4096), (8, 4096, 4096), (16, 4096, 4096),
              (4096, 4096, 16), (1000, 3000, 77), (128, 128, 65536), (256, 256, 16384), (127, 127, 127)]:
        assert d in dims, d
    assert len(grids.MODELS) >= 4 and all(s.source for s in grids.DEFAULT)
    assert len(dims) == len(grids.DEFAULT)
    # every class of the map is present, and every shape is runnable (32-bit indexing)
    assert {S.shape_class(*d) for d in dims} >= {"square-aligned", "square-odd", "skinny-M", "skinny-N", "small-K",
                                                 "large-K-small-MN", "small"}
    grids.ShapesOptions(grids.DEFAULT)


def test_default_grid_stays_small_enough_for_a_short_run():
    """~3 minutes on an H100: no product over 0.2 TFLOP, and the check's memory under 2 GB per shape."""
    for s in grids.DEFAULT:
        assert 2 * s.M * s.N * s.K <= 0.2e12, s
        assert grids.check_bytes(s) < 2e9, s


@pytest.mark.parametrize("text,message", [
    ("", "--shapes expects"),
    ("1,2", "is not M,N,K"),
    ("1,2,x", "is not M,N,K"),
    ("0,5,5", "M=0"),
    ("5,-1,5", "N=-1"),
    ("70000,70000,1", "32-bit"),
    ("3,3,3;3,3,3", "listed twice"),
])
def test_impossible_shapes_are_one_line_errors(text, message):
    with pytest.raises(InputError, match=message) as e:
        grids.ShapesOptions(grids.parse_shapes(text))
    assert "\n" not in e.value.message


def test_options_are_validated_at_construction():
    with pytest.raises(InputError, match="grid 'nope'"):
        grids.resolve("nope", None)
    with pytest.raises(InputError, match="not both"):
        grids.resolve("quick", "1,2,3")
    with pytest.raises(InputError, match="unknown rung"):
        grids.ShapesOptions(grids.QUICK, rung="fastest")
    with pytest.raises(InputError, match="must not be above"):
        grids.Goals(target_pct=50, floor_pct=60)
    with pytest.raises(InputError, match="percentage"):
        grids.Goals(target_pct=float("nan"))
    with pytest.raises(InputError, match="no shapes"):
        grids.ShapesOptions(())
    assert grids.resolve(None, None) == ("default", grids.DEFAULT)
    name, shapes = grids.resolve(None, "4095,4095,4095; 1,4096,4096")
    assert name == "custom" and [s.dims for s in shapes] == [(4095, 4095, 4095), (1, 4096, 4096)]


# --- classes and percentages -----------------------------------------------------------------
@pytest.mark.parametrize("dims,cls", [
    ((4096, 4096, 4096), "square-aligned"), ((4095, 4095, 4095), "square-odd"), ((1025, 1025, 1025), "square-odd"),
    ((1, 4096, 4096), "skinny-M"), ((16, 4096, 4096), "skinny-M"), ((17, 4096, 4096), "large-K-small-MN"),
    ((4096, 1, 4096), "skinny-N"), ((4096, 4096, 16), "small-K"), ((1000, 3000, 77), "small-K"),
    ((128, 128, 65536), "large-K-small-MN"), ((256, 256, 16384), "large-K-small-MN"), ((127, 127, 127), "small"),
    ((1, 1, 4096), "small"), ((4096, 3072, 768), "rect-aligned"), ((1024, 50257, 768), "rect-odd"),
])
def test_shape_classes(dims, cls):
    assert S.shape_class(*dims) == cls
    assert cls in S.CLASSES and cls in S.CLASS_HELP


def test_percent_of_cublas_is_a_ratio_of_medians():
    from report_samples import kernel_row

    from gemmlab.bench.results import pct_of

    cublas = kernel_row("cublas", 64, 64, 64, median_s=1e-3)
    assert pct_of(cublas, kernel_row("r", 64, 64, 64, median_s=2e-3)) == pytest.approx(50.0)
    assert pct_of(cublas, kernel_row("r", 64, 64, 64, median_s=0.5e-3)) == pytest.approx(200.0)
    with pytest.raises(ValueError):
        kernel_row("r", 64, 64, 64, median_s=0.0)
    assert S.min_bytes(1, 4096, 4096) == 4 * (4096 + 4096 * 4096 + 4096)


# 16384^3 BF16 on an H100 at its power cap, ms (docs/results/tc-ktail-2026-11-27, the H100 map):
# the dispatch rung and cuBLAS, two interleaved rounds of ten (rung first, then cuBLAS first)
RUNG_ROUNDS = ((13.659, 12.954, 12.836, 11.86, 11.785, 11.964, 11.963, 11.962, 11.966, 11.921),
               (13.165, 13.173, 13.042, 12.786, 12.79, 12.783, 12.934, 12.811, 12.356, 12.612))
CUBLAS_ROUNDS = ((11.956, 11.585, 11.586, 11.869, 12.076, 12.08, 12.085, 12.076, 12.172, 12.203),
                 (11.893, 11.699, 11.698, 12.595, 12.743, 12.741, 12.744, 12.742, 12.499, 12.199))


def test_percent_of_cublas_is_the_median_of_the_interleaved_rounds_ratios():
    """Each round's ratio compares medians timed back to back; pooling both rounds' samples lets the
    median of each side fall in a different clock state (here 94.5% against rounds of 100.9 and
    98.0)."""
    from dataclasses import replace

    from report_samples import kernel_row

    from gemmlab.bench import interleave
    from gemmlab.bench.results import pct_of

    def parts(rounds):
        return [(kernel_row("x", 16384, 16384, 16384, samples_s=[t / 1e3 for t in r]).measurement, {})
                for r in rounds]

    rung = kernel_row("r", 16384, 16384, 16384, samples_s=[t / 1e3 for r in RUNG_ROUNDS for t in r])
    cublas = kernel_row("cublas", 16384, 16384, 16384,
                        samples_s=[t / 1e3 for r in CUBLAS_ROUNDS for t in r])
    assert pct_of(cublas, rung) == pytest.approx(94.5, abs=0.1)  # pooled: no rounds recorded
    rounds = interleave.compare(parts(RUNG_ROUNDS), parts(CUBLAS_ROUNDS), [True, False])
    assert [round(r["ratio"], 3) for r in rounds["rounds"]] == [1.009, 0.98]
    paired = replace(rung, extra={"vs_reference": rounds})
    assert pct_of(cublas, paired) == pytest.approx(99.5, abs=0.1)
    assert pct_of(None, paired) is None
    wrong = kernel_row("cublas", 16384, 16384, 16384, median_s=12e-3, correct=False)
    assert pct_of(wrong, paired) is None  # a reference that failed its check is no yardstick


# --- the orchestration with a fake bench -----------------------------------------------------
def test_every_shape_is_checked_then_timed_with_cublas_in_interleaved_rounds():
    shapes = grids.QUICK[:2]
    ms = {(k, s.dims): 1.0 for s in shapes for k in ("autotuned", "cublas")}
    bench = ShapeBench(ms)
    progress = []
    rows = run_grid(shapes, _targets(), bench, lambda *e: progress.append(e))
    assert [(c[0], c[1]) for c in bench.calls] == [("check", "autotuned"), ("check", "cublas"),
                                                   ("time", "autotuned"), ("time", "cublas"),
                                                   ("time", "cublas"), ("time", "autotuned")] * 2
    assert [c[2] for c in bench.calls] == [shapes[0].dims] * 6 + [shapes[1].dims] * 6
    assert [r.name for r in rows] == ["autotuned", "cublas"] * 2
    assert rows[0].extra["grid_shape"]["M"] == 256 and S.shape_class(*rows[0].shape) == "small"
    assert {p[2] for p in progress} == {4} and max(p[1] for p in progress) == 3
    assert progress[0][0].startswith("256x256x256 autotuned")


def test_what_ran_is_recorded_per_shape():
    res = fake_result({})
    smap = S.from_record(res)
    by = {p.shape.dims: p for p in smap.points}
    aligned, odd = by[(256, 256, 256)], by[(255, 257, 129)]
    assert aligned.ran == "autotuned_128x128x16_w64x64n4_s3" and aligned.backend == "nvcc"
    assert odd.ran.endswith("_scalar") and odd.tile == (128, 128) and odd.grid == (3, 2, 1)
    assert S.ran_text(odd) == "autotuned_128x128x16_w64x64n4_s3_scalar (nvcc)"
    assert S.ran_text(odd, with_grid=True).endswith("(nvcc), grid 3×2×1")


def test_map_percentages_worst_and_misses():
    pcts = {(256, 256, 256): 100.0, (127, 127, 127): 40.0, (255, 257, 129): 70.0, (300, 200, 7): 86.0,
            (64, 64, 8192): 20.0, (1, 512, 512): 55.0, (512, 1, 512): 62.0}
    res = fake_result(pcts, copy=None)
    smap = S.from_record(res)
    got = {p.shape.dims: p.pct for p in smap.points}
    for d, pct in pcts.items():
        assert got[d] == pytest.approx(pct)
    assert [p.shape.dims for p in smap.worst(3)] == [(64, 64, 8192), (127, 127, 127), (1, 512, 512)]
    assert [p.shape.name for p in smap.below(85)] == ["64x64x8192", "127x127x127", "1x512x512", "512x1x512", "255x257x129"]
    assert [p.shape.name for p in smap.below(50)] == ["64x64x8192", "127x127x127"]
    verdict = {p.shape.dims: p.verdict for p in smap.points}
    assert verdict[(256, 256, 256)] == "meets" and verdict[(300, 200, 7)] == "meets"
    assert verdict[(255, 257, 129)] == "below target" and verdict[(127, 127, 127)] == "below floor"
    assert verdict[(1, 512, 512)] == "below target"  # skinny: 55% < 60% and no copy ceiling to meet
    assert verdict[(512, 1, 512)] == "meets"  # skinny: 62% >= 60%
    d = smap.to_dict()
    assert d["below_floor"] == ["64x64x8192", "127x127x127"] and d["min_pct"] == pytest.approx(20.0)
    assert res.meta["map"]["below_floor"] == d["below_floor"]
    summary = {c["class"]: c for c in d["classes"]}
    assert summary["small"]["n"] == 2 and summary["small"]["min_pct"] == pytest.approx(40.0)
    lines = S.summary_lines(smap)
    assert lines[0].startswith("worst: 64x64x8192 20.0%")
    assert any(line.startswith("2 of 7 shapes below the 50% floor") for line in lines)


def test_skinny_shapes_are_judged_against_the_copy_ceiling_too():
    # 1x512x512 at 55% of cuBLAS, but the copy ceiling is tiny: its bandwidth is far above 80% of it
    res = fake_result({(1, 512, 512): 55.0}, copy=1e6)
    p = next(p for p in S.from_record(res).points if p.shape.dims == (1, 512, 512))
    assert p.pct_of_copy > 80 and p.verdict == "meets"
    assert p.bandwidth == pytest.approx(p.bytes / p.rung_median_s)
    assert "GB/s" not in S.bw_text(p) and "%" in S.bw_text(p) and "cuBLAS" in S.bw_text(p)
    square = next(p for p in S.from_record(res).points if p.shape.dims == (256, 256, 256))
    assert S.bw_text(square) == "" and square.to_dict()["pct_of_copy"] is None


def test_a_wrong_result_is_wrong_whatever_its_speed():
    res = fake_result({(127, 127, 127): 300.0}, checks={("autotuned", (127, 127, 127)): bad_check()})
    smap = S.from_record(res)
    p = next(p for p in smap.points if p.shape.dims == (127, 127, 127))
    assert p.verdict == "WRONG" and [q.shape.name for q in smap.wrong()] == ["127x127x127"]
    assert any("WRONG" in line for line in S.summary_lines(smap))
    # a wrong cuBLAS leaves nothing to compare with
    res = fake_result({}, checks={("cublas", (256, 256, 256)): bad_check()})
    p = next(p for p in S.from_record(res).points if p.shape.dims == (256, 256, 256))
    assert p.pct is None and p.verdict == "no reference"


def test_custom_goals_are_kept_with_the_run():
    res = fake_result({(256, 256, 256): 90.0}, goals=grids.Goals(target_pct=95, floor_pct=60))
    smap = S.from_record(res)
    assert smap.goals.target_pct == 95
    assert next(p for p in smap.points if p.shape.dims == (256, 256, 256)).verdict == "below target"


def test_table_rows_have_every_column():
    res = fake_result({})
    rows = S.table_rows(S.from_record(res))
    assert len(rows) == len(grids.QUICK) and all(len(r) == len(S.COLUMNS) for r in rows)
    assert rows[0][0] == "256x256x256" and rows[0][6] == "90.0%"


# --- the store and the command ---------------------------------------------------------------
def _store(db, res):
    from shape_samples import store

    return store(db, res)


def test_a_stored_run_maps_exactly_as_it_was_measured(tmp_path):
    res = fake_result({(127, 127, 127): 47.0})
    db = tmp_path / "runs.sqlite"
    rid = _store(db, res)
    with Store(db, create=False) as s:
        back = s.load_record(rid)
        summary = s.list_runs()[0]
    assert back.kind == "shapes" and back.meta["dtype"] == "fp32" and summary.kind == "shapes"
    assert S.from_record(back).to_dict() == S.from_record(res).to_dict()
    from gemmlab.workflows.kinds import as_dict

    rows = as_dict(back)["rows"]  # the JSON keeps each row's shape class, as gemmlab 0.1 wrote it
    assert {r["shape_class"] for r in rows if r["grid_shape"]["M"] == 127} == {"small"}
    with Store(db) as s:  # append-only, as every run
        with pytest.raises(Exception, match="append-only"):
            s._db.execute("DELETE FROM runs")


def test_list_needs_no_gpu(capsys):
    code, out, err = run_cli(capsys, "shapes", "--preset", "quick", "--list", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["grid"] == "quick" and len(d["shapes"]) == len(grids.QUICK)
    assert {s["class"] for s in d["shapes"]} >= {"small", "skinny-M", "skinny-N", "small-K", "large-K-small-MN"}
    code, out, err = run_cli(capsys, "shapes", "--list")
    assert code == 0 and "4097×4097×4097" in out and "CLIP" in out


@pytest.mark.parametrize("argv,message", [
    (["--shapes", "0,4,4"], "M=0"),
    (["--shapes", "65536,65536,2"], "32-bit"),
    (["--preset", "huge"], "unknown shape grid"),
    (["--preset", "quick", "--shapes", "1,1,1"], "not both"),
    (["--floor", "90"], "must not be above"),
    (["--rep-ms", "-1"], "--rep-ms"),
])
def test_bad_options_fail_in_one_line_before_the_gpu(capsys, argv, message):
    code, out, err = run_cli(capsys, "shapes", *argv)
    assert code == 2 and message in err and err.count("\n") == 1


def test_out_is_never_overwritten_without_force(capsys, tmp_path):
    f = tmp_path / "map.json"
    f.write_text("{}")
    code, out, err = run_cli(capsys, "shapes", "--preset", "quick", "--out", str(f))
    assert code == 2 and "--force" in err and f.read_text() == "{}"


def test_without_a_gpu_the_command_says_so(capsys, tmp_path):
    from conftest import gpu_status

    if gpu_status()[0]:
        pytest.skip("a GPU is present")
    code, out, err = run_cli(capsys, "shapes", "--preset", "quick", "--no-store")
    assert code == 3 and "shapes" in err and "no CUDA GPU" in err


def test_show_prints_the_map_and_the_misses(capsys):
    from gemmlab.commands.show import show

    show(fake_result({(127, 127, 127): 40.0}))
    out = capsys.readouterr().out
    assert "Shape map: autotuned vs cuBLAS FP32 on NVIDIA H100 80GB HBM3" in out
    assert "127x127x127" in out and "below floor" in out and "copy ceiling 3,000 GB/s" in out
    assert "1 of 7 shapes below the 50% floor: 127x127x127" in out


def test_the_real_checker_catches_an_edge_bug_at_odd_shapes_only():
    """run_grid with the harness's real Checker on NumPy: a 'kernel' that skips C's last column at
    shapes whose N is not a multiple of 4 passes at 256³ and is WRONG at 255×257×129."""
    import numpy as np

    from gemmlab.bench.check import Checker
    from gemmlab.bench.ladder import Target
    from gemmlab.bench.spec import BenchSpec

    def kernel(a, b, c, alpha, beta):
        out = (alpha * (a.astype(np.float64) @ b.astype(np.float64))).astype(np.float32)
        n = c.shape[1] - (1 if c.shape[1] % 4 else 0)
        c[:, :n] = out[:, :n]

    def cublas(a, b, c, alpha, beta):
        c[...] = (alpha * (a.astype(np.float64) @ b.astype(np.float64))).astype(np.float32)

    class NumpyBench(ShapeBench):
        checker = Checker(xp=np, seed=3)

        def check(self, target, run):
            s = target.spec
            return self.checker.check(run, s.M, s.N, s.K, s.alpha, s.beta)

    shapes = (grids.QUICK[0], grids.QUICK[-1])
    ms = {(k, s.dims): 1.0 for s in shapes for k in ("edgy", "cublas")}

    def targets_for(s):
        return (Target(BenchSpec("edgy", *s.dims), lambda: kernel),
                Target(BenchSpec("cublas", *s.dims), lambda: cublas))

    rows = run_grid(shapes, targets_for, NumpyBench(ms))
    smap = S.build(rows)
    verdicts = {p.shape.dims: p.verdict for p in smap.points}
    assert verdicts == {(256, 256, 256): "meets", (255, 257, 129): "WRONG"}
    bad = next(r for r in rows if r.name == "edgy" and not r.correct)
    assert "poison" in bad.check.reason and tuple(bad.check.details["first_unwritten"]) == (0, 256)


def test_the_rung_target_is_the_ladders_and_records_what_prepare_resolved(monkeypatch):
    import types

    from gemmlab.bench.spec import BenchSpec
    from gemmlab.kernels import registry
    from gemmlab.runtime import launch
    from gemmlab.shapes.measure import rung_target

    cand = registry.autotune_candidates()[0]
    monkeypatch.setattr(launch, "prepare", lambda rung, M, N, K: types.SimpleNamespace(backend="nvrtc", requested=cand))
    s = grids.GridShape(255, 257, 129, "odd", "test")
    t = rung_target("autotuned", s)
    assert t.spec == BenchSpec("autotuned", 255, 257, 129, params=dict(registry.get("autotuned").params))
    assert t.info["family"] == registry.get("autotuned").family and "backend" not in t.info
    t.prepare()
    assert t.info["backend"] == "nvrtc" and t.info["resolved"] == cand.name
