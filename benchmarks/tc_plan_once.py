"""Run one tensor-core dispatch plan a few times - a target for Nsight Compute when a forced plan
(a tile, split-K, stream-K) must be profiled beside another (issue #20):

    ncu --set full -k regex:gemmlab_dispatch --launch-skip 2 --launch-count 1 -o OUT/sk \\
        python benchmarks/tc_plan_once.py --dtype bf16 --shape 8192,1600,6400 \\
        --policy '{"config": "128x256c1", "streamk": 0}'

``--cublas`` runs cuBLAS at its best (cuBLASLt FP8 for fp8) for the same shape instead, chosen
the way the shape map chooses it. The timed calls run between cudaProfilerStart and Stop, so
``ncu --profile-from-start off`` sees only them - not the candidates' selection or the set-up.

``--flush`` reads the harness's L2 flush buffer (``bench.timer.CupyBackend``) before every call,
outside the events, so that with ``ncu --cache-control none -k regex:...`` the profiled kernel
starts from the cache state the harness gives it, not from the replay's invalidated caches
(``docs/results/tc-launch-2026-11-29/``: the two disagree on the fp8 decode kernels). Add
``--replay-mode application``: under kernel replay only the first of ``--set full``'s passes
follows the flush; the others start from the L2 the pass before left, the kernel's own operands
(fp8 16 x 4096 x 4096, 16 MB of B on the H200's 50 MB L2: 0 bytes read from DRAM;
``docs/results/tc-l2promo-2026-11-29/``). Application replay reruns the script, flush included,
for every pass.

Prints the plan that ran and, without a profiler, the median of --runs calls (CUDA events)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16")
    p.add_argument("--shape", required=True, help="M,N,K")
    p.add_argument("--policy", default="{}", help="dispatch_tc.Policy fields as JSON")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--cublas", action="store_true", help="run cuBLAS at its best instead")
    p.add_argument("--flush", action="store_true",
                   help="flush L2 as the harness does (a read of twice its size) before each call")
    args = p.parse_args(argv)
    from gemmlab.kernels import registry
    from gemmlab.runtime import device
    from gemmlab.runtime.dispatch_tc import Policy
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

    cupy = device.require_gpu()
    M, N, K = (int(x) for x in args.shape.split(","))
    if args.cublas:
        from gemmlab.bench.cublas_best import best_bf16, best_fp8

        run = (best_bf16 if args.dtype == "bf16" else best_fp8)(M, N, K)
        what = getattr(run, "summary", "cuBLAS at its best")
    else:
        run = TcDispatchedGemm(registry.get(f"dispatch_{args.dtype}"), M, N, K,
                               policy=Policy(**json.loads(args.policy)))
        what = f"{run.plan.name}: {run.plan.why}"
    rng = cupy.random.default_rng(1)
    store = cupy.uint16 if args.dtype == "bf16" else cupy.uint8
    a = (rng.integers(0, 0x3F00 if args.dtype == "bf16" else 0x38, (M, K))).astype(store)
    b_shape = (N, K) if args.dtype == "fp8" else (K, N)
    b = (rng.integers(0, 0x3F00 if args.dtype == "bf16" else 0x38, b_shape)).astype(store)
    c = cupy.zeros((M, N), dtype=cupy.uint16)
    times = []
    flush = None
    if args.flush:
        from gemmlab.bench.timer import CupyBackend

        flush = CupyBackend(flush_l2=True).flush_l2
    cupy.cuda.runtime.profilerStart()
    for _ in range(args.runs):
        if flush is not None:
            flush()
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        run(a, b, c, 1.0, 0.0)
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) * 1e3)
    cupy.cuda.runtime.profilerStop()
    print(f"{args.dtype} {M}x{N}x{K} {what}; "
          f"median {statistics.median(times):.1f} us of {args.runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
