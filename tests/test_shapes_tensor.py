"""The BF16/FP8 shape map on a CPU (issue #20): the tensor grids, dtype-aware options, classes and
bytes, the goals of issue #20, the geometric mean, shapes without a reference, the heat map's rows
and the command's CPU paths (SAMPLE DATA, not measured)."""

from __future__ import annotations

import json
import math

import pytest
from conftest import run_cli
from shape_samples import fake_result

from gemmlab.errors import InputError
from gemmlab.shapes import grids
from gemmlab.shapes import shapemap as S


def test_tensor_grid_has_what_the_issue_asks_for():
    dims = {s.dims for s in grids.TENSOR}
    assert len(dims) == len(grids.TENSOR) and all(s.source for s in grids.TENSOR)
    for n in (512, 1024, 2048, 4096, 8192, 16384):  # squares and their ±1 neighbours
        assert {(n - 1,) * 3, (n,) * 3, (n + 1,) * 3} <= dims
    for m in (1, 16, 128, 2048, 8192):  # every projection at every token count
        assert (m, 6144, 4096) in dims and (m, 4096, 14336) in dims and (m, 8192, 28672) in dims
    assert len(grids.TENSOR_MODELS) == 55 and len(grids.TENSOR) == 18 + 55 - 1  # 8192^3 counted once
    grids.ShapesOptions(grids.TENSOR, grid_name="tensor", dtype="bf16")
    grids.ShapesOptions(grids.TENSOR, grid_name="tensor", dtype="fp8")
    assert grids.resolve(None, None, "bf16")[0] == "tensor" and grids.resolve(None, None)[0] == "default"


def test_batch_grid_lies_between_the_issue_grids_token_counts():
    # serving batches off the issue's grid: 24-112 tokens, each a distinct shape the tensor grid
    # lacks, both dtypes take it (fp8: K a multiple of 16), and M <= 64 is judged as decode
    dims = [s.dims for s in grids.TENSOR_BATCHES]
    assert len(set(dims)) == len(dims) == 5 * len(grids.BATCH_TOKENS)
    assert all(16 < m < 128 for m, _, _ in dims) and not set(dims) & {s.dims for s in grids.TENSOR}
    assert (72, 4096, 14336) in dims and (96, 8192, 28672) in dims
    for dtype in ("bf16", "fp8"):
        grids.ShapesOptions(grids.TENSOR_BATCHES, grid_name="tensor-batches", dtype=dtype)
    assert grids.grid("tensor-batches") is grids.TENSOR_BATCHES
    assert S.shape_class(40, 4096, 4096, "bf16") == "skinny-M"
    assert S.shape_class(72, 4096, 4096, "bf16") == "rect-aligned"


def test_options_pick_the_dtypes_dispatcher_and_refuse_a_rung_of_another_dtype():
    assert grids.ShapesOptions(grids.TENSOR_QUICK, dtype="bf16").rung == "dispatch_bf16"
    assert grids.ShapesOptions(grids.TENSOR_QUICK, dtype="fp8").rung == "dispatch_fp8"
    assert grids.ShapesOptions(grids.QUICK).rung == "dispatch"
    with pytest.raises(InputError, match="takes fp32 A and B; the map is --dtype bf16"):
        grids.ShapesOptions(grids.TENSOR_QUICK, dtype="bf16", rung="dispatch")
    with pytest.raises(InputError, match="fp16"):
        grids.ShapesOptions(grids.TENSOR_QUICK, dtype="fp16")


@pytest.mark.parametrize("dims,dtype,cls", [
    ((64, 4096, 4096), "bf16", "skinny-M"),  # decode: M <= 64 on the tensor ladders
    ((64, 8192, 4096), "fp32", "rect-aligned"),  # FP32 skinny stops at 16
    ((64, 8192, 4096), "bf16", "skinny-M"),
    ((128, 4096, 4096), "bf16", "rect-aligned"),
    ((2048, 4096, 4092), "bf16", "rect-odd"),  # K % 8 != 0: TMA's 16-byte pitch broken
    ((2048, 4092, 4096), "fp8", "rect-aligned"),  # fp8 B is N x K: N does not set a pitch
    ((2048, 4096, 4088), "fp8", "rect-odd"),  # K % 16 != 0
    ((4095, 4095, 4095), "bf16", "square-odd"),
])
def test_tensor_classes(dims, dtype, cls):
    assert S.shape_class(*dims, dtype) == cls


