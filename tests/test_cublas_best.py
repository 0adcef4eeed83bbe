"""The best-of cuBLAS BF16 reference without a GPU: the cuBLASLt problem mapping proved by a fake
cublasLtMatmul computing the column-major product on host memory, the plan's descriptors and
preference, decoding of algorithm configurations, candidate selection, kernel-name splitting and
the ladder's reference target. With GEMMLAB_CUBLASLT_LIB pointing at a libcublasLt, its host-only
calls are exercised too (they need no GPU)."""

from __future__ import annotations

import ctypes
import math
import os
import re

import numpy as np
import pytest

from gemmlab.bench import cublas_best as cb
from gemmlab.errors import InputError
from gemmlab.numerics.bf16 import from_bits, round_bf16, to_bits, tolerance
from gemmlab.runtime import cublaslt as lt

_NP = {lt.CUDA_R_16BF: np.uint16, lt.CUDA_R_32F: np.float32}


def _view(ptr, dtype, count):
    ctype = ctypes.c_uint16 if dtype == np.uint16 else ctypes.c_float
    return np.ctypeslib.as_array((ctype * count).from_address(ptr)).view(dtype)


def _decode(x, t):
    return from_bits(x).astype(np.float64) if t == lt.CUDA_R_16BF else x.astype(np.float64)


def aligned(shape, dtype, align=256):
    """A C-contiguous host array whose data starts on an ``align``-byte boundary."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = np.empty(n * dtype.itemsize + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    out = raw[off: off + n * dtype.itemsize].view(dtype).reshape(shape)
    assert out.ctypes.data % align == 0
    return out


class FakeLt:
    """LtApi with cublasLtMatmul's column-major semantics (no transposes) on host pointers."""

    def __init__(self, algos=None, fail_heuristics=False):
        self.next = 100
        self.live: dict[int, tuple] = {}
        self.destroyed: list[tuple[str, int]] = []
        self.prefs = {}
        self.algos = algos if algos is not None else [
            lt.LtAlgo(bytes([1] * 64), 1 << 20, 1.0, {"algo_id": 66, "tile_id": 20}),
            lt.LtAlgo(bytes([2] * 64), 64 << 20, 0.5, {"algo_id": 71}),  # needs too much workspace
            lt.LtAlgo(bytes([3] * 64), 0, 2.0, {"algo_id": 21}),
        ]
        self.fail_heuristics = fail_heuristics
        self.calls = []

    def _new(self, what):
        self.next += 1
        self.live[self.next] = what
        return self.next

    def version(self):
        return 130101

    def create(self):
        return self._new(("handle",))

    def matmul_desc(self, compute, scale):
        assert (compute, scale) == (lt.CUBLAS_COMPUTE_32F, lt.CUDA_R_32F)
        return self._new(("desc", compute, scale))

    def layout(self, layout):
        return self._new(("layout", layout))

    def preference(self, workspace, alignment):
        h = self._new(("pref",))
        self.prefs[h] = (workspace, dict(alignment))
        return h

    def heuristics(self, handle, desc, layouts, pref, count):
        if self.fail_heuristics:
            raise lt.CublasLtError("cublasLtMatmulAlgoGetHeuristic failed: CUBLAS_STATUS_NOT_SUPPORTED (15)")
        assert [self.live[x][0] for x in layouts] == ["layout"] * 4
        return self.algos[:count]

    def matmul(self, handle, desc, alpha_ptr, a_ptr, a_layout, b_ptr, b_layout, beta_ptr, c_ptr,
               c_layout, d_ptr, d_layout, algo, workspace_ptr, workspace_size, stream):
        self.calls.append(dict(algo=algo, stream=stream, ws=(workspace_ptr, workspace_size)))
        la, lb, lc, ld = (self.live[x][1] for x in (a_layout, b_layout, c_layout, d_layout))
        m, k = la.rows, la.cols
        k2, n = lb.rows, lb.cols
        assert k2 == k and (lc.rows, lc.cols) == (m, n) and lc == ld and c_ptr == d_ptr
        al = _view(alpha_ptr, np.float32, 1)[0]
        be = _view(beta_ptr, np.float32, 1)[0]
        # column-major: element (i, j) of an m x n matrix with leading dimension ld is at j*ld + i
        a = _decode(_view(a_ptr, _NP[la.dtype], la.ld * k), la.dtype).reshape(k, la.ld).T[:m]
        b = _decode(_view(b_ptr, _NP[lb.dtype], lb.ld * n), lb.dtype).reshape(n, lb.ld).T[:k]
        cmem = _view(c_ptr, _NP[lc.dtype], lc.ld * n)
        c = cmem.reshape(n, lc.ld).T[:m]
        acc = al * (a @ b)
        if be != 0:
            acc += be * _decode(c, lc.dtype)
        c[...] = to_bits(acc.astype(np.float32)) if lc.dtype == lt.CUDA_R_16BF else acc

    def destroy(self, kind, obj):
        self.live.pop(obj)
        self.destroyed.append((kind, obj))


