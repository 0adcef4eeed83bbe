"""Compile (without launching) every memcheck case's kernels of sanitize_dispatch_tc.py."""
import sys
sys.path.insert(0, "benchmarks")
from sanitize_dispatch_tc import MEMCHECK
from gemmlab.kernels import registry
from gemmlab.runtime.dispatch_tc import Policy
from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm
for dtype, (M, N, K), pol, off in MEMCHECK:
    try:
        TcDispatchedGemm(registry.get(f"dispatch_{dtype}"), M, N, K, policy=Policy(**(pol or {})))
    except Exception as e:
        print(dtype, M, N, K, pol, type(e).__name__, e)
print("warm done")