def test_bytes_count_each_dtypes_elements():
    assert S.min_bytes(1, 4096, 4096, "bf16") == 2 * (4096 + 4096 * 4096) + 2 * 4096
    assert S.min_bytes(1, 4096, 4096, "fp8") == (4096 + 4096 * 4096) + 2 * 4096
    assert S.min_bytes(1, 4096, 4096) == 4 * (4096 + 4096 * 4096 + 4096)


def test_issue_20_goals_and_the_decode_bar():
    g = grids.Goals.for_dtype("bf16")
    assert (g.target_pct, g.skinny_pct, g.skinny_copy_pct) == (95.0, 100.0, 85.0)
    assert grids.Goals.for_dtype("fp32") == grids.Goals()
    assert grids.Goals.for_dtype("fp8", target_pct=90).target_pct == 90
    # a decode shape at 96% of cuBLAS misses unless it reaches 85% of the copy ceiling
    decode = (1, 4096, 4096)
    slow_copy = fake_result({decode: 96.0}, dtype="bf16", copy=1e15)
    fast_copy = fake_result({decode: 96.0}, dtype="bf16", copy=1e9)
    v = {p.shape.dims: p.verdict for p in S.from_record(slow_copy).points}
    assert v[decode] == "below target"
    v = {p.shape.dims: p.verdict for p in S.from_record(fast_copy).points}
    assert v[decode] == "meets"
    # M = 128 is not decode: 95% of cuBLAS
    v = {p.shape.dims: p.verdict for p in S.from_record(fake_result({(128, 4096, 4096): 94.0}, dtype="bf16")).points}
    assert v[(128, 4096, 4096)] == "below target"


def test_geometric_mean_over_the_grid():
    pcts = {(512, 512, 512): 50.0, (511, 511, 511): 200.0}
    m = S.from_record(fake_result(pcts, dtype="bf16"))
    others = [p.pct for p in m.points if p.shape.dims not in pcts]
    want = math.exp((math.log(50) + math.log(200) + sum(math.log(x) for x in others)) / len(m.points))
    assert m.geomean_pct() == pytest.approx(want, rel=1e-6)
    assert m.to_dict()["geomean_pct"] == pytest.approx(want, rel=1e-6)
    assert m.reference == "cuBLAS BF16 at its best"
    assert any("geometric mean over 6 shapes" in line for line in S.summary_lines(m))


def test_a_shape_without_a_reference_is_measured_alone_and_says_so():
    odd = (511, 511, 511)
    rec = fake_result({}, dtype="fp8", no_ref={odd})
    m = S.from_record(rec)
    p = next(p for p in m.points if p.shape.dims == odd)
    assert p.cublas_row is None and p.pct is None and p.verdict == "no reference"
    assert p.rung_row.info["no_reference"].startswith("no cuBLASLt FP8")
    assert m.geomean_pct() is not None and m.reference == "cuBLASLt FP8 at its best"


def test_heat_map_rows_are_weight_shapes_with_token_counts_across():
    from gemmlab.report.shape_plots import cells, shape_map_figure

    shapes = tuple(s for s in grids.TENSOR if s.N in (6144, 4096) and s.K == 4096) + grids.TENSOR_SQUARES[:3]
    m = S.from_record(fake_result({}, shapes=shapes, dtype="bf16", grid="custom"))
    names, rows = cells(m)
    by = dict(zip(names, rows))
    qkv = by["LLaMA-3-8B QKV: N×K 6144×4096"]
    assert [p.shape.M for p in qkv] == [1, 16, 128, 2048, 8192]
    assert [p.shape.M for p in by["squares near 512"]] == [511, 512, 513]
    fig = shape_map_figure(m)
    assert "cuBLAS BF16 at its best" in fig.axes[0].get_title()