# --- the problem mapping ----------------------------------------------------------------------
def test_lt_problem_layouts_swap_the_operands():
    p = lt.lt_problem(5, 7, 3, "bf16")
    L = p.layouts
    assert L["A"] == lt.Layout(lt.CUDA_R_16BF, 7, 3, 7)  # our B, K x N row-major = N x K col-major
    assert L["B"] == lt.Layout(lt.CUDA_R_16BF, 3, 5, 3)  # our A, M x K row-major = K x M col-major
    assert L["C"] == L["D"] == lt.Layout(lt.CUDA_R_16BF, 7, 5, 7)
    assert lt.lt_problem(5, 7, 3, "fp32").layouts["D"].dtype == lt.CUDA_R_32F
    assert p.operands(10, 20, 30) == (20, 10, 30, 30)
    with pytest.raises(InputError, match="out_dtype='fp16'"):
        lt.lt_problem(5, 7, 3, "fp16")
    with pytest.raises(InputError, match="K=0"):
        lt.lt_problem(5, 7, 0, "bf16")


@pytest.mark.parametrize("out", ["bf16", "fp32"])
@pytest.mark.parametrize("shape", [(5, 7, 3), (1, 1, 1), (33, 17, 65)])
def test_plan_computes_the_row_major_product(out, shape):
    M, N, K = shape
    rng = np.random.default_rng(1)
    a = aligned((M, K), np.uint16)
    b = aligned((K, N), np.uint16)
    a[...] = to_bits(rng.standard_normal((M, K)).astype(np.float32))
    b[...] = to_bits(rng.standard_normal((K, N)).astype(np.float32))
    c0 = rng.standard_normal((M, N)).astype(np.float32)
    c = aligned((M, N), np.uint16 if out == "bf16" else np.float32)
    c[...] = to_bits(c0) if out == "bf16" else c0
    api = FakeLt()
    plan = lt.LtPlan(api, api.create(), M, N, K, out, workspace=32 << 20, count=8)
    al, be = np.array(1.5, np.float32), np.array(-0.5, np.float32)
    plan.run(0, a.ctypes.data, b.ctypes.data, c.ctypes.data, al.ctypes.data, be.ctypes.data,
             1234, 77)
    cin = from_bits(to_bits(c0)) if out == "bf16" else c0
    want = 1.5 * (from_bits(a).astype(np.float64) @ from_bits(b)) - 0.5 * cin
    got = from_bits(c) if out == "bf16" else c
    want = round_bf16(want.astype(np.float32)) if out == "bf16" else want
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    (call,) = api.calls
    assert call["algo"] == bytes([1] * 64) and call["stream"] == 77
    assert call["ws"] == (1234, 32 << 20)


def test_plan_preference_filter_and_cleanup():
    api = FakeLt()
    h = api.create()
    plan = lt.LtPlan(api, h, 64, 64, 64, "bf16", workspace=32 << 20, count=8)
    # the 64 MiB algorithm does not fit the 32 MiB workspace
    assert [a.config["algo_id"] for a in plan.algos] == [66, 21]
    ((ws, align),) = api.prefs.values()
    assert ws == 32 << 20 and align == {"A": 256, "B": 256, "C": 256, "D": 256}
    d = plan.describe(0)
    assert d["tile"] == "128x128" and d["workspace_bytes"] == 1 << 20 and d["waves"] == 1.0
    plan.close()
    assert set(api.live) == {h}  # descriptors gone, the handle (shared) kept
    assert sorted(k for k, _ in api.destroyed) == ["layout"] * 4 + ["matmul_desc", "preference"]


