"""_dev: per-tile timelines of 128x128pp launched alone and in clusters of 2 / 4 (same kernel code).

Run with PYTHONPATH=_dev/tT/src. Writes OUT/trace_<tag>.npz: per variant, per run, the raw trace
(264 CTAs x 48 slots x 8 words) and the event time.
"""
import json
import sys

import numpy as np


def main():
    out, tag, shapes, variants, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    from gemmlab.kernels import registry
    from gemmlab.runtime import device
    from gemmlab.runtime import compile as C
    from gemmlab.runtime.dispatch_tc import Policy
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm
    from gemmlab.bench.timer import CupyBackend

    cupy = device.require_gpu()
    flush = CupyBackend(flush_l2=True).flush_l2
    res = {}
    for shp in shapes.split(";"):
        M, N, K = (int(x) for x in shp.split(","))
        rng = cupy.random.default_rng(1)
        a = rng.integers(0, 0x38, (M, K)).astype(cupy.uint8)
        b = rng.integers(0, 0x38, (N, K)).astype(cupy.uint8)
        c = cupy.zeros((M, N), dtype=cupy.uint16)
        runs = {}
        for v in variants.split(","):
            g = TcDispatchedGemm(registry.get("dispatch_fp8"), M, N, K, policy=Policy(config=v))
            for _ in range(3):
                g(a, b, c, 1.0, 0.0)
            cupy.cuda.runtime.deviceSynchronize()
            mod = C.RUNG_MODULES[g.plan.rung.kernel]
            tr = cupy.ndarray((264 * 48 * 8,), cupy.uint64, memptr=mod.get_global("gl_trace"))
            runs[v] = (g, tr)
            print(shp, v, g.plan.name, g.grid, flush=True)
        times = {v: [] for v in runs}
        traces = {v: [] for v in runs}
        order = list(runs)
        for r in range(rounds):
            for v in (order if r % 2 == 0 else order[::-1]):
                g, tr = runs[v]
                for _ in range(3):
                    tr.fill(0)
                    flush()
                    s, e = cupy.cuda.Event(), cupy.cuda.Event()
                    s.record()
                    g(a, b, c, 1.0, 0.0)
                    e.record()
                    e.synchronize()
                    times[v].append(cupy.cuda.get_elapsed_time(s, e) * 1e3)
                    traces[v].append(tr.get().reshape(264, 48, 8))
        for v in runs:
            key = f"{M}x{N}x{K}_{v}"
            res[key] = np.stack(traces[v])
            res[key + "_us"] = np.array(times[v])
            print(key, "median us", float(np.median(times[v])), flush=True)
    np.savez_compressed(f"{out}/trace_{tag}.npz", **res)


if __name__ == "__main__":
    main()
