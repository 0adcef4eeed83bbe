"""Check and time a user's own GEMM kernel like a rung, against cuBLAS at its best, in one process.

The order of work, and why:

1. compile (a compile error is the user's input: exit 2 with the numbered source);
2. check at the run's shape, then at shapes that are multiples of no tile (``CHECK_SHAPES``, where
   the declaration's ``requires`` allows them): fresh random inputs, a poisoned output and guard
   region, NaN caught, the derived error bounds (``bench.check``). A wrong result stops here: it is
   never timed, so it can never be reported as a timing;
3. time the kernel and cuBLAS in interleaved rounds (A, B, B, A): at 8192³ an H100 sits at its
   700 W cap and its SM clock drifts between 1350 and 1500 MHz, so timing all of one side first
   would compare different clocks. Each side's samples are the union of its rounds;
4. optionally, the ladder's rungs at the same shape (``ladder_rungs``), so the kernel can be placed
   on the ladder by % of cuBLAS.

``measure_user`` returns an ``Outcome``: the run record (kind ``user``), the ladder record when the
rungs were measured, or the failed check. It runs inside the child process (``bench.user_child``):
a crash or hang of the user's code takes only that process down.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional, Sequence

from gemmlab.bench.check import CheckResult
from gemmlab.bench.interleave import ROUNDS, compare, interleaved, merge
from gemmlab.bench.ladder import (CUBLAS, GpuBench, Progress, Target, cublas_bf16_target, cublas_fp8_target,
                                  cublas_target, launched_by, with_tensor_peaks)
from gemmlab.bench.results import Check, Row, RunRecord
from gemmlab.bench.spec import BenchSpec
from gemmlab.bench.timer import TimingOptions
from gemmlab.kernels.declared import Declaration

log = logging.getLogger(__name__)

# Shapes that are multiples of no power-of-two tile: 127 and 129 are odd, 67 is prime, 65 and 33
# are one past a multiple of 64 and 32. A kernel without bounds checks writes past C (the guard
# catches it) or leaves elements unwritten here; K = 1000 is a multiple of 8 but not of 16 or 32.
CHECK_SHAPES: tuple[tuple[int, int, int], ...] = ((127, 129, 67), (65, 33, 1000))


@dataclass(frozen=True)
class Outcome:
    record: Optional[RunRecord] = None  # the timed run (None when the check failed)
    ladder: Optional[RunRecord] = None  # the rungs at the same shape, when measured
    failed: Optional[dict] = None  # {"shape": [M, N, K], "check": CheckResult dict}
    checked: tuple = ()  # [{"shape", "ok", "reason", "rel_err"} | {"shape", "skipped"}]


def user_target(decl: Declaration, path: Path, text: str, M: int, N: int, K: int,
                alpha: float = 1.0, beta: float = 0.0) -> Target:
    from gemmlab.runtime.user_cuda import UserGemm

    spec = BenchSpec(decl.name, M, N, K, alpha, beta, decl.dtype, out_dtype=decl.out_dtype)
    grid, block, smem = decl.launch(M, N, K)
    info = {"order": None, "family": "user", "summary": f"{path.name}: {decl.kernel}", "source": str(path),
            "function": decl.kernel, "grid": list(grid), "block": list(block), "smem_bytes": int(smem),
            "grid_rule": decl.grid_rule(), "dtype": decl.dtype, "out_dtype": decl.out_dtype}
    return Target(spec, lambda: UserGemm(decl, path, text, M, N, K), info)


def reference_target(dtype: str, out_dtype: str, M: int, N: int, K: int, alpha: float, beta: float) -> Target:
    """cuBLAS at its best for the kernel's types: SGEMM, BF16 (GemmEx or cuBLASLt), FP8 (cuBLASLt)."""
    if dtype == "fp8":
        return cublas_fp8_target(M, N, K, alpha, beta)
    if dtype == "fp16":
        return cublas_fp16_target(M, N, K, alpha, beta, out_dtype)
    if dtype == "bf16":
        return cublas_bf16_target(M, N, K, alpha, beta, out_dtype)
    return cublas_target(M, N, K, alpha, beta)


def cublas_fp16_target(M: int, N: int, K: int, alpha: float, beta: float, out_dtype: str) -> Target:
    """cuBLAS with float16 A, B, ``out_dtype`` C and FP32 compute: cublasGemmEx's default algorithm
    (the BF16 reference times cuBLASLt's heuristics too; for fp16 that search is not wired yet, so
    this reference can be slower than cuBLAS at its best - the summary says which was timed)."""
    from gemmlab.runtime import cublas

    info = {"order": None, "family": "library", "summary": cublas.fp16_label(out_dtype), "dtype": "fp16",
            "out_dtype": out_dtype}
    spec = BenchSpec(CUBLAS, M, N, K, alpha, beta, "fp16", out_dtype=out_dtype)
    return Target(spec, lambda: (lambda a, b, c, al, be: cublas.gemm_fp16(a, b, c, al, be)), info)


def check_shapes(decl: Declaration, shape: tuple[int, int, int]) -> list[tuple[tuple[int, int, int], Optional[str]]]:
    """The shapes the kernel is checked at, each with the reason it is skipped (its ``requires``) or None."""
    out = [(shape, None)]
    for s in CHECK_SHAPES:
        if s != shape:
            out.append((s, decl.refusal(*s)))
    return out


