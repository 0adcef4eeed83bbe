"""The cuBLASLt FP8 reference without a GPU: the TN mapping (row-major A @ B^T with B given N x K
-> cuBLASLt's column-major D = op(A) op(B) with transa = T, transb = N) proved by a fake
cublasLtMatmul that honours the transposes on host memory, the descriptor attributes the plan
sets, selection against the exact product, the summary, and the candidates' refusals. With
GEMMLAB_CUBLASLT_LIB pointing at a libcublasLt, its host-only calls check the attribute types."""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np
import pytest

from gemmlab.bench import cublas_best as cb
from gemmlab.errors import InputError, UserError
from gemmlab.numerics import bf16, fp8
from gemmlab.runtime import cublaslt as lt

_NP = {lt.CUDA_R_16BF: np.uint16, lt.CUDA_R_32F: np.float32, lt.CUDA_R_8F_E4M3: np.uint8}
_CT = {np.uint16: ctypes.c_uint16, np.float32: ctypes.c_float, np.uint8: ctypes.c_uint8}


def _view(ptr, dtype, count):
    return np.ctypeslib.as_array((_CT[dtype] * count).from_address(ptr)).view(dtype)


def _decode(x, t):
    if t == lt.CUDA_R_8F_E4M3:
        return fp8.from_bits(x).astype(np.float64)
    return bf16.from_bits(x).astype(np.float64) if t == lt.CUDA_R_16BF else x.astype(np.float64)


def aligned(shape, dtype, align=256):
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    raw = np.empty(n * dtype.itemsize + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off: off + n * dtype.itemsize].view(dtype).reshape(shape)


class FakeLt8:
    """LtApi with cublasLtMatmul's column-major semantics, transposes included, on host memory."""

    def __init__(self, n_algos=2):
        self.next = 100
        self.live: dict[int, tuple] = {}
        self.attrs: dict[int, dict[str, int]] = {}
        self.n_algos = n_algos
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
        h = self._new(("desc",))
        self.attrs[h] = {}
        return h

    def desc_attribute(self, desc, name, value):
        assert name in lt.DESC_ATTRIBUTES
        self.attrs[desc][name] = value

    def layout(self, layout):
        return self._new(("layout", layout))

    def preference(self, workspace, alignment):
        return self._new(("pref",))

    def heuristics(self, handle, desc, layouts, pref, count):
        return [lt.LtAlgo(bytes([i + 1] * 64), 0, 1.0, {"algo_id": 70 + i})
                for i in range(min(count, self.n_algos))]

    def matmul(self, handle, desc, alpha_ptr, a_ptr, a_layout, b_ptr, b_layout, beta_ptr, c_ptr,
               c_layout, d_ptr, d_layout, algo, workspace_ptr, workspace_size, stream):
        at = self.attrs[desc]
        self.calls.append(dict(at))
        la, lb, lc, ld = (self.live[x][1] for x in (a_layout, b_layout, c_layout, d_layout))

        def stored(ptr, L):  # a rows x cols column-major matrix with leading dimension ld
            mem = _view(ptr, _NP[L.dtype], L.ld * L.cols)
            return mem.reshape(L.cols, L.ld).T[: L.rows]

        A = _decode(stored(a_ptr, la), la.dtype)
        B = _decode(stored(b_ptr, lb), lb.dtype)
        opA = A.T if at.get("transa", 0) == lt.CUBLAS_OP_T else A
        opB = B.T if at.get("transb", 0) == lt.CUBLAS_OP_T else B
        assert opA.shape[1] == opB.shape[0], "k of op(A) and op(B) differ"
        assert (lc.rows, lc.cols) == (opA.shape[0], opB.shape[1]) and lc == ld and c_ptr == d_ptr
        al = _view(alpha_ptr, np.float32, 1)[0]
        be = _view(beta_ptr, np.float32, 1)[0]
        c = stored(c_ptr, lc)
        acc = al * (opA @ opB)
        if be != 0:
            acc = acc + be * _decode(c, lc.dtype)
        c[...] = bf16.to_bits(acc.astype(np.float32))

    def destroy(self, kind, obj):
        self.live.pop(obj)


