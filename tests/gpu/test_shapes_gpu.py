"""`gemmlab shapes` on the GPU (skipped with the reason where there is none): the command on the
quick grid, every result correct, what ran recorded per shape, stored as a shapes run that the
report draws; and the autotuned rung's path (tuning restricted to two candidates on NVRTC so the
test stays short)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from gemmlab.bench.results import load_record
from gemmlab.shapes import grids
from gemmlab.shapes import shapemap as S

pytestmark = pytest.mark.gpu

FAST = ["--warmup-ms", "2", "--rep-ms", "5"]


def test_quick_grid_every_result_correct(capsys, tmp_path):
    db = tmp_path / "runs.sqlite"
    out = tmp_path / "shapes.json"
    code, stdout, err = run_cli(capsys, "shapes", "--preset", "quick", "--rung", "double_buffered", *FAST,
                                "--db", str(db), "--out", str(out), "--json")
    assert code == 0, err
    res = json.loads(stdout)
    assert res["command"] == "shapes" and res["dtype"] == "fp32" and res["run_id"] >= 1
    assert len(res["rows"]) == 2 * len(grids.QUICK)
    bad = [(r["kernel"], r["grid_shape"], r["check"]["reason"]) for r in res["rows"] if not r["correct"]]
    assert not bad, bad
    assert "TF32 off" in res["env"]["cublas_math_mode"]
    smap = S.from_record(load_record(res))
    by = {p.shape.dims: p for p in smap.points}
    assert by[(256, 256, 256)].ran == "double_buffered"  # aligned: the 16-byte instantiation
    assert by[(255, 257, 129)].ran == "double_buffered_scalar"  # N, K not multiples of 4: the scalar twin
    assert all(p.pct is not None and p.pct > 0 for p in smap.points)
    assert res["ceiling"].get("copy_bytes_per_s", 0) > 1e11  # skinny shapes are in the quick grid
    assert json.loads(out.read_text())["map"] == res["map"]
    html = tmp_path / "map.html"
    code, stdout, err = run_cli(capsys, "report", str(db), "--out", str(html))
    assert code == 0, err
    assert "shape map" in stdout and "255x257x129" in html.read_text()


def test_table_output_and_odd_shapes(capsys, tmp_path):
    code, stdout, err = run_cli(capsys, "shapes", "--shapes", "7,1,127;1,7,1000;33,65,17", "--rung", "double_buffered",
                                *FAST, "--no-store")
    assert code == 0, err
    assert "Shape map: double_buffered vs cuBLAS FP32" in stdout and "33x65x17" in stdout


def test_autotuned_rung_resolves_to_a_checked_candidate(capsys, tmp_path, monkeypatch):
    from gemmlab.kernels import registry
    from gemmlab.runtime import autotune

    cands = registry.autotune_candidates()[:2]
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(autotune, "available_backends", lambda: ("nvrtc",))
    monkeypatch.setattr(autotune.registry, "autotune_candidates", lambda dtype="fp32": cands)
    code, stdout, err = run_cli(capsys, "shapes", "--shapes", "200,300,64;1,1024,1024", "--rung", "autotuned", *FAST,
                                "--no-store", "--json")
    assert code == 0, err
    res = json.loads(stdout)
    assert all(r["correct"] for r in res["rows"])
    ran = {p.shape.dims: p for p in S.from_record(load_record(res)).points}
    assert ran[(200, 300, 64)].ran in {c.name for c in cands}
    assert ran[(200, 300, 64)].backend == "nvrtc"


@pytest.mark.parametrize("dtype", ["bf16", "fp8"])
def test_tensor_quick_grid_against_cublas_at_its_best(capsys, tmp_path, dtype):
    """``gemmlab shapes --dtype bf16|fp8`` (issue #20): the dtype's dispatcher at every shape of the
    tensor quick grid, every result correct, cuBLAS (BF16 at its best / cuBLASLt FP8) beside it
    wherever it takes the shape, decode shapes against the copy ceiling, stored and drawn."""
    from gemmlab.kernels.families import arch_refusal
    from gemmlab.kernels.registry import get
    from gemmlab.runtime import device

    info = device.info()
    reason = arch_refusal(get(f"dispatch_{dtype}"), info.cc_major, info.cc_minor, info.name)
    if reason:
        pytest.skip(reason)
    db = tmp_path / "runs.sqlite"
    code, stdout, err = run_cli(capsys, "shapes", "--dtype", dtype, "--preset", "tensor-quick", *FAST,
                                "--db", str(db), "--json")
    assert code == 0, err
    res = json.loads(stdout)
    assert res["dtype"] == dtype and res["rung"] == f"dispatch_{dtype}"
    bad = [(r["kernel"], r["grid_shape"], r["check"]["reason"]) for r in res["rows"] if not r["correct"]]
    assert not bad, bad
    smap = S.from_record(load_record(res))
    by = {p.shape.dims: p for p in smap.points}
    assert by[(1, 4096, 4096)].ran.startswith("gemv") and by[(1, 4096, 4096)].pct_of_copy > 0
    assert by[(511, 511, 511)].ran.startswith("repitch")
    assert by[(512, 512, 512)].pct > 0 and smap.geomean_pct() > 0
    html = tmp_path / "map.html"
    code, stdout, err = run_cli(capsys, "report", str(db), "--out", str(html))
    assert code == 0, err
    assert smap.reference in html.read_text()
