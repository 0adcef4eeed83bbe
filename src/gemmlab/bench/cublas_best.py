"""cuBLAS at its best for one BF16 GEMM: the reference a rung is compared with.

A rung that beats cuBLAS's *default* algorithm has not beaten cuBLAS. For the run's shape and
types this module times, briefly and through the harness's own loop (``time_fn``: L2 flushed,
CUDA events), every candidate cuBLAS offers and keeps the fastest:

* ``cublasGemmEx`` with ``CUBLAS_GEMM_DEFAULT`` (what ``runtime.cublas.gemm_bf16`` calls);
* each algorithm ``cublasLtMatmulAlgoGetHeuristic`` proposes (``DEFAULT_ALGOS`` asked for, with a
  32 MiB workspace; ``runtime.cublaslt``), with its configuration decoded (algorithm id, tile,
  stages, cluster shape, split-K);
* optionally ``torch.matmul`` (as ``Tensor.addmm_``) on the same bf16 buffers, when PyTorch is
  importable and C is bf16 - PyTorch's own cuBLAS/cuBLASLt path, labelled as such, with its
  reduced-precision bf16 reductions switched off so it computes what the others compute.

Every candidate must first agree with cublasGemmEx on one product (normwise difference within
twice the BF16 bound: both are held to ``numerics.bf16.tolerance`` against the exact product); one
that does not, or that fails to run, is recorded with the reason and not timed. The winner is then
checked and timed by the ladder like any row (``bench.ladder.cublas_bf16_target``); the selection
(every candidate's brief median, the winner's configuration and, through CUPTI when PyTorch is
there, the names of the kernels it launched) goes with the row as its ``launched`` record.

``select`` and ``split_by_marker`` are pure (CPU-tested with fakes); ``best_bf16`` does the GPU
work. ``GEMMLAB_CUBLAS_TORCH=0`` keeps PyTorch out (no torch candidate, no kernel names).

FP8 (``best_fp8``): cublasGemmEx has no FP8, so every candidate is cuBLASLt's (A, B
``CUDA_R_8F_E4M3`` in the TN layout, C and D ``CUDA_R_16BF``, ``CUBLAS_COMPUTE_32F``, float32
alpha/beta, A/B scales left at 1), asked for its heuristic algorithms twice: with
``CUBLASLT_MATMUL_DESC_FAST_ACCUM`` = 1 (partial sums stay in the tensor cores' accumulator, as
gemmlab's FP8 rung does: like for like) and = 0 (cuBLASLt's default, partial sums promoted to FP32
now and then: more accurate, maybe slower); plus ``torch._scaled_mm`` (fast accumulation, unit
scales, beta = 0 only) when PyTorch has it. No candidate is a baseline: each must agree with the
exact (float64) product of the same e4m3 inputs within the FP8 normwise bound
(``numerics.fp8.tolerance``), the agreeing ones are timed, the fastest is kept; every candidate's
accumulation mode goes into the record.
"""

from __future__ import annotations

import logging
import math
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from gemmlab.bench.timer import TimingOptions
from gemmlab.errors import InputError, UserError
from gemmlab.problem import gemm_flops

log = logging.getLogger(__name__)

Launch = Callable[[Any, Any, Any, float, float], None]

GEMM_EX = "gemm_ex"
CUBLASLT = "cublaslt"
TORCH = "torch"

# Brief timing per candidate: enough runs for a stable median at 4096-8192 (0.2-1.5 ms each),
# about 50 ms per candidate; the winner is then timed with the run's full options.
SELECT_TIMING = TimingOptions(warmup_ms=10.0, rep_ms=40.0, min_repeats=8, max_repeats=200,
                              estimate_runs=3)
MARKER = "gemmlab_cublas_marker"  # empty kernel separating candidates in a CUPTI trace


@dataclass
class Candidate:
    """One way cuBLAS (or PyTorch) can compute the product."""

    name: str  # e.g. "cublasLt heuristic #0: algo 66 tile 128x256 stages 64x4 ..."
    kind: str  # GEMM_EX, CUBLASLT or TORCH
    run: Launch
    detail: dict = field(default_factory=dict)  # heuristic rank, decoded configuration, ...