# --- the mapping ------------------------------------------------------------------------------
def test_fp8_problem_is_tn_with_k_major_operands():
    p = lt.lt_problem(5, 7, 32, "bf16", in_dtype="fp8")
    L = p.layouts
    assert L["A"] == lt.Layout(lt.CUDA_R_8F_E4M3, 32, 7, 32)  # our B (N x K) = K x N col-major
    assert L["B"] == lt.Layout(lt.CUDA_R_8F_E4M3, 32, 5, 32)  # our A (M x K) = K x M col-major
    assert L["C"] == L["D"] == lt.Layout(lt.CUDA_R_16BF, 7, 5, 7)
    assert p.trans == (lt.CUBLAS_OP_T, lt.CUBLAS_OP_N) and p.in_dtype == "fp8"
    assert p.operands(10, 20, 30) == (20, 10, 30, 30)  # cuBLASLt's A is our B
    assert lt.lt_problem(5, 7, 3, "bf16").trans == (lt.CUBLAS_OP_N, lt.CUBLAS_OP_N)
    with pytest.raises(InputError, match="FP8 reference writes bf16 C only"):
        lt.lt_problem(5, 7, 32, "fp32", in_dtype="fp8")
    with pytest.raises(InputError, match="in_dtype='fp16'"):
        lt.lt_problem(5, 7, 32, "bf16", in_dtype="fp16")
    assert lt.CUDA_R_8F_E4M3 == 28 and lt.DESC_ATTRIBUTES["fast_accum"] == (25, ctypes.c_int8)
    assert lt.DESC_ATTRIBUTES["transa"][0] == 3 and lt.DESC_ATTRIBUTES["transb"][0] == 4


@pytest.mark.parametrize("fast", [True, False, None])
@pytest.mark.parametrize("shape", [(5, 7, 32), (1, 1, 16), (33, 17, 80)])
@pytest.mark.parametrize("beta", [0.0, -0.5])
def test_fp8_plan_computes_a_times_b_transposed(shape, fast, beta):
    M, N, K = shape
    rng = np.random.default_rng(3)
    a, b, c = aligned((M, K), np.uint8), aligned((N, K), np.uint8), aligned((M, N), np.uint16)
    a[...] = fp8.to_bits(rng.standard_normal((M, K)).astype(np.float32))
    b[...] = fp8.to_bits(rng.standard_normal((N, K)).astype(np.float32))
    c0 = bf16.to_bits(rng.standard_normal((M, N)).astype(np.float32))
    c[...] = c0
    api = FakeLt8()
    plan = lt.LtPlan(api, api.create(), M, N, K, "bf16", in_dtype="fp8", fast_accum=fast)
    al, be = np.array(1.5, np.float32), np.array(beta, np.float32)
    plan.run(1, a.ctypes.data, b.ctypes.data, c.ctypes.data, al.ctypes.data, be.ctypes.data, 0, 0)
    want = 1.5 * (fp8.from_bits(a).astype(np.float64) @ fp8.from_bits(b).astype(np.float64).T)
    want += beta * bf16.from_bits(c0)
    np.testing.assert_array_equal(bf16.from_bits(c), bf16.round_bf16(want.astype(np.float32)))
    (attrs,) = api.calls
    want_attrs = {"transa": lt.CUBLAS_OP_T, "transb": lt.CUBLAS_OP_N}
    if fast is not None:
        want_attrs["fast_accum"] = int(fast)
    assert attrs == want_attrs


def test_fast_accum_is_fp8_only_and_bf16_plans_set_no_attribute():
    api = FakeLt8()
    with pytest.raises(InputError, match="FP8-only"):
        lt.LtPlan(api, api.create(), 8, 8, 8, "bf16", fast_accum=True)
    plan = lt.LtPlan(api, api.create(), 8, 8, 8, "bf16")
    assert api.attrs[plan.desc] == {}