def test_plan_creation_failure_leaves_nothing_behind():
    api = FakeLt(fail_heuristics=True)
    h = api.create()
    with pytest.raises(lt.CublasLtError, match="NOT_SUPPORTED"):
        lt.LtPlan(api, h, 64, 64, 64, "bf16")
    assert set(api.live) == {h}


def test_plan_refuses_pointers_less_aligned_than_chosen_for():
    api = FakeLt()
    plan = lt.LtPlan(api, api.create(), 8, 8, 8, "bf16")
    with pytest.raises(InputError, match="b: device pointer 0x1010 is not 256-byte aligned"):
        plan.run(0, 0x1000, 0x1010, 0x2000, 0, 0, 0, 0)
    assert api.calls == []
    assert lt.pointer_alignment(0x1010) == 16 and lt.pointer_alignment(0x10000) == 256
    assert lt.pointer_alignment(0x1002, 256) == 2


# --- decoding ---------------------------------------------------------------------------------
def test_id_tables_come_from_the_header():
    ids = lt._ids()
    tiles = ids["tile"]
    assert [int(k) for k in tiles] == list(range(len(tiles)))  # 0 .. 634, none missing
    assert tiles["0"] == "UNDEFINED" and tiles["20"] == "128x128" and tiles["634"] == "512x1024"
    assert all(re.fullmatch(r"\d+x\d+", v) for k, v in tiles.items() if k != "0")
    assert ids["stages"]["16"] == "64x4" and ids["stages"]["38"] == "768xAUTO"
    assert ids["cluster_shape"]["0"] == "AUTO" and ids["cluster_shape"]["3"] == "2x1x1"
    assert ids["inner_shape"]["4"] == "MMA16816"


def test_describe_and_short_label():
    raw = {"algo_id": 66, "tile_id": 20, "splitk": 1, "reduction_scheme": 0, "cta_swizzling": 1,
           "custom_option": 0, "stages_id": 16, "inner_shape_id": 0, "cluster_shape_id": 3}
    d = lt.describe(raw)
    assert (d["tile"], d["stages"], d["cluster"], d["reduction"]) == ("128x128", "64x4", "2x1x1",
                                                                      "NONE")
    assert lt.short_label(d) == "algo 66 tile 128x128 stages 64x4 cluster 2x1x1 splitK 1 swizzle 1"
    d2 = lt.describe({"algo_id": 5, "tile_id": 99999, "splitk": 4, "reduction_scheme": 2})
    assert d2["tile"] == "id 99999" and d2["stages"] is None
    assert lt.short_label(d2) == "algo 5 tile id 99999 splitK 4 reduction COMPUTE_TYPE"


def test_library_found_through_the_process_maps():
    maps = ("7f00-7f10 r-xp 00000000 08:01 123 /usr/lib/libc.so.6\n"
            "7f20-7f30 r-xp 00000000 08:01 456 /site/nvidia/cu13/lib/libcublasLt.so.13\n")
    assert lt._loaded_from_maps(maps) == "/site/nvidia/cu13/lib/libcublasLt.so.13"
    assert lt._loaded_from_maps("7f00-7f10 r-xp 0 08:01 1 /usr/lib/libcublas.so.13\n") is None
    assert "libcublasLt.so.13" in lt.library_candidates()


def test_heuristic_result_struct_matches_the_header():
    assert ctypes.sizeof(lt._HeuristicResult) == 96 and ctypes.sizeof(lt._Algo) == 64


# --- selection --------------------------------------------------------------------------------
def _cand(name, kind=cb.CUBLASLT):
    return cb.Candidate(name, kind, lambda *a: None, {"tag": name})