class Excluded(Exception):
    """A candidate left out before timing, for the reason given (not a failure of the run)."""


# cuBLASLt's split-K reduction schemes that add the K-slices' partial sums in the output type (a
# bf16 C): every slice's sum is rounded to bf16 before the next is added - up to S roundings where
# the bound every row is held to (gemmlab.numerics.bf16) allows one. H100, 511^3: "splitK 8
# reduction OUTPUT_TYPE" won the timing and then put 29,387 of 261,121 elements outside that bound.
LOSSY_REDUCTIONS = ("OUTPUT_TYPE", "INPLACE")


def lossy_reduction(detail: dict, out_dtype: str) -> Optional[str]:
    """Why a cuBLASLt candidate computes less precisely than the rows it is compared with, or
    None: a split-K reduction in a 16-bit output type."""
    splits = detail.get("splitk")
    if out_dtype != "fp32" and splits not in (None, 0, 1) and detail.get("reduction") in LOSSY_REDUCTIONS:
        return (f"adds its {splits} split-K partial sums in the output type (reduction "
                f"{detail['reduction']}): more roundings than the bound every row is held to")
    return None


@dataclass
class Outcome:
    """What selection found out about one candidate."""

    candidate: Candidate
    median_s: Optional[float] = None
    min_s: Optional[float] = None
    n: int = 0
    rel_diff: Optional[float] = None  # vs cublasGemmEx (FP8: vs the exact product), normwise
    excluded: Optional[str] = None  # why it was not timed / cannot win

    def to_dict(self, flops: float, against: str = "gemm_ex") -> dict:
        return {
            "name": self.candidate.name,
            "kind": self.candidate.kind,
            **self.candidate.detail,
            "median_ms": None if self.median_s is None else self.median_s * 1e3,
            "min_ms": None if self.min_s is None else self.min_s * 1e3,
            "n": self.n,
            "tflops": None if not self.median_s else flops / self.median_s / 1e12,
            f"rel_diff_vs_{against}": self.rel_diff,
            "excluded": self.excluded,
        }


@dataclass
class Selection:
    winner: Outcome
    outcomes: list[Outcome]
    flops: float
    against: str = "gemm_ex"  # what rel_diff compares with: "gemm_ex" or "exact"

    def record(self) -> dict:
        """The ``launched`` record of the reference row."""
        w = self.winner
        return {
            "selection": "fastest brief median among the candidates below (L2 flushed)",
            "winner": w.candidate.name,
            "winner_kind": w.candidate.kind,
            "winner_detail": dict(w.candidate.detail),
            "candidates": [o.to_dict(self.flops, self.against) for o in self.outcomes],
        }


def agreement_bound(K: int, out_dtype: str) -> float:
    """How far (normwise, relative) two correct results may differ: each is within
    ``tolerance(K).normwise`` of the exact product, so at most twice that apart (plus 1% for
    dividing by one of them rather than by the exact product's norm)."""
    from gemmlab.numerics.bf16 import tolerance

    return 2.02 * tolerance(K, out_dtype).normwise


