"""The dispatch rung on the GPU (skipped with the reason where there is none): every path it can take
- skinny M and N (16-byte and 4-byte), split-K with its reduction, zero-padded copies of A and/or B,
the 4-byte policy, plain tiles (both shapes), the tiny kernel - correct against a float64 reference at odd sizes from
{1, 7, 127, 1000, 4095, 4097}, checked by the harness's Checker: fresh random inputs, C poisoned
with a NaN payload plus a poisoned guard past its end (beta = 0: C must be fully overwritten and
never read, nothing written past it), then beta != 0 against alpha·A·B + beta·C0. Also: the path
each shape takes, unaligned views, and `gemmlab shapes` with dispatch as its default rung."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from gemmlab.runtime import dispatch as D

pytestmark = pytest.mark.gpu

ALPHA, BETA = 1.25, -0.5

# (M, N, K), the path the H100's plan takes there (132 SMs; another GPU may split differently, so
# only the path's first word is asserted).
SHAPES = [
    ((1, 1, 1), "skinny-N"),
    ((1, 7, 127), "skinny-N"),
    ((7, 1, 4097), "skinny-N"),
    ((1, 4097, 4095), "skinny-M"),
    ((1, 4096, 4096), "skinny-M"),
    ((4, 1000, 4097), "skinny-M"),
    ((7, 1000, 4097), "padded"),  # M > SKINNY_M: 64x64 tiles, split-K
    ((16, 4096, 1000), "vector"),
    ((4097, 1, 4095), "skinny-N"),
    ((4096, 1, 4096), "skinny-N"),
    ((1000, 7, 4097), "skinny-N"),
    ((4095, 16, 1000), "skinny-N"),
    ((7, 7, 65536), "skinny-N"),
    ((127, 127, 127), "tiny"),  # one wave of 32x8 blocks (seed article 1's tiling)
    ((7, 17, 127), "tiny"),
    ((127, 127, 65536), "scalar"),  # split-K on 4-byte loads
    ((128, 128, 65536), "vector"),  # split-K, 16-byte
    ((1000, 1000, 1000), "vector"),
    ((1000, 3000, 77), "padded"),  # A copied (K = 77)
    ((1000, 4097, 127), "padded"),  # A and B copied
    ((4097, 127, 1000), "padded"),  # B copied
    ((127, 4097, 1000), "scalar"),
    ((4095, 4095, 4095), "padded"),
    ((4097, 4097, 4097), "padded"),
]


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


@pytest.fixture(scope="module")
def checker(cp):
    from gemmlab.bench.check import Checker

    return Checker(xp=cp, seed=12, synchronize=lambda: cp.cuda.get_current_stream().synchronize())


def _check(checker, run, M, N, K):
    res = checker.check(run, M, N, K, ALPHA, BETA)
    assert res.ok, f"{run.rung.summary}: {res.reason}"
    assert len(res.passes) == 2  # beta = 0 (poisoned C and guard), then beta != 0


@pytest.mark.parametrize("dims, path", SHAPES, ids=lambda x: "x".join(map(str, x)) if isinstance(x, tuple) else x)
def test_dispatch_correct(checker, dims, path):
    from gemmlab.runtime.launch import prepare

    run = prepare("dispatch", *dims)
    if run.machine.sm_count == 132:
        assert run.rung.name.startswith(path), run.rung.summary
    _check(checker, run, *dims)


@pytest.mark.parametrize("dims, policy", [
    ((4095, 4095, 1000), D.Policy(odd="scalar")),  # the alternative to the padded copies
    ((1000, 3000, 77), D.Policy(odd="scalar")),
    ((1, 4097, 4095), D.Policy(skinny=False)),  # a skinny shape on the tile path: split-K
    ((4097, 7, 1000), D.Policy(skinny=False)),
    ((1000, 1000, 4097), D.Policy(tile="big", split=5)),
    ((1000, 1000, 4097), D.Policy(tile="small", split=1)),
    ((127, 127, 65536), D.Policy(odd="pad", split=64)),
    ((127, 127, 127), D.Policy(tiny=False)),  # the tile path the tiny kernel replaced
    ((1000, 127, 1000), D.Policy(tiny=True)),  # tiny forced far past its bounds: still correct
    ((4097, 4097, 4097), D.Policy(tile="small")),
], ids=str)
def test_dispatch_policies_correct(checker, dims, policy):
    from gemmlab.kernels import registry
    from gemmlab.runtime.dispatch_gemm import DispatchedGemm

    run = DispatchedGemm(registry.get("dispatch"), *dims, policy=policy)
    _check(checker, run, *dims)


def _misaligned(cp, x):
    flat = cp.empty(x.size + 1, dtype=cp.float32)
    view = flat[1:].reshape(x.shape)
    view[...] = x
    assert view.flags.c_contiguous and view.data.ptr % 16 == 4
    return view


@pytest.mark.parametrize("dims", [(1000, 1000, 1000), (4, 4096, 4096), (4096, 4, 4096), (128, 128, 65536)],
                         ids=lambda d: "x".join(map(str, d)))
def test_dispatch_unaligned_views(cp, dims):
    from gemmlab.runtime.launch import prepare

    M, N, K = dims
    rng = cp.random.default_rng(99)
    a = rng.standard_normal((M, K), dtype=cp.float32)
    b = rng.standard_normal((K, N), dtype=cp.float32)
    c0 = rng.standard_normal((M, N), dtype=cp.float32)
    run = prepare("dispatch", M, N, K)
    ref = ALPHA * (a.astype(cp.float64) @ b.astype(cp.float64)) + BETA * c0.astype(cp.float64)
    for which in ("a", "b", "c"):
        ops = {"a": a, "b": b, "c": c0.copy()}
        ops[which] = _misaligned(cp, ops[which])
        x, y, z = ops["a"], ops["b"], ops["c"]
        ran = run.rung_for(x, y, z)
        run(x, y, z, ALPHA, BETA)
        err = float(cp.linalg.norm(z.astype(cp.float64) - ref) / cp.linalg.norm(ref))
        assert err < 1e-5, (which, ran.summary, err)


def test_workspace_is_allocated_once(cp):
    from gemmlab.runtime.launch import prepare

    run = prepare("dispatch", 128, 128, 65536)
    before = run.workspace_bytes
    assert before == run.plan.workspace_bytes > 0
    a = cp.ones((128, 65536), dtype=cp.float32)
    b = cp.ones((65536, 128), dtype=cp.float32)
    c = cp.empty((128, 128), dtype=cp.float32)
    for _ in range(3):
        run(a, b, c)
    assert run.workspace_bytes == before and float(c[5, 7]) == 65536.0


def test_shapes_maps_the_dispatch_rung_by_default(capsys):
    code, stdout, err = run_cli(capsys, "shapes", "--preset", "quick", "--warmup-ms", "2", "--rep-ms", "5",
                                "--no-store", "--json")
    assert code == 0, err
    res = json.loads(stdout)
    assert res["rung"] == "dispatch" and all(r["correct"] for r in res["rows"])
    ran = {tuple(r["grid_shape"][k] for k in "MNK"): r["launched"]["rung"] for r in res["rows"] if not r["is_reference"]}
    assert ran[(1, 512, 512)].startswith("skinny-M") and ran[(512, 1, 512)].startswith("skinny-N")
    assert "split-K" in ran[(64, 64, 8192)]