def test_select_keeps_the_fastest_agreeing_candidate():
    cands = [_cand("gemmex", cb.GEMM_EX), _cand("lt0"), _cand("lt1"), _cand("bad"),
             _cand("boom"), _cand("nan"), _cand("torch", cb.TORCH)]
    diffs = {"gemmex": 0.0, "lt0": 1e-3, "lt1": 2e-3, "bad": 0.5, "nan": math.nan, "torch": 0.0}
    times = {"gemmex": 1.0, "lt0": 0.8, "lt1": 0.9, "torch": 0.85}

    def agree(c):
        if c.name == "boom":
            raise RuntimeError("cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED (15)\nmore")
        return diffs[c.name]

    def measure(c):
        return times[c.name], times[c.name] * 0.99, 20

    bound = cb.agreement_bound(4096, "bf16")
    sel = cb.select(cands, agree, measure, bound, flops=2e12)
    assert sel.winner.candidate.name == "lt0"
    rec = sel.record()
    assert rec["winner"] == "lt0" and rec["winner_kind"] == cb.CUBLASLT
    by = {c["name"]: c for c in rec["candidates"]}
    assert by["gemmex"]["median_ms"] == 1000.0 and by["lt0"]["tflops"] == pytest.approx(2.5)
    assert by["bad"]["excluded"].startswith("disagrees with cublasGemmEx: normwise difference 0.5")
    assert by["nan"]["excluded"].startswith("disagrees") and by["nan"]["median_ms"] is None
    assert by["boom"]["excluded"] == ("failed: RuntimeError: cublasLtMatmul failed: "
                                      "CUBLAS_STATUS_NOT_SUPPORTED (15)")
    assert by["lt1"]["tag"] == "lt1" and by["lt1"]["excluded"] is None


def test_select_needs_a_working_baseline_first():
    with pytest.raises(InputError, match="first candidate must be cublasGemmEx"):
        cb.select([_cand("lt0")], lambda c: 0.0, lambda c: (1.0, 1.0, 1), 1.0, 1.0)

    def agree(c):
        raise RuntimeError("no cuBLAS")

    with pytest.raises(RuntimeError, match="no cuBLAS"):
        cb.select([_cand("g", cb.GEMM_EX), _cand("lt0")], agree, lambda c: (1.0, 1.0, 1), 1.0, 1.0)


def test_agreement_bound_is_twice_the_bf16_normwise_bound():
    for K, out in ((77, "bf16"), (8192, "bf16"), (4096, "fp32")):
        assert cb.agreement_bound(K, out) == pytest.approx(2.02 * tolerance(K, out).normwise)
    # two bf16 outputs may differ by an output rounding each: the bound allows that
    assert cb.agreement_bound(4096, "bf16") > 2 * 2.0**-8


def test_split_by_marker():
    names = ["sm90_xmma_gemm_bf16", cb.MARKER, "gemv", "reduce", cb.MARKER, cb.MARKER]
    assert cb.split_by_marker(names, cb.MARKER, 3) == [["sm90_xmma_gemm_bf16"], ["gemv", "reduce"],
                                                       []]
    assert cb.split_by_marker(["k"], cb.MARKER, 3) == [["k"], [], []]


def test_best_callable_and_summary():
    seen = []
    win = cb.Candidate("cublasLt heuristic #0: algo 66 tile 128x256", cb.CUBLASLT,
                       lambda a, b, c, al, be: seen.append((a, b, c, al, be)), {"algo_id": 66})
    sel = cb.Selection(cb.Outcome(win, 1e-3, 1e-3, 10), [
        cb.Outcome(_cand("cublasGemmEx CUBLAS_GEMM_DEFAULT", cb.GEMM_EX), 1.1e-3, 1e-3, 10),
        cb.Outcome(win, 1e-3, 1e-3, 10)], flops=1e12)
    best = cb.BestBf16(sel, "bf16")
    best(1, 2, 3, 1.0, 0.0)
    assert seen == [(1, 2, 3, 1.0, 0.0)]
    assert best.launched["winner"] == win.name and len(best.launched["candidates"]) == 2
    assert best.summary.startswith("cuBLAS BF16 at its best: cublasLt heuristic #0: algo 66")
    assert "fastest of 2 timed candidates" in best.summary
    assert "C CUDA_R_16BF, CUBLAS_COMPUTE_32F" in best.summary
    assert "C CUDA_R_32F" in cb.summary(sel, "fp32")