def select(candidates: Sequence[Candidate],
           agree: Callable[[Candidate], float],
           measure: Callable[[Candidate], tuple[float, float, int]],
           bound: float, flops: float, baseline: bool = True, out_dtype: str = "bf16") -> Selection:
    """Check each candidate against the first (cublasGemmEx, the baseline: ``agree`` returns the
    normwise relative difference, 0 for the baseline itself), time those that agree (``measure``
    returns median and min seconds and the run count), keep the fastest median. A candidate that
    raises is excluded with its error; the baseline must work.

    ``baseline=False`` (FP8, where cublasGemmEx does not exist): ``agree`` compares each
    candidate with the exact product, no candidate is special, and UserError says why when none
    could be timed."""
    if baseline and (not candidates or candidates[0].kind != GEMM_EX):
        raise InputError("select: the first candidate must be cublasGemmEx (the baseline)")
    against = "cublasGemmEx" if baseline else "the exact product"
    outcomes = []
    for i, cand in enumerate(candidates):
        o = Outcome(cand)
        try:
            why = lossy_reduction(cand.detail, out_dtype) if cand.kind == CUBLASLT else None
            if why:
                raise Excluded(why)
            o.rel_diff = float(agree(cand))
            if not (o.rel_diff <= bound):  # NaN fails too
                o.excluded = (f"disagrees with {against}: normwise difference {o.rel_diff:.3g} "
                              f"> {bound:.3g}")
            else:
                o.median_s, o.min_s, o.n = measure(cand)
        except Excluded as e:
            o.excluded = str(e)
        except Exception as e:  # noqa: BLE001 - a failing candidate is recorded, not fatal
            if i == 0 and baseline:
                raise
            o.excluded = f"failed: {type(e).__name__}: {e}".splitlines()[0]
        outcomes.append(o)
    timed = [o for o in outcomes if o.excluded is None and o.median_s is not None]
    if not timed:
        why = "; ".join(f"{o.candidate.name}: {o.excluded}" for o in outcomes[:3]) or "none given"
        raise UserError(f"no cuBLAS candidate could be timed ({len(outcomes)} tried): {why}")
    winner = min(timed, key=lambda o: o.median_s)
    return Selection(winner, outcomes, flops, "gemm_ex" if baseline else "exact")


def split_by_marker(names: Sequence[str], marker: str, count: int) -> list[list[str]]:
    """Kernel names of a trace in which each of ``count`` candidates was followed by one marker
    kernel: the names between markers, candidate by candidate (empty lists past what the trace
    holds)."""
    out: list[list[str]] = [[]]
    for n in names:
        if n == marker or n.endswith(marker):
            out.append([])
        else:
            out[-1].append(n)
    out = out[:count]
    return out + [[] for _ in range(count - len(out))]


def summary(sel: Selection, out_dtype: str) -> str:
    """The reference row's one-line description."""
    w = sel.winner.candidate
    n_timed = sum(1 for o in sel.outcomes if o.median_s is not None)
    c_type = "CUDA_R_16BF" if out_dtype == "bf16" else "CUDA_R_32F"
    return (f"cuBLAS BF16 at its best: {w.name} (fastest of {n_timed} timed candidates: "
            f"cublasGemmEx default, cuBLASLt heuristics{', torch.matmul' if any(o.candidate.kind == TORCH for o in sel.outcomes) else ''}); "
            f"A,B CUDA_R_16BF, C {c_type}, CUBLAS_COMPUTE_32F")


# --------------------------------------------------------------------------------------------
# GPU side


def torch_enabled() -> bool:
    return os.environ.get("GEMMLAB_CUBLAS_TORCH", "1") != "0"


