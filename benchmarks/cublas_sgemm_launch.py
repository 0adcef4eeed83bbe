"""Launch cuBLAS SGEMM (FP32 math, TF32 off: gemmlab's handle) a few times at one shape, for a
profiler to catch: ``gemmlab profile --kernel gemm --launch-skip 5 -- python benchmarks/cublas_sgemm_launch.py 4096 4096 4096``.
Compare its report with the dispatch rung's (``gemmlab diff``) to see where cuBLAS's FP32 kernel
spends fewer cycles."""

from __future__ import annotations

import sys


def main(argv=None) -> int:
    args = [int(x) for x in (argv if argv is not None else sys.argv[1:])] or [4096, 4096, 4096]
    M, N, K = (args + args[-1:] * 3)[:3]
    import cupy

    from gemmlab.runtime import cublas

    rng = cupy.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=cupy.float32)
    b = rng.standard_normal((K, N), dtype=cupy.float32)
    c = cupy.empty((M, N), dtype=cupy.float32)
    for _ in range(8):
        cublas.sgemm(a, b, c)
    cupy.cuda.get_current_stream().synchronize()
    print(f"cuBLAS SGEMM {M}x{N}x{K} ({cublas.math_mode()}): 8 launches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
