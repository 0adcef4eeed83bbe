"""Would split-K pay for SM balance, not only for too few tiles? A device probe for issue #12.

The dispatch rung splits K only while its tiles leave more than half the SMs idle. Shapes one past a
multiple of the tile (1025^3, 2049^3) or just over a wave (1056^3) run with badly balanced tiles
instead. This times, per shape, the rung's own plan and forced splits of 2-4 for both tile shapes
(checked against cuBLAS, CUDA events, L2 flushed, cuBLAS right before each). Usage on the device:

    PYTHONPATH=src python benchmarks/split_balance_probe.py
"""
import statistics
import cupy as cp
from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
from gemmlab.kernels import registry
from gemmlab.runtime import cublas
from gemmlab.runtime.dispatch import Policy
from gemmlab.runtime.dispatch_gemm import DispatchedGemm
rung = registry.get("dispatch"); be = CupyBackend(flush_l2=True); opts = TimingOptions(warmup_ms=5, rep_ms=30)
for M, N, K in [(1025, 1025, 1025), (2049, 2049, 2049), (513, 513, 513), (1025, 1025, 4096), (1056, 1056, 1056)]:
    rng = cp.random.default_rng(1); a = rng.random((M, K), dtype=cp.float32); b = rng.random((K, N), dtype=cp.float32)
    ref = cp.empty((M, N), dtype=cp.float32); cublas.sgemm(a, b, ref); c = cp.empty_like(ref)
    for pol in [{}, {"tile": "big", "split": 2}, {"tile": "big", "split": 3}, {"tile": "big", "split": 4}, {"tile": "small", "split": 2}, {"tile": "small", "split": 3}]:
        cub = statistics.median(time_fn(lambda: cublas.sgemm(a, b, ref), be, opts).samples_s)
        run = DispatchedGemm(rung, M, N, K, policy=Policy(**pol))
        c.fill(float("nan")); run(a, b, c); err = float(cp.linalg.norm(c - ref) / cp.linalg.norm(ref))
        t = statistics.median(time_fn(lambda: run(a, b, c), be, opts).samples_s)
        print(f"{M}x{N}x{K} {str(pol):<32} {t*1e6:8.1f} us {100*cub/t:6.1f}%  err {err:.1e}  {run.rung.name}", flush=True)
