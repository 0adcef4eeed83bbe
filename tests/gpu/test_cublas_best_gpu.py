"""The best-of cuBLAS BF16 reference on a GPU: cuBLASLt through ctypes finds and runs heuristic
algorithms, every candidate is correct (the harness's Checker, the BF16 bound) at whole-tile and
awkward shapes and both output types, the selection keeps the fastest and records every
candidate, and the ladder's reference row is that winner. Skipped without a GPU (conftest)."""

from __future__ import annotations

import json

import pytest

from gemmlab.errors import InputError

pytestmark = pytest.mark.gpu

ALPHA, BETA = 1.25, -0.5


@pytest.fixture(scope="module")
def cp():
    import cupy

    return cupy


def _check(cp, run, shape, out, seed):
    from gemmlab.bench.check import Checker

    M, N, K = shape
    checker = Checker(xp=cp, seed=seed, synchronize=cp.cuda.get_current_stream().synchronize)
    return checker.check(run, M, N, K, ALPHA, BETA, "bf16", out)


def _plan(cp, shape, out):
    from gemmlab.runtime import cublas, cublaslt

    cublas._handle("fp32")  # loads CuPy's libcublas, and with it the libcublasLt api() prefers
    api = cublaslt.api()
    h = cublaslt.handle(cp.cuda.runtime.getDevice())
    return cublaslt.LtPlan(api, h, *shape, out)


def test_cublaslt_is_found_and_proposes_algorithms(cp):
    from gemmlab.runtime import cublaslt

    plan = _plan(cp, (1024, 1024, 1024), "bf16")
    try:
        assert plan.algos, "cuBLASLt's heuristic returned no algorithm for 1024^3 bf16"
        d = plan.describe(0)
        assert d["algo_id"] is not None and d["tile"] is not None
        assert cublaslt.api().version() >= 120000
        print("libcublasLt:", cublaslt.api().path, cublaslt.api().version())
        for i in range(len(plan.algos)):
            print(i, cublaslt.short_label(plan.describe(i)))
    finally:
        plan.close()


@pytest.mark.parametrize("out", ["bf16", "fp32"])
@pytest.mark.parametrize("shape", [(128, 128, 128), (1000, 3000, 77), (7, 7, 7), (4097, 264, 136)],
                         ids=lambda s: "x".join(map(str, s)))
def test_every_cublaslt_candidate_is_correct(cp, shape, out):
    import numpy as np

    plan = _plan(cp, shape, out)
    ws = cp.empty(plan.workspace, dtype=cp.uint8)
    try:
        assert plan.algos, f"no cuBLASLt algorithm for {shape} {out}"
        for i in range(len(plan.algos)):
            def run(a, b, c, al, be, _i=i):
                alpha, beta = np.array(al, np.float32), np.array(be, np.float32)
                plan.run(_i, a.data.ptr, b.data.ptr, c.data.ptr, alpha.ctypes.data,
                         beta.ctypes.data, ws.data.ptr, cp.cuda.get_current_stream().ptr)

            res = _check(cp, run, shape, out, seed=31 + i)
            assert res.ok, f"cuBLASLt algorithm #{i} ({plan.describe(i)}) {shape} {out}: {res.reason}"
    finally:
        plan.close()


def test_plan_refuses_a_misaligned_pointer(cp):
    plan = _plan(cp, (64, 64, 64), "bf16")
    try:
        a = cp.zeros(64 * 64 + 8, dtype=cp.uint16)
        with pytest.raises(InputError, match="not 256-byte aligned"):
            plan.run(0, a.data.ptr + 16, a.data.ptr, a.data.ptr, 0, 0, 0, 0)
    finally:
        plan.close()


@pytest.mark.parametrize("out", ["bf16", "fp32"])
def test_best_of_selection(cp, out):
    from gemmlab.bench import cublas_best as cb

    shape = (2048, 2048, 2048)
    best = cb.best_bf16(*shape, out, ALPHA, BETA)
    rec = best.launched
    json.dumps(rec)  # stored with the run: must be JSON
    kinds = [c["kind"] for c in rec["candidates"]]
    assert kinds[0] == cb.GEMM_EX and cb.CUBLASLT in kinds, rec
    timed = [c for c in rec["candidates"] if c["median_ms"] is not None]
    assert min(timed, key=lambda c: c["median_ms"])["name"] == rec["winner"]
    assert rec["candidates"][0]["excluded"] is None  # the baseline is always timed
    for c in rec["candidates"]:
        print(f"{c['name']:<90} {c['median_ms'] or float('nan'):8.4f} ms "
              f"{c['tflops'] or float('nan'):7.1f} TFLOP/s  {c['excluded'] or ''} "
              f"{c.get('kernels') or ''}")
    print("notes:", rec["notes"], "\nwinner:", best.summary)
    if out == "fp32":
        assert cb.TORCH not in kinds
    try:
        import torch

        if out == "bf16" and cb.torch_enabled() and torch.cuda.is_available():
            assert cb.TORCH in kinds
            assert rec.get("kernel"), rec["notes"]  # CUPTI named the winner's kernels
    except ImportError:
        pass
    res = _check(cp, best, shape, out, seed=41)
    assert res.ok, f"best-of winner {rec['winner']}: {res.reason}"


def test_ladder_reference_row_is_the_best(cp):
    from gemmlab.bench.ladder import measure
    from gemmlab.bench.timer import TimingOptions
    from gemmlab.kernels.registry import get

    opts = TimingOptions(warmup_ms=2, rep_ms=10, min_repeats=5)
    from gemmlab.workflows.kinds import as_dict

    record = measure("ladder", [get("mma_sync_bf16")], 1024, 1024, 1024, opts)
    ref = next(r for r in record.rows if r.reference)
    assert ref.correct, ref.check.reason
    assert ref.launched["winner"] and ref.launched["candidates"]
    assert ref.info["summary"].startswith("cuBLAS BF16 at its best: ")
    d = as_dict(record)
    json.dumps(d)
    assert d["rows"][-1]["launched"]["winner"] == ref.launched["winner"]
