"""Does the dispatch rung's plain/padded path get faster with the autotuner's H100 winner as its big
tile (64x128x32, 2 stages, 3 blocks/SM) and/or with nvcc instead of NVRTC? One process, each variant
checked against cuBLAS (relative Frobenius error) and timed with CUDA events (L2 flushed, median of
20). Prints one line per shape and variant. Only the kernel behind the name "big" is swapped (the
rules count tiles with paths.BIG as it is). This probe decided the change: the big tile was
double_buffered's 128x128x16 when it ran (docs/results/shapes-dispatch-h100-2026-11-23/tile_probe)
and is the 64x128x32 tile now, so today both rows of a backend run the same kernel unless OLD is
put back. Usage on the device:

    PYTHONPATH=src python benchmarks/dispatch_tile_probe.py
"""

from __future__ import annotations

import statistics

WIDE = dict(BM=64, BN=128, BK=32, WM=32, WN=64, WNITER=2, TM=8, TN=4, NT=128, STAGES=2, GROUP=0,
            MINB=3)
OLD = dict(BM=128, BN=128, BK=16, WM=64, WN=64, WNITER=4, TM=8, TN=4, NT=128, STAGES=3, GROUP=0)


def main() -> None:
    import cupy as cp

    from gemmlab.kernels import paths
    from gemmlab.runtime import cublas, dispatch_gemm  # noqa: F401 - registers the dispatch rung
    from gemmlab.runtime.autotune import measure_ms
    from gemmlab.runtime.launch import prepare

    big = dict(paths.BIG)  # restored after each shape
    for shape in [(4096, 4096, 4096), (4095, 4095, 4095), (4097, 4097, 4097), (2048, 2048, 2048)]:
        M, N, K = shape
        rng = cp.random.default_rng(0)
        a = rng.standard_normal((M, K), dtype=cp.float32)
        b = rng.standard_normal((K, N), dtype=cp.float32)
        ref = cp.zeros((M, N), dtype=cp.float32)
        cublas.sgemm(a, b, ref)
        c = cp.empty_like(ref)
        t_cublas = statistics.median(measure_ms(lambda: cublas.sgemm(a, b, c), repeats=20,
                                                flush_bytes=100 << 20))
        for tile_name, tile in (("128x128", OLD), ("64x128x32_s2_b3", WIDE)):
            paths.TILES["big"] = tile
            for backend in ("nvrtc", "nvcc"):
                try:
                    run = prepare("dispatch", M, N, K, backend=backend)
                    c.fill(float("nan"))
                    run(a, b, c)
                    err = float(cp.linalg.norm(c - ref) / cp.linalg.norm(ref))
                    t = statistics.median(measure_ms(lambda: run(a, b, c), repeats=20,
                                                     flush_bytes=100 << 20))
                    ran = run.rung_for(a, b, c).name
                    print(f"{M}x{N}x{K} big={tile_name:<16} {backend:<5} {t:8.3f} ms "
                          f"{100 * t_cublas / t:6.1f}% of cuBLAS  err {err:.1e}  {ran}", flush=True)
                except Exception as e:  # noqa: BLE001 - a probe reports every failure
                    print(f"{M}x{N}x{K} big={tile_name} {backend}: {type(e).__name__}: "
                          f"{str(e).splitlines()[0][:200]}", flush=True)
        paths.TILES["big"] = big


if __name__ == "__main__":
    main()
