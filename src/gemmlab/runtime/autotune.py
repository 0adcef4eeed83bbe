"""The autotuned rung: time double_buffered's candidate instantiations (tile sizes, warp tiles,
pipeline depth, register caps) on the GPU at hand, built by each available compiler (NVRTC
always, nvcc when the toolkit is installed: their code generators differ, and on the H100 the
same source ran up to 12% faster from nvcc 13.0 than from CuPy's NVRTC), and remember the winner.

Records live in ``<cache dir>/autotune.json`` keyed by GPU name, architecture and size bucket
(each of M, N, K rounded up to a power of two, clamped to 64..16384, and the shape class: whether
the 16-byte path applies or the scalar twins run), so a later ``prepare`` of
the autotuned rung at a similar size reuses the winner instead of re-tuning. Every candidate's
result is checked against cuBLAS before its time counts: a wrong kernel never wins.
"""

from __future__ import annotations

import json
import logging
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from gemmlab.errors import InputError
from gemmlab.kernels import registry
from gemmlab.kernels.families import Rung
from gemmlab.problem import check_shape
from gemmlab.runtime.toolchain import available_backends

log = logging.getLogger(__name__)

RECORD_FILE = "autotune.json"
_SCHEMA = 1
# A candidate is rejected when ||C - C_cublas|| / ||C_cublas|| exceeds this: two FP32 GEMMs that
# differ only in summation order agree to ~1e-6 at K = 4096 (error grows like sqrt(K) * 2^-24).
_CHECK_TOL = 1e-4


def _pow2_bucket(x: int) -> int:
    b = 64
    while b < x and b < 16384:
        b *= 2
    return b


def shape_class(M: int, N: int, K: int, dtype: str = "fp32") -> str:
    """``vec`` when N and K allow the candidates' 16-byte accesses (multiples of 4 floats, or of 8
    bf16 for the TMA candidates), ``odd`` when every candidate falls back to its scalar twin (FP32)
    or the shape goes to wgmma_bf16 (BF16): a winner tuned on one path says nothing about the other
    (issue #12: tuning keyed by shape class, not only by size)."""
    w = 8 if dtype == "bf16" else 4
    return "vec" if N % w == 0 and K % w == 0 else "odd"


def size_bucket(M: int, N: int, K: int, dtype: str = "fp32") -> str:
    """The bucket a tuning result applies to, e.g. ``m4096_n4096_k4096_vec``: each of M, N, K rounded
    up to a power of two (skinny, small-K and large-K products land in buckets of their own) and the
    shape class; BF16 buckets start with ``bf16_``. Records written before the class was part of the
    key are not matched (re-tuned)."""
    prefix = "bf16_" if dtype == "bf16" else ""
    return (f"{prefix}m{_pow2_bucket(M)}_n{_pow2_bucket(N)}_k{_pow2_bucket(K)}_"
            f"{shape_class(M, N, K, dtype)}")


def record_path() -> Path:
    from gemmlab.runtime.compile import cache_dir

    return cache_dir() / RECORD_FILE


@dataclass(frozen=True)
class TuneResult:
    """One tuning run: the winner and every candidate's median time (or why it was dropped)."""

    device: str
    arch: str
    bucket: str
    shape: tuple[int, int, int]
    winner: str  # candidate rung name
    backend: str  # compiler of the winner: "nvrtc" or "nvcc"
    median_ms: dict[str, float]  # "<candidate>@<backend>" -> median milliseconds
    rejected: dict[str, str] = field(default_factory=dict)
    tuned_at: str = ""


def _key(device: str, arch: str, bucket: str) -> str:
    return f"{device}|{arch}|{bucket}"


