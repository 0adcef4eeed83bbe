"""Probe one Hopper BF16 rung on the GPU: correctness at a few shapes (with a map of where a
wrong tile is wrong), then a quick timing at 4096^3 against cuBLAS BF16. Meant for a device
session, one process per rung (a deadlocked mbarrier pipeline then costs one timeout, not the
session):

    PYTHONPATH=src python benchmarks/hopper_probe.py RUNG [--variant swap_b_desc]

--variant rewrites the kernel source before compiling (to test a hypothesis without editing the
tree): swap_b_desc exchanges B's leading/stride byte offsets; local_arrive (persistent_bf16 with
--set CLUSTER=1) uses CTA-local mbarrier arrivals; no_store (ws_bf16, tma_bf16) drops the epilogue.
--set PARAM=VALUE compiles another instantiation; --grid N caps a persistent rung's grid.
"""

from __future__ import annotations

import argparse
import sys
import time

VARIANTS = {
    "none": [],
    "swap_b_desc": [("BK * 128, 1024)", "1024, BK * 128)")],
    # persistent_bf16 with CLUSTER = 1: CTA-scope local arrivals instead of mapa + cluster release
    "local_arrive": [
        ("if (kt > 0 && t < CLUSTER) mbar_arrive_cluster(empty((it - 1) % STAGES), t);",
         "if (kt > 0 && t == 0) mbar_arrive(empty((it - 1) % STAGES));"),
        ("if (t < CLUSTER) mbar_arrive_cluster(empty((it - 1) % STAGES), t);",
         "if (t == 0) mbar_arrive(empty((it - 1) % STAGES));")],
    # ws_bf16 / tma_bf16: no epilogue stores (timing only: shows what the epilogue costs)
    "no_store": [("store_wgmma_tile<BN, OUT_F32>(C, M, N, row0 + 64 * cw, col0, d, alpha, beta);",
                  "if (d[0] == 12345.0f) store_wgmma_tile<BN, OUT_F32>(C, M, N, row0 + 64 * cw, col0, d, alpha, beta);")],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("rung")
    ap.add_argument("--variant", default="none", choices=sorted(VARIANTS))
    ap.add_argument("--time", action="store_true")
    ap.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE",
                    help="override a compile-time parameter of the rung (a new instantiation)")
    ap.add_argument("--grid", type=int, default=0, help="persistent rungs: launch this many CTAs")
    ap.add_argument("--quick", action="store_true", help="correctness at two shapes only")
    args = ap.parse_args()

    import cupy as cp
    import numpy as np

    from gemmlab.bench.check import reference
    from gemmlab.kernels import registry
    from gemmlab.numerics.bf16 import from_bits, to_bits, tolerance
    from gemmlab.runtime import compile as comp
    from gemmlab.runtime import cublas
    from gemmlab.runtime.launch import prepare

    if VARIANTS[args.variant]:
        orig = comp.translation_unit

        def patched(rungs):
            text = orig(rungs)
            for old, new in VARIANTS[args.variant]:
                assert old in text, old
                text = text.replace(old, new)
            return text

        comp.translation_unit = patched
    rung = registry.get(args.rung)
    if args.set:
        import dataclasses

        params = dict(rung.params)
        for kv in args.set:
            k, v = kv.split("=")
            params[k] = int(v)
        tag = "_".join(kv.replace("=", "").lower() for kv in args.set)
        rung = dataclasses.replace(rung, name=f"{rung.name}_{tag}",
                                   kernel=f"gemmlab_{rung.name}_{tag}", params=params)
    if args.grid:
        from gemmlab.kernels.families import Rung

        orig_lc = Rung.launch_config

        def lc(self, M, N, K, sms=None):
            g, b, sm = orig_lc(self, M, N, K, sms)
            return ((min(g[0], args.grid), 1, 1) if self.persistent else g), b, sm

        Rung.launch_config = lc
    print(f"== {rung.name} variant={args.variant} threads={rung.threads} smem={rung.dynamic_smem}",
          flush=True)
    t0 = time.perf_counter()
    shapes = [(128, 256, 64), (256, 512, 256), (300, 520, 136), (1000, 3000, 72),
              (2000, 264, 8), (4096, 4096, 4096)]
    for shape in ([(300, 520, 136), (4096, 4096, 4096)] if args.quick else shapes):
        M, N, K = shape
        rng = cp.random.default_rng(1)
        a = to_bits(rng.random((M, K), dtype=cp.float32) * 2 - 1)
        b = to_bits(rng.random((K, N), dtype=cp.float32) * 2 - 1)
        c = cp.full((M, N), 0x7FC0, dtype=cp.uint16)  # NaN poison
        try:
            run = prepare(rung, M, N, K)
            run(a, b, c, 1.0, 0.0)
            cp.cuda.get_current_stream().synchronize()
        except Exception as e:  # noqa: BLE001 - a probe reports everything
            print(f"{shape}: ERROR {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
            continue
        ref, absref = reference(from_bits(a), from_bits(b), 1.0, 0.0, xp=cp)
        out = from_bits(c).astype(cp.float64)
        tol = tolerance(K, "bf16")
        err = cp.abs(out - ref)
        bad = ~cp.isfinite(out) | (err > tol.elementwise(absref, ref))
        nbad = int(bad.sum())
        print(f"{shape}: {'OK' if nbad == 0 else 'WRONG'} wrong={nbad}/{M * N} "
              f"max_err={float(cp.nanmax(err)):.3g} nan={int((~cp.isfinite(out)).sum())}", flush=True)
        if nbad and M <= 512:
            # where: fraction wrong per (8-row group, 8-col group) of the first 64 x 256
            sub = cp.asnumpy(bad[:64, :256]).reshape(8, 8, 32, 8).mean(axis=(1, 3))
            for row in sub:
                print("   " + "".join("#" if v > 0.5 else ("+" if v > 0 else ".") for v in row))
            r = cp.asnumpy(ref[:2, :8]).round(3)
            o = cp.asnumpy(out[:2, :8]).round(3)
            print(f"   ref[:2,:8]={r.tolist()}\n   out[:2,:8]={o.tolist()}")
    print(f"correctness {time.perf_counter() - t0:.1f}s", flush=True)
    if rung.needs.cluster != (1, 1, 1):
        try:
            from cuda.bindings import driver as cu

            k = comp.compile_rung(rung)
            cfg = cu.CUlaunchConfig()
            cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = 132, 1, 1
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = rung.threads, 1, 1
            cfg.sharedMemBytes = rung.dynamic_smem
            err, n = cu.cuOccupancyMaxActiveClusters(cu.CUfunction(k.kernel.ptr), cfg)
            print(f"max active clusters of {rung.needs.cluster}: {n} ({err.name})", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"max active clusters: unavailable ({type(e).__name__}: {e})", flush=True)

    if args.time:
        for n in (4096, 8192):
            rng = cp.random.default_rng(2)
            a = to_bits(rng.random((n, n), dtype=cp.float32) * 2 - 1)
            b = to_bits(rng.random((n, n), dtype=cp.float32) * 2 - 1)
            c = cp.zeros((n, n), dtype=cp.uint16)
            run = prepare(rung, n, n, n)
            for name, fn in ((rung.name, lambda: run(a, b, c, 1.0, 0.0)),
                             ("cublas", lambda: cublas.gemm_bf16(a, b, c, 1.0, 0.0))):
                for _ in range(5):
                    fn()
                ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
                times = []
                for _ in range(20):
                    ev0.record()
                    fn()
                    ev1.record()
                    ev1.synchronize()
                    times.append(cp.cuda.get_elapsed_time(ev0, ev1))
                ms = float(np.median(times))
                print(f"time {n}: {name:<18} {ms:8.3f} ms {2 * n**3 / ms / 1e9:8.1f} TFLOP/s",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