def measure_user(decl: Declaration, path: Path, text: str, shape: tuple[int, int, int], options: TimingOptions, *,
                 alpha: float = 1.0, beta: float = 0.0, seed: int = 0, with_cublas: bool = True,
                 ladder_rungs: Sequence[Any] = (), progress: Optional[Progress] = None) -> Outcome:
    """Everything ``gemmlab bench FILE.cu`` measures on the GPU (see the module docstring)."""
    from gemmlab.bench import env as envmod
    from gemmlab.runtime import cublas

    M, N, K = shape
    if not decl.has_scalars and (alpha != 1.0 or beta != 0.0):
        from gemmlab.errors import InputError

        raise InputError(f"{decl.file}: the kernel takes no alpha and beta (args={','.join(decl.args)}); "
                         f"--alpha and --beta need args with alpha and beta")
    env, reader = envmod.capture(math_mode=cublas.math_mode())
    bench = GpuBench(options, reader, seed=seed)
    env["l2_flush_bytes"] = bench.backend.l2_flush_bytes
    steps = 2 + (1 if with_cublas else 0)

    def say(name: str, i: int, phase: str) -> None:
        if progress is not None:
            progress(name, i, steps, phase)

    target = user_target(decl, path, text, M, N, K, alpha, beta)
    say(decl.name, 0, "compile")
    run = target.prepare()
    checked = []
    for s, skip in check_shapes(decl, shape):
        if skip:
            checked.append({"shape": list(s), "skipped": skip})
            continue
        say(decl.name, 0, f"check {s[0]}x{s[1]}x{s[2]}")
        t = target if s == shape else user_target(decl, path, text, *s, alpha, beta)
        result: CheckResult = bench.check(t, run if s == shape else t.prepare())
        checked.append({"shape": list(s), "ok": result.ok, "reason": result.reason, "rel_err": result.rel_err})
        if not result.ok:
            return Outcome(failed={"shape": list(s), "check": result.to_dict()}, checked=tuple(checked))
    final = bench.check(target, run)  # a fresh draw for the record, at the run's shape
    if not final.ok:  # a racy kernel can pass one draw and fail the next: still never timed
        checked.append({"shape": list(shape), "ok": False, "reason": final.reason, "rel_err": final.rel_err})
        return Outcome(failed={"shape": list(shape), "check": final.to_dict()}, checked=tuple(checked))
    user_check = Check.of(final)
    sides: list[tuple[Target, Any]] = [(target, run)]
    ref_check = None
    if with_cublas:
        ref = reference_target(decl.dtype, decl.out_dtype, M, N, K, alpha, beta)
        say(CUBLAS, 1, "prepare")
        ref_run = ref.prepare()
        ref_check = Check.of(bench.check(ref, ref_run))
        sides.append((ref, ref_run))

    def time_side(i: int, _run: Any) -> tuple:
        t, r = sides[i]
        return bench.time(t, r, lambda phase, _n=t.name, _i=i: say(_n, _i + 1, phase))

    timed = interleaved([r for _, r in sides], time_side)
    rows = []
    for (t, r), parts, chk in zip(sides, timed, [user_check, ref_check]):
        m, clocks = merge(parts)
        extra = {}
        if t is target and len(timed) > 1:  # the same per-round comparison as the ladder's rows
            extra["vs_reference"] = compare(parts, timed[1], [k % 2 == 0 for k in range(len(parts))])
        rows.append(Row(m, chk, t is not target, dict(t.info), launched_by(r), clocks, extra))
    tensor = decl.dtype in ("bf16", "fp16", "fp8")  # fp16's dense tensor peak is BF16's on Ampere and Hopper
    if tensor:
        rows = with_tensor_peaks(rows, env, decl.dtype)
    peak = envmod.tensor_peak(decl.dtype, env) if tensor else envmod.fp32_peak(env)
    meta = {"shape": {"M": M, "N": N, "K": K}, "peak": peak, "dtype": decl.dtype,
            "options": {"timing": options.to_dict(), "seed": seed, "alpha": alpha, "beta": beta, "cublas": with_cublas,
                        "dtype": decl.dtype, "out_dtype": decl.out_dtype, "rounds": ROUNDS},
            "checked": checked}
    record = RunRecord("user", tuple(rows), env, meta)
    ladder = None
    if ladder_rungs:
        from gemmlab.bench.ladder import measure
        from gemmlab.errors import UserError

        say("ladder", steps - 1, "measure the ladder's rungs for placement")
        try:
            ladder = measure("ladder", ladder_rungs, M, N, K, options, seed=seed, progress=progress)
        except UserError as e:  # the kernel's own run stands without a place on the ladder
            log.warning("the ladder for placement could not be measured: %s", e.message)
            record = replace(record, meta={**record.meta, "placement_error": e.message})
    return Outcome(record=record, ladder=ladder, checked=tuple(checked))


def with_kernel_meta(record: RunRecord, kernel: dict) -> RunRecord:
    """The record with the user kernel's identity (name, file, source, hash, declaration) in its meta."""
    return replace(record, meta={**record.meta, "kernel": kernel})