def load_records(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The stored tuning results; an unreadable file is reported and treated as empty (it is
    a cache: the next tune rewrites it)."""
    path = path or record_path()
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        log.warning("ignoring unreadable autotune records %s (%s); they will be rewritten",
                    path, e)
        return {}
    if not isinstance(data, dict) or data.get("schema") != _SCHEMA:
        log.warning("ignoring autotune records %s with an unknown schema", path)
        return {}
    return dict(data.get("entries", {}))


def _store(result: TuneResult, path: Path | None = None) -> None:
    from gemmlab.fileio import write_atomic

    path = path or record_path()
    entries = load_records(path)
    entries[_key(result.device, result.arch, result.bucket)] = asdict(result)
    blob = json.dumps({"schema": _SCHEMA, "entries": entries}, indent=1, sort_keys=True)
    write_atomic(path, blob, make_parents=True)


def lookup(M: int, N: int, K: int, device: str, arch: str,
           path: Path | None = None, dtype: str = "fp32") -> tuple[Rung, str] | None:
    """The remembered (winner, backend) for this GPU and size bucket, if any (and still valid)."""
    entry = load_records(path).get(_key(device, arch, size_bucket(M, N, K, dtype)))
    if not entry:
        return None
    names = {r.name: r for r in registry.autotune_candidates(dtype)}
    winner = names.get(entry.get("winner", ""))
    backend = entry.get("backend")
    if winner is None or backend not in ("nvrtc", "nvcc"):
        log.info("stored autotune winner %r (%r) is no longer valid; re-tuning",
                 entry.get("winner"), backend)
        return None
    return winner, backend


def measure_ms(fn: Callable[[], None], warmup: int = 3, repeats: int = 10,
               flush_bytes: int = 0) -> list[float]:
    """Milliseconds of each of ``repeats`` calls of ``fn``, one CUDA event pair per call, after
    ``warmup`` untimed calls. With ``flush_bytes`` > 0 a buffer that size is overwritten before
    each timed call (outside the events), so inputs do not start in L2."""
    import cupy

    flush = cupy.empty(flush_bytes // 4, dtype=cupy.float32) if flush_bytes > 0 else None
    for _ in range(warmup):
        fn()
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    out = []
    for _ in range(repeats):
        if flush is not None:
            flush.fill(0.0)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        out.append(cupy.cuda.get_elapsed_time(start, stop))
    return out


def _operands(M: int, N: int, K: int, dtype: str):
    """(a, b, c, reference C, ||ref||, decode C, tolerance) for tuning at M x N x K: fresh inputs of
    the ladder's dtype and cuBLAS's answer on them (FP32: cublasSgemm; BF16: cublasGemmEx)."""
    import cupy

    from gemmlab.runtime import cublas

    rng = cupy.random.default_rng(1234)
    a = rng.standard_normal((M, K), dtype=cupy.float32)
    b = rng.standard_normal((K, N), dtype=cupy.float32)
    if dtype == "bf16":
        from gemmlab.numerics.bf16 import from_bits, to_bits, tolerance

        a, b = to_bits(a), to_bits(b)
        ref_bits = cupy.zeros((M, N), dtype=cupy.uint16)
        cublas.gemm_bf16(a, b, ref_bits)
        ref = from_bits(ref_bits)
        c = cupy.empty((M, N), dtype=cupy.uint16)
        # Two BF16 GEMMs that each meet the normwise bound agree within twice it.
        tol = 2 * tolerance(K, "bf16").normwise
        return a, b, c, ref, from_bits, tol
    ref = cupy.zeros((M, N), dtype=cupy.float32)
    cublas.sgemm(a, b, ref)
    c = cupy.empty((M, N), dtype=cupy.float32)
    return a, b, c, ref, (lambda x: x), _CHECK_TOL


def tune(M: int, N: int, K: int, candidates: Sequence[Rung] | None = None, repeats: int = 10,
         backends: Sequence[str] | None = None, store: bool = True,
         dtype: str = "fp32") -> TuneResult:
    """Time every candidate (with every backend) at M x N x K on the current GPU and, by default,
    store the winner. BF16 candidates are compiled with NVRTC only (the rung's own compiler; nvcc
    builds the same PTX for sm_90a)."""
    import cupy

    from gemmlab.runtime import device
    from gemmlab.runtime.prepared import PreparedGemm

    check_shape(M, N, K)
    info = device.info()
    candidates = tuple(candidates or registry.autotune_candidates(dtype))
    backends = tuple(backends or (("nvrtc",) if dtype == "bf16" else available_backends()))
    a, b, c, ref, decode, tol = _operands(M, N, K, dtype)
    ref_norm = float(cupy.linalg.norm(ref))
    times: dict[str, float] = {}
    rejected: dict[str, str] = {}
    for cand in candidates:
        for backend in backends:
            key = f"{cand.name}@{backend}"
            if cand.dynamic_smem > info.smem_per_block_optin:
                rejected[key] = f"needs {cand.dynamic_smem} B shared memory"
                continue
            refusal = cand.refusal(M, N, K)
            if refusal:
                rejected[key] = refusal
                continue
            run = PreparedGemm(cand, M, N, K, backend=backend)
            c.fill(0xFFFF if c.dtype == cupy.uint16 else float("nan"))  # NaN in either dtype
            run(a, b, c)
            err = float(cupy.linalg.norm(decode(c) - ref)) / max(ref_norm, 1e-30)
            if not err <= tol:  # also catches NaN
                rejected[key] = f"relative error {err:.3g} vs cuBLAS"
                log.warning("autotune: %s rejected (relative error %.3g)", key, err)
                continue
            times[key] = statistics.median(
                measure_ms(lambda: run(a, b, c), repeats=repeats,
                           flush_bytes=2 * info.l2_bytes))
    if not times:
        raise InputError(f"autotune at M={M}, N={N}, K={K}: no candidate produced a correct "
                         f"result ({rejected})")
    best = min(times, key=times.__getitem__)
    winner, _, backend = best.partition("@")
    result = TuneResult(device=info.name, arch=info.arch, bucket=size_bucket(M, N, K, dtype),
                        shape=(M, N, K), winner=winner, backend=backend, median_ms=times,
                        rejected=rejected, tuned_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    if store:
        _store(result)
    log.info("autotune %s %s: winner %s (%.3f ms)", info.name, result.bucket, best, times[best])
    return result


def resolve(M: int, N: int, K: int, dtype: str = "fp32") -> tuple[Rung, str]:
    """(candidate, backend) the autotuned rung of ``dtype``'s ladder runs at this size: remembered,
    or tuned once now. BF16 shapes the TMA candidates cannot take (K or N not a multiple of 8) run
    wgmma_bf16, whose scalar twin takes any shape."""
    from gemmlab.runtime import device

    if dtype == "bf16" and shape_class(M, N, K, dtype) == "odd":
        return registry.get("wgmma_bf16"), "nvrtc"
    info = device.info()
    found = lookup(M, N, K, info.name, info.arch, dtype=dtype)
    if found is not None:
        return found
    log.info("autotuning for %s at %s (once per GPU and size bucket)", info.name,
             size_bucket(M, N, K, dtype))
    result = tune(M, N, K, dtype=dtype)
    return registry.get(result.winner), result.backend