class BestBf16:
    """The winning candidate as a launch callable (what ``Target.prepare`` returns), with the
    selection record as ``launched`` and a one-line ``summary``."""

    def __init__(self, selection: Selection, out_dtype: str, keep: Sequence[Any] = (),
                 summary_text: Optional[str] = None) -> None:
        self.selection = selection
        self._run = selection.winner.candidate.run
        self.launched = selection.record()
        self.summary = summary_text or summary(selection, out_dtype)
        self._keep = list(keep)  # plan, workspace: alive as long as the callable

    def __call__(self, a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
        self._run(a, b, c, alpha, beta)


def _gemm_ex_candidate() -> Candidate:
    from gemmlab.runtime import cublas

    return Candidate("cublasGemmEx CUBLAS_GEMM_DEFAULT", GEMM_EX, cublas.gemm_bf16,
                     {"algo": "CUBLAS_GEMM_DEFAULT"})


def _lt_candidates(M: int, N: int, K: int, out_dtype: str, count: int, workspace: int,
                   ) -> tuple[list[Candidate], list[Any], Optional[str]]:
    """(candidates, objects to keep alive, why there are none)."""
    import cupy
    import numpy as np

    from gemmlab.runtime import cublas, cublaslt

    try:
        # A cuBLAS handle first: CuPy may load libcublas (and with it libcublasLt) lazily, and
        # cublaslt.api() prefers the copy already in the process.
        cublas._handle("fp32")
        api = cublaslt.api()
        h = cublaslt.handle(cupy.cuda.runtime.getDevice())
        plan = cublaslt.LtPlan(api, h, M, N, K, out_dtype, workspace=workspace, count=count)
    except Exception as e:  # noqa: BLE001 - no cuBLASLt: cublasGemmEx alone, said so
        return [], [], f"cuBLASLt unavailable: {type(e).__name__}: {e}".splitlines()[0]
    ws = cupy.empty(max(workspace, 1), dtype=cupy.uint8)
    version = api.version()
    cands = []
    for i in range(len(plan.algos)):
        desc = plan.describe(i)

        def run(a, b, c, al, be, _i=i):
            alpha = np.array(al, dtype=np.float32)
            beta = np.array(be, dtype=np.float32)
            plan.run(_i, a.data.ptr, b.data.ptr, c.data.ptr, alpha.ctypes.data, beta.ctypes.data,
                     ws.data.ptr, cupy.cuda.get_current_stream().ptr)

        name = f"cublasLt heuristic #{i}: {cublaslt.short_label(desc)}"
        cands.append(Candidate(name, CUBLASLT, run,
                               {"heuristic_rank": i, "cublaslt_version": version,
                                "library": getattr(api, "path", None), **desc}))
    why = None if cands else "cuBLASLt's heuristic returned no algorithm for this problem"
    return cands, [plan, ws], why


def _torch_candidate(out_dtype: str) -> tuple[Optional[Candidate], Optional[str]]:
    if not torch_enabled():
        return None, "torch candidate off (GEMMLAB_CUBLAS_TORCH=0)"
    if out_dtype != "bf16":
        return None, "torch.matmul has no bf16 x bf16 -> float32 output without an extra cast"
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not importable"
    import cupy

    def as_bf16(x):  # uint16 bits -> a torch bfloat16 view of the same memory (int16 via DLPack)
        return torch.from_dlpack(x.view(cupy.int16)).view(torch.bfloat16)

    matmul = torch.backends.cuda.matmul

    def run(a, b, c, al, be):
        ta, tb, tc = as_bf16(a), as_bf16(b), as_bf16(c)
        ptr = cupy.cuda.get_current_stream().ptr
        stream = torch.cuda.ExternalStream(ptr) if ptr else torch.cuda.default_stream()
        # Full-precision reductions for this call only (what the other candidates compute); the
        # user's own setting is put back, so timing the reference changes nothing of theirs.
        saved = matmul.allow_bf16_reduced_precision_reduction
        matmul.allow_bf16_reduced_precision_reduction = False
        try:
            with torch.cuda.stream(stream):
                tc.addmm_(ta, tb, beta=be, alpha=al)
        finally:
            matmul.allow_bf16_reduced_precision_reduction = saved

    return Candidate(f"torch.matmul (Tensor.addmm_, PyTorch {torch.__version__})", TORCH, run,
                     {"torch": torch.__version__,
                      "allow_bf16_reduced_precision_reduction": False}), None


def kernel_names(runs: Sequence[Callable[[], None]], synchronize: Callable[[], None]
                 ) -> tuple[Optional[list[list[str]]], Optional[str]]:
    """The kernels each of ``runs`` launches, seen by CUPTI through torch.profiler: (names per
    run, None) or (None, why not)."""
    if not torch_enabled():
        return None, "kernel names need PyTorch's profiler (GEMMLAB_CUBLAS_TORCH=0)"
    try:
        import json
        import tempfile

        import cupy
        import torch  # noqa: F401 - the package itself first: a cached torch.profiler is not enough
        from torch.profiler import ProfilerActivity, profile

        from gemmlab.profile.cupti_timeline import kernels_from_trace
    except ImportError as e:
        return None, f"kernel names need PyTorch's profiler ({e})"
    marker = cupy.RawKernel('extern "C" __global__ void ' + MARKER + "() {}", MARKER)
    try:
        synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for fn in runs:
                try:
                    fn()
                    synchronize()
                except Exception:  # noqa: BLE001 - a failing candidate shows no kernel
                    pass
                marker((1,), (1,), ())
                synchronize()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "trace.json")
            prof.export_chrome_trace(path)
            with open(path) as f:
                events = kernels_from_trace(json.load(f))
    except Exception as e:  # noqa: BLE001 - names are a bonus; the timing stands without them
        return None, f"CUPTI trace failed: {type(e).__name__}: {e}".splitlines()[0]
    return split_by_marker([e.name for e in events], MARKER, len(runs)), None


