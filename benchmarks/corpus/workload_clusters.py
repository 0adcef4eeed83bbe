"""The cluster corpus: launches in thread-block clusters, the case the first two corpora lack.

    ncu --profile-from-start off --nvtx --nvtx-push-pop-scope process ... \\
        python3 benchmarks/corpus/workload_clusters.py [--only RE] [--list]

Same driver as ``workload.py`` (two warm-up calls, then one launch inside ``cudaProfilerStart``/
``Stop`` and an NVTX range named after the case). The cases: a planted block of FMA work launched
in clusters of 2, 4 and 8 - grids whose clusters all fit at once, and grids with more clusters than
the GPU holds (132 blocks in clusters of 4: 33 where 30 fit), which ncu's waves per SM count as one
wave - and the Hopper kernels that run in clusters in practice: cuBLAS's and cuBLASLt's nvjet
GEMMs, and gemmlab's own clustered tiles, split decode and split GEMV. Which cases are kept out of
all tuning is ``gemmlab.corpus.files.held_out`` (a hash of the case name), as for the grown corpus.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch  # noqa: E402

import workload as W  # noqa: E402

CLUSTERS: list = []


def case(name: str):
    def deco(fn):
        CLUSTERS.append((name, fn))
        return fn
    return deco


# ------------------------------------------------------------------ planted: one block's FMA work, in clusters
ITERS = 2048  # ~70 us a wave of 1024-thread blocks at 1.7 GHz (64 cycles an iteration an SM)
SMEM = 120 * 1024  # one block an SM: a persistent kernel's residency


def _planted_cluster(size: int, blocks):
    def setup():
        import cupy

        src = (Path(__file__).resolve().parent / "planted_clusters.cu").read_text()
        k = cupy.RawKernel(src, f"planted_cluster{size}_fma", options=("-std=c++17",))
        k.max_dynamic_shared_size_bytes = SMEM
        n = blocks(W._sms())
        y = cupy.empty(n, dtype=cupy.float32)
        return lambda: k((n,), (1024,), (y, cupy.int32(ITERS), cupy.float32(1.0000001), cupy.float32(0.3)),
                         shared_mem=SMEM)
    return setup


# grid = SMs in clusters of 2: 66 clusters, all fit
case("planted_cluster2_per_sm")(_planted_cluster(2, lambda sms: sms))
# grid = SMs in clusters of 4: 33 clusters where 30 fit - the last 3 run alone
case("planted_cluster4_per_sm")(_planted_cluster(4, lambda sms: sms))
# 30 clusters of 4 (120 blocks): every cluster fits, 12 SMs have none
case("planted_cluster4_fitting")(_planted_cluster(4, lambda sms: 120))
# 16 clusters of 8 (128 blocks) where 15 fit
case("planted_cluster8_sixteen")(_planted_cluster(8, lambda sms: 128))
# six SMs' worth in clusters of 2: 396 clusters, 6 rounds of 66
case("planted_cluster2_six_rounds")(_planted_cluster(2, lambda sms: 6 * sms))
# 40 clusters of 4 (160 blocks): 1.2 waves to ncu, 1.33 rounds of 30 clusters
case("planted_cluster4_forty")(_planted_cluster(4, lambda sms: 160))


# ------------------------------------------------------------------ libraries: cuBLAS / cuBLASLt on Hopper
def _e4m3(rng, shape):
    import cupy
    # e4m3 bits with exponents kept below the NaN code
    return (rng.integers(0, 0x68, shape, dtype=cupy.uint8) | (rng.integers(0, 2, shape, dtype=cupy.uint8) << 7))


def _bf16(rng, shape):
    import cupy
    return (rng.standard_normal(shape, dtype=cupy.float32).view(cupy.uint32) >> 16).astype(cupy.uint16)


@case("cublaslt_fp8_best_4096")
def _():
    import cupy
    from gemmlab.bench.cublas_best import best_fp8

    n = 4096
    rng = cupy.random.default_rng(3)
    a, b, c = _e4m3(rng, (n, n)), _e4m3(rng, (n, n)), cupy.zeros((n, n), dtype=cupy.uint16)
    run = best_fp8(n, n, n)
    return lambda: run(a, b, c, 1.0, 0.0)


@case("cublaslt_fp8_best_decode_16x8192x8192")
def _():
    import cupy
    from gemmlab.bench.cublas_best import best_fp8

    rng = cupy.random.default_rng(4)
    a, b = _e4m3(rng, (16, 8192)), _e4m3(rng, (8192, 8192))
    c = cupy.zeros((16, 8192), dtype=cupy.uint16)
    run = best_fp8(16, 8192, 8192)
    return lambda: run(a, b, c, 1.0, 0.0)


@case("torch_mm_bf16_8192x1024x8192")
def _():
    a, b = W.rnd(8192, 8192, dtype=torch.bfloat16), W.rnd(8192, 1024, dtype=torch.bfloat16)
    return lambda: a @ b


# ------------------------------------------------------------------ gemmlab's clustered dispatch plans
def _plan(dtype: str, M: int, N: int, K: int, policy: dict):
    def setup():
        import cupy
        from gemmlab.kernels import registry
        from gemmlab.runtime.dispatch_tc import Policy
        from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

        run = TcDispatchedGemm(registry.get(f"dispatch_{dtype}"), M, N, K, policy=Policy(**policy))
        rng = cupy.random.default_rng(M + N + K)
        if dtype == "fp8":
            a, b = _e4m3(rng, (M, K)), _e4m3(rng, (N, K))
        else:
            a, b = _bf16(rng, (M, K)), _bf16(rng, (K, N))
        c = cupy.zeros((M, N), dtype=cupy.uint16)
        print(f"  plan: {run.plan.name}", file=sys.stderr, flush=True)
        return lambda: run(a, b, c, 1.0, 0.0)
    return setup


case("gemmlab_fp8_128x256c2_8192")(_plan("fp8", 8192, 8192, 8192, {"config": "128x256c2"}))
case("gemmlab_bf16_128x256c2_4096x4096x8192")(_plan("bf16", 4096, 4096, 8192, {"config": "128x256c2"}))
case("gemmlab_fp8_swap_decode_16x4096x4096")(_plan("fp8", 16, 4096, 4096, {}))
case("gemmlab_bf16_gemv_split_1x1600x6400")(_plan("bf16", 1, 1600, 6400, {}))
case("gemmlab_bf16_64x32c2x4_512x4096x4096")(_plan("bf16", 512, 4096, 4096, {"config": "64x32c2x4"}))


if __name__ == "__main__":
    sys.exit(W.main(cases=CLUSTERS))