def test_ladder_reference_row_carries_the_selection(monkeypatch):
    from fakes_bench import FakeBench

    from gemmlab.bench import ladder

    win = cb.Candidate("cublasLt heuristic #2: algo 21", cb.CUBLASLT, lambda *a: None,
                       {"algo_id": 21, "tile": "256x128"})
    sel = cb.Selection(cb.Outcome(win, 1e-3, 1e-3, 10), [cb.Outcome(win, 1e-3, 1e-3, 10)], 1e12)
    made = []

    def fake_best(M, N, K, out_dtype, alpha, beta):
        made.append((M, N, K, out_dtype, alpha, beta))
        return cb.BestBf16(sel, out_dtype)

    monkeypatch.setattr(cb, "best_bf16", fake_best)
    ref = ladder.cublas_bf16_target(256, 128, 64, 1.0, 0.0, "bf16")
    assert "at its best" in ref.info["summary"] and "CUBLAS_COMPUTE_32F" in ref.info["summary"]
    bench = FakeBench({"cublas": [0.5]})
    _, row = ladder.run_targets([], ref, bench)
    assert made == [(256, 128, 64, "bf16", 1.0, 0.0)]
    d = row.to_dict()
    assert d["launched"]["winner"] == "cublasLt heuristic #2: algo 21"
    assert d["launched"]["winner_detail"]["tile"] == "256x128"
    assert d["info"]["summary"].startswith("cuBLAS BF16 at its best: cublasLt heuristic #2")
    # best=False keeps plain cublasGemmEx (no selection)
    plain = ladder.cublas_bf16_target(256, 128, 64, best=False)
    assert plain.info["summary"].endswith("CUBLAS_GEMM_DEFAULT")


def test_bf16_caption_names_the_reference():
    from gemmlab.bench.results import RunRecord
    from gemmlab.report import tables
    from report_samples import kernel_row

    ref = kernel_row("cublas", 8, 8, 8, median_s=1e-3, reference=True, dtype="bf16", out_dtype="bf16",
                     info={"summary": "cuBLAS BF16 at its best: X"})
    meta = {"dtype": "bf16", "shape": {"M": 8, "N": 8, "K": 8}, "peak": {},
            "options": {"out_dtype": "bf16", "timing": {}}}
    assert "cuBLAS row: cuBLAS BF16 at its best: X" in tables.caption(RunRecord("ladder", (ref,), {}, meta))


# --- the real library's host-only calls (no GPU needed) ----------------------------------------
@pytest.mark.skipif(not os.environ.get("GEMMLAB_CUBLASLT_LIB"),
                    reason="set GEMMLAB_CUBLASLT_LIB to a libcublasLt.so to check the ctypes layer")
def test_ctypes_layer_on_the_real_library():
    api = lt.CtypesLt(os.environ["GEMMLAB_CUBLASLT_LIB"])
    assert api.version() >= 120000
    d = api.matmul_desc(lt.CUBLAS_COMPUTE_32F, lt.CUDA_R_32F)
    lays = [api.layout(x) for x in lt.lt_problem(100, 200, 300, "bf16").layouts.values()]
    pref = api.preference(32 << 20, {k: 256 for k in "ABCD"})
    cfg = api.algo_config(bytes(64))  # every attribute's size is accepted (else it reads None)
    assert set(cfg) == set(lt.ALGO_CONFIG) and None not in cfg.values()
    # a wrongly sized attribute is refused (so the sizes accepted above were checked)
    small = ctypes.c_uint8(0)
    assert api.lib.cublasLtMatmulPreferenceSetAttribute(
        pref, lt.PREF_MAX_WORKSPACE_BYTES, ctypes.byref(small), 1) == 7  # INVALID_VALUE
    for x in lays:
        api.destroy("layout", x)
    api.destroy("preference", pref)
    api.destroy("matmul_desc", d)
    if os.environ.get("GEMMLAB_CUBLASLT_EXPECT_NO_GPU") == "1":  # a CPU machine: no handle
        with pytest.raises(lt.CublasLtError,
                           match=r"^cublasLtCreate failed: CUBLAS_STATUS_NOT_INITIALIZED \(1\)$"):
            api.create()