def best_bf16(M: int, N: int, K: int, out_dtype: str = "bf16", alpha: float = 1.0,
              beta: float = 0.0, *, algos: int = 8, workspace: int = 32 << 20,
              options: TimingOptions = SELECT_TIMING, names: bool = True,
              seed: int = 0) -> BestBf16:
    """Select the fastest cuBLAS candidate for this GEMM on the current GPU (see the module
    docstring); the returned callable launches it."""
    import cupy

    cands = [_gemm_ex_candidate()]
    lt, keep, lt_note = _lt_candidates(M, N, K, out_dtype, algos, workspace)
    cands += lt
    tc, torch_note = _torch_candidate(out_dtype)
    if tc is not None:
        cands.append(tc)
    sel, kernels, names_note = _select_on_gpu(cands, M, N, K, out_dtype, alpha, beta, options,
                                              names, seed)
    cupy.get_default_memory_pool().free_all_blocks()  # the selection's operands are gone
    best = BestBf16(sel, out_dtype, keep)
    if kernels is not None:
        for rec, ks in zip(best.launched["candidates"], kernels):
            rec["kernels"] = ks
        best.launched["kernel"] = kernels[sel.outcomes.index(sel.winner)]
    best.launched["notes"] = [n for n in (lt_note, torch_note, names_note) if n]
    log.info("cuBLAS BF16 reference at %dx%dx%d: %s", M, N, K, best.summary)
    return best


# --------------------------------------------------------------------------------------------
# FP8


def fp8_summary(sel: Selection) -> str:
    """The FP8 reference row's one-line description."""
    w = sel.winner
    n_timed = sum(1 for o in sel.outcomes if o.median_s is not None)
    kinds = "cuBLASLt heuristics with FAST_ACCUM 1 and 0"
    if any(o.candidate.kind == TORCH for o in sel.outcomes):
        kinds += ", torch._scaled_mm"
    return (f"cuBLASLt FP8 at its best: {w.candidate.name} (fastest of {n_timed} timed "
            f"candidates: {kinds}); A,B CUDA_R_8F_E4M3 (TN: B given N x K), C,D CUDA_R_16BF, "
            f"CUBLAS_COMPUTE_32F, scale type CUDA_R_32F, A/B scales 1")


def _lt_fp8_candidates(M: int, N: int, K: int, count: int, workspace: int,
                       ) -> tuple[list[Candidate], list[Any], list[str]]:
    """cuBLASLt's FP8 heuristic algorithms, FAST_ACCUM on then off: (candidates, objects to keep
    alive, notes on what is missing)."""
    import cupy
    import numpy as np

    from gemmlab.runtime import cublas, cublaslt

    try:
        cublas._handle("fp32")  # loads libcublas (and its libcublasLt) first, as for bf16
        api = cublaslt.api()
        h = cublaslt.handle(cupy.cuda.runtime.getDevice())
    except Exception as e:  # noqa: BLE001 - said in the notes; best_fp8 then has no candidate
        return [], [], [f"cuBLASLt unavailable: {type(e).__name__}: {e}".splitlines()[0]]
    ws = cupy.empty(max(workspace, 1), dtype=cupy.uint8)
    version = api.version()
    cands: list[Candidate] = []
    keep: list[Any] = [ws]
    notes: list[str] = []
    for fast in (True, False):
        mode = "fast-accum" if fast else "promoted"
        try:
            plan = cublaslt.LtPlan(api, h, M, N, K, "bf16", workspace=workspace, count=count,
                                   in_dtype="fp8", fast_accum=fast)
        except Exception as e:  # noqa: BLE001 - one mode may be unsupported; the other may run
            notes.append(f"cuBLASLt FP8 {mode}: {type(e).__name__}: {e}".splitlines()[0])
            continue
        keep.append(plan)
        if not plan.algos:
            notes.append(f"cuBLASLt FP8 {mode}: the heuristic returned no algorithm")
        for i in range(len(plan.algos)):
            desc = plan.describe(i)

            def run(a, b, c, al, be, _i=i, _plan=plan):
                alpha = np.array(al, dtype=np.float32)
                beta = np.array(be, dtype=np.float32)
                _plan.run(_i, a.data.ptr, b.data.ptr, c.data.ptr, alpha.ctypes.data,
                          beta.ctypes.data, ws.data.ptr, cupy.cuda.get_current_stream().ptr)

            name = f"cublasLt FP8 {mode} heuristic #{i}: {cublaslt.short_label(desc)}"
            cands.append(Candidate(name, CUBLASLT, run,
                                   {"fast_accum": fast, "heuristic_rank": i,
                                    "cublaslt_version": version,
                                    "library": getattr(api, "path", None), **desc}))
    return cands, keep, notes