# --- selection against the exact product ------------------------------------------------------
def _cand(name, kind=cb.CUBLASLT):
    return cb.Candidate(name, kind, lambda *a: None, {"tag": name})


def test_select_without_a_baseline():
    cands = [_cand("boom"), _cand("fast"), _cand("slow"), _cand("off")]
    diffs = {"fast": 1e-3, "slow": 2e-3, "off": 0.5}

    def agree(c):
        if c.name == "boom":
            raise RuntimeError("cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED (15)")
        return diffs[c.name]

    sel = cb.select(cands, agree, lambda c: ({"fast": 1.0, "slow": 2.0}[c.name], 1.0, 9), 0.02,
                    1e12, baseline=False)
    assert sel.winner.candidate.name == "fast" and sel.against == "exact"
    rec = {c["name"]: c for c in sel.record()["candidates"]}
    assert rec["boom"]["excluded"].startswith("failed: RuntimeError: cublasLtMatmul failed")
    assert rec["off"]["excluded"].startswith("disagrees with the exact product: normwise")
    assert rec["fast"]["rel_diff_vs_exact"] == 1e-3 and "rel_diff_vs_gemm_ex" not in rec["fast"]
    with pytest.raises(UserError, match=r"no cuBLAS candidate could be timed \(1 tried\): off: "
                                        r"disagrees"):
        cb.select([_cand("off")], agree, lambda c: (1.0, 1.0, 1), 0.02, 1e12, baseline=False)


def test_fp8_summary_names_winner_types_and_modes():
    win = cb.Candidate("cublasLt FP8 fast-accum heuristic #0: algo 66 tile 128x256", cb.CUBLASLT,
                       lambda *a: None, {"fast_accum": True})
    t = cb.Candidate("torch._scaled_mm (use_fast_accum, PyTorch 2.9)", cb.TORCH, lambda *a: None)
    sel = cb.Selection(cb.Outcome(win, 1e-3, 1e-3, 9),
                       [cb.Outcome(win, 1e-3, 1e-3, 9), cb.Outcome(t, 2e-3, 2e-3, 9)], 1e12,
                       "exact")
    s = cb.fp8_summary(sel)
    assert s.startswith("cuBLASLt FP8 at its best: cublasLt FP8 fast-accum heuristic #0")
    assert "fastest of 2 timed candidates: cuBLASLt heuristics with FAST_ACCUM 1 and 0, " \
           "torch._scaled_mm" in s
    assert "A,B CUDA_R_8F_E4M3 (TN: B given N x K), C,D CUDA_R_16BF, CUBLAS_COMPUTE_32F" in s
    best = cb.BestBf16(sel, "bf16", summary_text=s)
    assert best.summary == s and best.launched["candidates"][0]["rel_diff_vs_exact"] is None


def test_best_fp8_without_any_candidate_says_why(monkeypatch):
    monkeypatch.setattr(cb, "_lt_fp8_candidates",
                        lambda *a: ([], [], ["cuBLASLt unavailable: CublasLtError: x"]))
    monkeypatch.setattr(cb, "_torch_fp8_candidate", lambda: (None, "PyTorch is not importable"))
    monkeypatch.setitem(sys.modules, "cupy", object())
    with pytest.raises(UserError, match="no cuBLASLt FP8 candidate at M=64, N=64, K=64: cuBLASLt "
                                        "unavailable: CublasLtError: x; PyTorch is not importable"):
        cb.best_fp8(64, 64, 64)