# --- the GPU orchestration on a NumPy stand-in for CuPy --------------------------------------
class _Clock:
    """A fake GPU timeline: each candidate's launch advances it by that candidate's time."""

    def __init__(self):
        self.now = 0.0


class _Event:
    def __init__(self, clock):
        self.clock, self.t = clock, None

    def record(self):
        self.t = self.clock.now


class _Backend:
    l2_flush_bytes = 0

    def __init__(self, clock):
        self.clock = clock

    def event(self):
        return _Event(self.clock)

    def elapsed_s(self, s, e):
        return e.t - s.t

    def flush_l2(self):
        pass

    def hold(self, seconds):
        pass

    def synchronize(self):
        pass


def _numpy_cupy():
    import types

    stream = types.SimpleNamespace(synchronize=lambda: None, ptr=0)
    return types.SimpleNamespace(
        random=types.SimpleNamespace(default_rng=np.random.default_rng),
        uint16=np.uint16, float32=np.float32, float64=np.float64, int16=np.int16,
        zeros=np.zeros, linalg=np.linalg,
        cuda=types.SimpleNamespace(get_current_stream=lambda: stream),
        get_default_memory_pool=lambda: types.SimpleNamespace(free_all_blocks=lambda: None))


@pytest.mark.parametrize("out", ["bf16", "fp32"])
def test_select_on_gpu_wiring_with_numpy(monkeypatch, out):
    """_select_on_gpu end to end with NumPy standing in for CuPy: random operands of the run's
    shape, agreement against the GemmEx candidate's output, timing through time_fn, the winner,
    and the missing-PyTorch note for kernel names."""
    import sys

    from gemmlab.bench import timer

    monkeypatch.setitem(sys.modules, "cupy", _numpy_cupy())
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    clock = _Clock()
    monkeypatch.setattr(timer, "CupyBackend", lambda flush_l2=True: _Backend(clock))
    M, N, K = 24, 40, 56

    def gemm(cost_s, wrong=False):
        def run(a, b, c, al, be):
            clock.now += cost_s
            acc = al * (from_bits(a).astype(np.float64) @ from_bits(b).astype(np.float64))
            if wrong:
                acc = acc * 1.1
            if be != 0:
                acc += be * (from_bits(c) if c.dtype == np.uint16 else c)
            c[...] = to_bits(acc.astype(np.float32)) if c.dtype == np.uint16 else acc
        return run

    cands = [cb.Candidate("gemmex", cb.GEMM_EX, gemm(2e-3)),
             cb.Candidate("lt fast", cb.CUBLASLT, gemm(1e-3)),
             cb.Candidate("lt wrong", cb.CUBLASLT, gemm(1e-4, wrong=True)),
             cb.Candidate("lt slow", cb.CUBLASLT, gemm(3e-3))]
    opts = timer.TimingOptions(warmup_ms=1, rep_ms=10, min_repeats=5, estimate_runs=2)
    sel, kernels, why = cb._select_on_gpu(cands, M, N, K, out, 1.25, -0.5, opts, True, 0)
    assert sel.winner.candidate.name == "lt fast"
    by = {o.candidate.name: o for o in sel.outcomes}
    assert by["gemmex"].rel_diff == 0.0 and by["lt fast"].rel_diff <= cb.agreement_bound(K, out)
    assert by["lt wrong"].excluded.startswith("disagrees") and by["lt wrong"].median_s is None
    assert by["lt fast"].median_s == pytest.approx(1e-3) and by["lt slow"].n >= 5
    assert kernels is None and "PyTorch" in why
    rec = cb.BestBf16(sel, out).launched
    assert [c["excluded"] is None for c in rec["candidates"]] == [True, True, False, True]
    assert rec["candidates"][1]["tflops"] == pytest.approx(2 * M * N * K / 1e-3 / 1e12)