def _torch_fp8_candidate() -> tuple[Optional[Candidate], Optional[str]]:
    """torch._scaled_mm on the same e4m3 buffers (fast accumulation, scale_a = alpha, scale_b =
    1, written into C through ``out=``); beta != 0 is refused (no C term)."""
    if not torch_enabled():
        return None, "torch candidate off (GEMMLAB_CUBLAS_TORCH=0)"
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not importable"
    if not (hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")):
        return None, f"PyTorch {torch.__version__} has no torch._scaled_mm / float8_e4m3fn"
    import cupy

    scales: dict = {}

    def scale(v: float, device: Any) -> Any:
        key = (float(v), str(device))
        if key not in scales:  # made once: no host-to-device copy inside the timed launches
            scales[key] = torch.tensor(float(v), dtype=torch.float32, device=device)
        return scales[key]

    def run(a, b, c, al, be):
        if be != 0.0:
            raise InputError("torch._scaled_mm has no beta * C term")
        ta = torch.from_dlpack(a).view(torch.float8_e4m3fn)  # M x K row-major
        tb = torch.from_dlpack(b).view(torch.float8_e4m3fn).t()  # K x N column-major, as it wants
        tc = torch.from_dlpack(c.view(cupy.int16)).view(torch.bfloat16)
        ptr = cupy.cuda.get_current_stream().ptr
        stream = torch.cuda.ExternalStream(ptr) if ptr else torch.cuda.default_stream()
        with torch.cuda.stream(stream):
            torch._scaled_mm(ta, tb, scale_a=scale(al, ta.device), scale_b=scale(1.0, ta.device),
                             out_dtype=torch.bfloat16, use_fast_accum=True, out=tc)

    return Candidate(f"torch._scaled_mm (use_fast_accum, PyTorch {torch.__version__})", TORCH, run,
                     {"torch": torch.__version__, "fast_accum": True}), None


def best_fp8(M: int, N: int, K: int, alpha: float = 1.0, beta: float = 0.0, *, algos: int = 8,
             workspace: int = 32 << 20, options: TimingOptions = SELECT_TIMING,
             names: bool = True, seed: int = 0) -> BestBf16:
    """Select the fastest cuBLASLt FP8 candidate (or torch._scaled_mm) for this e4m3 GEMM (B
    given N x K) on the current GPU; the returned callable launches it (see the module
    docstring)."""
    import cupy

    cands, keep, notes = _lt_fp8_candidates(M, N, K, algos, workspace)
    tc, torch_note = _torch_fp8_candidate()
    if tc is not None:
        cands.append(tc)
    if not cands:
        raise UserError(f"no cuBLASLt FP8 candidate at M={M}, N={N}, K={K}: "
                        + "; ".join(notes + [torch_note or ""]).rstrip("; "))
    sel, kernels, names_note = _select_on_gpu(cands, M, N, K, "bf16", alpha, beta, options,
                                              names, seed, in_dtype="fp8")
    cupy.get_default_memory_pool().free_all_blocks()
    best = BestBf16(sel, "bf16", keep, summary_text=fp8_summary(sel))
    if kernels is not None:
        for rec, ks in zip(best.launched["candidates"], kernels):
            rec["kernels"] = ks
        best.launched["kernel"] = kernels[sel.outcomes.index(sel.winner)]
    best.launched["notes"] = [n for n in (*notes, torch_note, names_note) if n]
    log.info("cuBLASLt FP8 reference at %dx%dx%d: %s", M, N, K, best.summary)
    return best


def _select_on_gpu(cands: Sequence[Candidate], M: int, N: int, K: int, out_dtype: str,
                   alpha: float, beta: float, options: TimingOptions, names: bool, seed: int,
                   in_dtype: str = "bf16",
                   ) -> tuple[Selection, Optional[list[list[str]]], Optional[str]]:
    """``select`` on fresh random operands of the run's shape (freed on return), then the
    candidates' kernel names when asked: (selection, names per candidate or None, why None).
    ``in_dtype="fp8"``: e4m3 A (M x K) and B (N x K), each candidate held to the exact product."""
    import cupy

    from gemmlab.bench.timer import CupyBackend, time_fn
    from gemmlab.numerics.bf16 import from_bits, to_bits

    rng = cupy.random.default_rng(seed + 7_000_003)
    x = lambda shape: to_bits(rng.random(shape, dtype=cupy.float32) * 2 - 1)  # noqa: E731
    if in_dtype == "fp8":
        from gemmlab.numerics import fp8

        a = fp8.to_bits(rng.random((M, K), dtype=cupy.float32) * 2 - 1)
        b = fp8.to_bits(rng.random((N, K), dtype=cupy.float32) * 2 - 1)
    else:
        a, b = x((M, K)), x((K, N))
    out_np = cupy.uint16 if out_dtype == "bf16" else cupy.float32
    c_ref = cupy.zeros((M, N), dtype=out_np)
    c = (x((M, N)) if out_dtype == "bf16"
         else rng.random((M, N), dtype=cupy.float32) * 2 - 1)
    sync = lambda: cupy.cuda.get_current_stream().synchronize()  # noqa: E731
    decode = (lambda y: from_bits(y).astype(cupy.float64)) if out_dtype == "bf16" else (
        lambda y: y.astype(cupy.float64))

    def agree(cand: Candidate) -> float:
        target = c_ref if cand.kind == GEMM_EX else cupy.zeros((M, N), dtype=out_np)
        cand.run(a, b, target, alpha, 0.0)
        sync()
        if cand.kind == GEMM_EX:
            return 0.0
        ref = decode(c_ref)
        num = float(cupy.linalg.norm(decode(target) - ref))
        den = float(cupy.linalg.norm(ref))
        return num / den if den > 0 else (0.0 if num == 0 else math.inf)

    backend = CupyBackend(flush_l2=options.flush_l2)

    def measure(cand: Candidate) -> tuple[float, float, int]:
        res = time_fn(lambda: cand.run(a, b, c, alpha, beta), backend, options)
        s = sorted(res.samples_s)
        n = len(s)
        med = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
        return med, s[0], n

    if in_dtype == "fp8":
        from gemmlab.numerics import fp8

        exact = alpha * (fp8.from_bits(a).astype(cupy.float64)
                         @ fp8.from_bits(b).astype(cupy.float64).T)
        exact_norm = float(cupy.linalg.norm(exact))

        def agree_exact(cand: Candidate) -> float:
            target = cupy.zeros((M, N), dtype=out_np)
            cand.run(a, b, target, alpha, 0.0)
            sync()
            num = float(cupy.linalg.norm(decode(target) - exact))
            return num / exact_norm if exact_norm > 0 else (0.0 if num == 0 else math.inf)

        sel = select(cands, agree_exact, measure, fp8.tolerance(K).normwise, gemm_flops(M, N, K),
                     baseline=False)
    else:
        sel = select(cands, agree, measure, agreement_bound(K, out_dtype), gemm_flops(M, N, K),
                     out_dtype=out_dtype)
    if not names:
        return sel, None, None
    runs = [lambda o=o: o.candidate.run(a, b, c, alpha, beta) for o in sel.outcomes]
    kernels, why = kernel_names(runs, sync)
    return sel, kernels, why