def test_page_names_the_reference_and_the_decode_bar():
    from gemmlab.report.shape_html import render

    page = render(fake_result({}, dtype="fp8"), with_plots=False)
    assert "cuBLASLt FP8 at its best" in page and "decode shapes (M or N ≤ 64)" in page


def test_list_of_the_tensor_grid_needs_no_gpu(capsys):
    code, out, err = run_cli(capsys, "shapes", "--dtype", "bf16", "--list", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["grid"] == "tensor" and d["dtype"] == "bf16" and len(d["shapes"]) == len(grids.TENSOR)
    assert {s["class"] for s in d["shapes"] if s["M"] <= 16} == {"skinny-M"}


def test_list_shows_the_plan_each_shape_takes_and_why_without_a_gpu(capsys):
    code, out, err = run_cli(capsys, "shapes", "--dtype", "bf16", "--shapes",
                             "16,4096,4096;1,4096,4096;2048,4096,4096;4095,4095,4095", "--list",
                             "--sms", "132", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["plan_sms"] == 132 and "--sms" in d["plan_for"]
    plans = {(s["M"], s["N"], s["K"]): s["plan"] for s in d["shapes"]}
    assert plans[(16, 4096, 4096)]["name"] == "swap_m16_k1_s16"
    assert plans[(1, 4096, 4096)]["name"] == "swap_m8_k1_s16"
    assert plans[(2048, 4096, 4096)]["name"] == "128x256c1"
    assert plans[(4095, 4095, 4095)]["name"].startswith("repitch A+B")
    assert "swapped-operand wgmma decode kernel" in plans[(16, 4096, 4096)]["why"]
    # another GPU of the spec table: fewer SMs and less bandwidth, other plans (25 strips shared
    # by 2 CTAs pull 50 x 43 GB/s, 0.8 of the H100 PCIe's 2 TB/s: 2 CTAs a strip, a deeper ring)
    code, out, err = run_cli(capsys, "shapes", "--dtype", "bf16", "--shapes", "16,1600,6400", "--list",
                             "--gpu", "h100-pcie", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["plan_sms"] == 114 and d["shapes"][0]["plan"]["name"] == "swap_m16_k2_s16"
    # the table carries the plan column
    code, out, err = run_cli(capsys, "shapes", "--dtype", "fp8", "--shapes", "1,4096,4096", "--list")
    assert code == 0 and "dispatch_fp8 plan" in out and "gemv_m8" in out, err


@pytest.mark.parametrize("argv,message", [
    (["--list", "--sms", "0"], "--sms 0"),
    (["--list", "--gpu", "nope"], "--gpu 'nope'"),
    (["--list", "--sms", "132", "--gpu", "h100"], "not both"),
    (["--sms", "132"], "for --list"),
    (["--list", "--sms", "132", "--rung", "persistent_bf16"], "shows no plan"),
])
def test_bad_plan_options_are_one_line_input_errors(capsys, argv, message):
    code, out, err = run_cli(capsys, "shapes", "--dtype", "bf16", *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err


@pytest.mark.parametrize("argv,message", [
    (["--dtype", "fp16"], "--dtype"),
    (["--dtype", "bf16", "--rung", "dispatch"], "takes fp32 A and B"),
    (["--dtype", "fp8", "--rung", "persistent_bf16"], "takes bf16 A and B"),
])
def test_bad_tensor_options_fail_in_one_line_before_the_gpu(capsys, argv, message):
    code, out, err = run_cli(capsys, "shapes", *argv)
    assert code == 2 and message in err and err.count("\n") == 1, err


def test_a_reference_that_fails_the_bound_is_named_but_is_not_the_rungs_failure():
    from fakes_bench import bad_check

    dims = (511, 511, 511)
    rec = fake_result({}, dtype="bf16", checks={("cublas", dims): bad_check()})
    m = S.from_record(rec)
    assert m.wrong() == [] and [p.shape.dims for p in m.reference_wrong()] == [dims]
    assert any("failed gemmlab's bound" in line and "511x511x511" in line for line in S.summary_lines(m))
    assert m.to_dict()["reference_wrong"] == ["511x511x511"]


def test_a_verdict_that_flips_with_the_order_is_flagged_per_shape(caplog):
    # round 0 runs the rung first (A B), round 1 cuBLAS first (B A): 104% then 97% of cuBLAS
    dims = (4096, 4096, 4096)
    with caplog.at_level("WARNING"):
        rec = fake_result({}, shapes=[grids.GridShape(*dims, "4096³", "sample")], dtype="bf16",
                          rounds={dims: (104.0, 97.0)})
    m = S.from_record(rec)
    (p,) = m.points
    assert p.order_flip and p.round_ratios == pytest.approx((0.97, 1.04))
    assert p.to_dict()["order_flip"] is True and p.to_dict()["round_ratios"] == pytest.approx([0.97, 1.04])
    assert S.table_rows(m, terminal=True)[0][5].endswith("(order)")
    assert any(line.startswith("(order)") and "4096x4096x4096 0.97-1.04" in line for line in S.summary_lines(m))
    assert any("at 4096x4096x4096" in r.getMessage() and "0.97-1.04" in r.getMessage() for r in caplog.records)
    # the same ratio in both rounds: no flag
    steady = S.from_record(fake_result({dims: 97.0}, shapes=[grids.GridShape(*dims, "4096³", "sample")],
                                       dtype="bf16"))
    assert not steady.points[0].order_flip
    assert not any(line.startswith("(order)") for line in S.summary_lines(steady))


def test_a_side_whose_host_fell_behind_the_timers_hold_is_flagged():
    import dataclasses

    from gemmlab.bench.stats import Measurement

    dims = (511, 511, 511)
    rec = fake_result({}, shapes=[grids.GridShape(*dims, "511³", "sample")], dtype="bf16")
    steady = S.from_record(rec)
    assert not steady.points[0].host_behind
    assert not any(line.startswith("(host)") for line in S.summary_lines(steady))
    rows = []
    for r in rec.rows:
        if not r.reference:  # the rung's host queued two batches more slowly than their holds
            m = r.measurement
            r = dataclasses.replace(r, measurement=Measurement(
                m.spec, m.samples_s, {**m.timing, "batches_host_behind": 2}))
        rows.append(r)
    m = S.from_record(dataclasses.replace(rec, rows=tuple(rows)))
    (p,) = m.points
    assert p.host_behind and p.to_dict()["host_behind"] is True
    assert p.to_dict()["rung_host_behind"] is True and p.to_dict()["cublas_host_behind"] is False
    assert S.table_rows(m, terminal=True)[0][5].endswith("(host)")
    assert any(line.startswith("(host)") and "the rung's side, whose % may read low: 511x511x511" in line
               for line in S.summary_lines(m))


def test_the_host_flag_names_the_reference_side_whose_waits_flatter_the_rung():
    import dataclasses

    from gemmlab.bench.stats import Measurement

    rec = fake_result({}, shapes=[grids.GridShape(511, 511, 511, "511³", "sample")], dtype="bf16")

    def behind(which):
        rows = []
        for r in rec.rows:
            if (r.reference and "ref" in which) or (not r.reference and "rung" in which):
                m = r.measurement
                r = dataclasses.replace(r, measurement=Measurement(
                    m.spec, m.samples_s, {**m.timing, "batches_host_behind": 1}))
            rows.append(r)
        return S.from_record(dataclasses.replace(rec, rows=tuple(rows)))

    m = behind({"ref"})
    (p,) = m.points
    assert p.host_behind and p.cublas_host_behind and not p.rung_row.host_behind
    assert p.to_dict()["cublas_host_behind"] is True and p.to_dict()["rung_host_behind"] is False
    assert S.table_rows(m, terminal=True)[0][5].endswith("(host: ref)")
    (line,) = [x for x in S.summary_lines(m) if x.startswith("(host)")]
    assert "read high: 511x511x511" in line and "the rung's side" not in line
    assert S.table_rows(behind({"ref", "rung"}), terminal=True)[0][5].endswith("(host: both)")