def test_torch_candidate_reasons(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)
    assert cb._torch_candidate("bf16") == (None, "PyTorch is not importable")
    assert cb._torch_candidate("fp32")[1].startswith("torch.matmul has no bf16 x bf16 -> float32")
    monkeypatch.setenv("GEMMLAB_CUBLAS_TORCH", "0")
    assert cb._torch_candidate("bf16") == (None, "torch candidate off (GEMMLAB_CUBLAS_TORCH=0)")
    assert cb.kernel_names([], lambda: None)[0] is None


def test_torch_candidate_turns_reduced_precision_off_only_for_its_own_call(monkeypatch):
    """The torch candidate computes with full-precision BF16 reductions, like the other candidates,
    and gives the user's setting back after each call (timing the reference changes nothing)."""
    import contextlib
    import sys
    import types

    seen = []
    matmul = types.SimpleNamespace(allow_bf16_reduced_precision_reduction=True)

    class FakeTensor:
        def view(self, dtype):
            return self

        def addmm_(self, a, b, beta, alpha):
            seen.append(matmul.allow_bf16_reduced_precision_reduction)

    fake_torch = types.SimpleNamespace(
        __version__="0.fake", bfloat16="bf16", from_dlpack=lambda x: FakeTensor(),
        backends=types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=matmul)),
        cuda=types.SimpleNamespace(ExternalStream=lambda ptr: None, default_stream=lambda: None,
                                   stream=lambda s: contextlib.nullcontext()))
    fake_cupy = types.SimpleNamespace(
        int16="int16", cuda=types.SimpleNamespace(
            get_current_stream=lambda: types.SimpleNamespace(ptr=0)))
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.delenv("GEMMLAB_CUBLAS_TORCH", raising=False)
    cand, why = cb._torch_candidate("bf16")
    assert why is None and cand.detail["allow_bf16_reduced_precision_reduction"] is False
    assert matmul.allow_bf16_reduced_precision_reduction is True  # building it changed nothing
    x = types.SimpleNamespace(view=lambda dtype: x)
    cand.run(x, x, x, 1.0, 0.0)
    assert seen == [False] and matmul.allow_bf16_reduced_precision_reduction is True


def test_split_k_reductions_in_the_output_type_are_left_out_before_timing():
    """cuBLASLt may offer split-K that adds its slices' partial sums in bf16 (reduction
    OUTPUT_TYPE or INPLACE): faster, and outside the bound every row is held to (H100 511^3).
    Such a candidate is excluded with the reason, never timed; in FP32 output it is fine."""
    lossy = {"splitk": 8, "reduction": "OUTPUT_TYPE"}
    assert "8 split-K partial sums in the output type" in cb.lossy_reduction(lossy, "bf16")
    assert cb.lossy_reduction({"splitk": 2, "reduction": "INPLACE"}, "bf16")
    assert cb.lossy_reduction(lossy, "fp32") is None
    assert cb.lossy_reduction({"splitk": 8, "reduction": "COMPUTE_TYPE"}, "bf16") is None
    assert cb.lossy_reduction({"splitk": 1, "reduction": "OUTPUT_TYPE"}, "bf16") is None
    fast = cb.Candidate("lt-fast", cb.CUBLASLT, lambda *a: None, dict(lossy))
    cands = [_cand("gemmex", cb.GEMM_EX), fast, _cand("lt1")]
    timed = []

    def measure(c):
        timed.append(c.name)
        return {"gemmex": 2.0, "lt-fast": 0.5, "lt1": 1.0}[c.name], 0.5, 9

    sel = cb.select(cands, lambda c: 0.0, measure, 1.0, 1e12)
    assert sel.winner.candidate.name == "lt1" and "lt-fast" not in timed
    by = {c["name"]: c for c in sel.record()["candidates"]}
    assert by["lt-fast"]["excluded"].startswith("adds its 8 split-K partial sums")
    sel = cb.select(cands, lambda c: 0.0, measure, 1.0, 1e12, out_dtype="fp32")
    assert sel.winner.candidate.name == "lt-fast"