def test_torch_fp8_candidate_reasons(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert cb._torch_fp8_candidate() == (None, "PyTorch is not importable")
    monkeypatch.setenv("GEMMLAB_CUBLAS_TORCH", "0")
    assert cb._torch_fp8_candidate()[1] == "torch candidate off (GEMMLAB_CUBLAS_TORCH=0)"


def test_select_on_gpu_fp8_wiring_with_numpy(monkeypatch):
    """_select_on_gpu(in_dtype="fp8") with NumPy standing in for CuPy: e4m3 A (M x K) and B
    (N x K), every candidate held to the exact product, timed through time_fn."""
    from test_cublas_best import _Backend, _Clock, _numpy_cupy

    from gemmlab.bench import timer

    monkeypatch.setitem(sys.modules, "cupy", _numpy_cupy())
    monkeypatch.setitem(sys.modules, "torch", None)
    clock = _Clock()
    monkeypatch.setattr(timer, "CupyBackend", lambda flush_l2=True: _Backend(clock))
    M, N, K = 24, 40, 64
    seen = {}

    def gemm(cost_s, scale=1.0):
        def run(a, b, c, al, be):
            seen["shapes"] = (a.shape, b.shape, a.dtype, c.dtype)
            clock.now += cost_s
            acc = al * scale * (fp8.from_bits(a).astype(np.float64)
                                @ fp8.from_bits(b).astype(np.float64).T)
            if be != 0:
                acc += be * bf16.from_bits(c)
            c[...] = bf16.to_bits(acc.astype(np.float32))
        return run

    cands = [cb.Candidate("lt wrong", cb.CUBLASLT, gemm(1e-4, scale=1.1)),
             cb.Candidate("lt slow", cb.CUBLASLT, gemm(3e-3)),
             cb.Candidate("lt fast", cb.CUBLASLT, gemm(1e-3))]
    opts = timer.TimingOptions(warmup_ms=1, rep_ms=10, min_repeats=5, estimate_runs=2)
    sel, kernels, why = cb._select_on_gpu(cands, M, N, K, "bf16", 1.25, 0.0, opts, True, 0,
                                          in_dtype="fp8")
    assert seen["shapes"] == ((M, K), (N, K), np.dtype(np.uint8), np.dtype(np.uint16))
    assert sel.winner.candidate.name == "lt fast" and sel.against == "exact"
    by = {o.candidate.name: o for o in sel.outcomes}
    assert by["lt wrong"].excluded.startswith("disagrees with the exact product")
    assert by["lt fast"].rel_diff <= fp8.tolerance(K).normwise
    assert kernels is None and "PyTorch" in why


# --- the real library's host-only calls --------------------------------------------------------
@pytest.mark.skipif(not os.environ.get("GEMMLAB_CUBLASLT_LIB"),
                    reason="set GEMMLAB_CUBLASLT_LIB to a libcublasLt.so to check the ctypes layer")
def test_fp8_descriptor_attributes_on_the_real_library():
    api = lt.CtypesLt(os.environ["GEMMLAB_CUBLASLT_LIB"])
    d = api.matmul_desc(lt.CUBLAS_COMPUTE_32F, lt.CUDA_R_32F)
    get = api.lib.cublasLtMatmulDescGetAttribute
    get.restype = ctypes.c_int
    get.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                    ctypes.POINTER(ctypes.c_size_t)]
    for name, value in (("transa", lt.CUBLAS_OP_T), ("transb", lt.CUBLAS_OP_N),
                        ("fast_accum", 1)):
        api.desc_attribute(d, name, value)  # the exact sizes are accepted
        attr, ctype = lt.DESC_ATTRIBUTES[name]
        back, written = ctype(), ctypes.c_size_t()
        assert get(d, attr, ctypes.byref(back), ctypes.sizeof(back), ctypes.byref(written)) == 0
        assert back.value == value and written.value == ctypes.sizeof(ctype)
    # a wrongly sized fast_accum (int32 instead of int8) is refused: the size above was checked
    wrong = ctypes.c_int32(1)
    assert api.lib.cublasLtMatmulDescSetAttribute(d, 25, ctypes.byref(wrong), 4) == 7
    lays = [api.layout(x) for x in lt.lt_problem(100, 200, 320, "bf16", "fp8").layouts.values()]
    for x in lays:
        api.destroy("layout", x)
    api.destroy("matmul_desc", d)
