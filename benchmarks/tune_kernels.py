"""Time ladder rungs against cuBLAS SGEMM (FP32, TF32 off) at one size: a tuning aid.

Each rung is checked against cuBLAS once (relative error), then timed with one CUDA event pair
per launch: warm-up launches first, a 2 x L2 buffer overwritten before every timed launch (so
inputs do not start in L2), and the median of the repeats reported. cuBLAS is timed before and
after the rungs; a drift between the two says the clocks moved during the run. The official
numbers come from gemmlab's benchmark harness; this script is for tuning.

    python benchmarks/tune_kernels.py --size 4096
    python benchmarks/tune_kernels.py --shape 4097 129 257 --rungs warptiling,double_buffered
    python benchmarks/tune_kernels.py --size 4096 --candidates --json out.json
"""

from __future__ import annotations

import argparse
import json
import logging
import platform
import statistics
import sys
import time

from gemmlab.kernels import families, ladders, registry
from gemmlab.output import print_table


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--size", type=int, default=4096, help="M = N = K (default 4096)")
    g.add_argument("--shape", type=int, nargs=3, metavar=("M", "N", "K"))
    p.add_argument("--rungs", default=None,
                   help="comma-separated rung names (default: the ladder)")
    p.add_argument("--candidates", action="store_true",
                   help="also time every autotune candidate")
    p.add_argument("--sweep", action="store_true", help="also time the smem_tiled sweep")
    p.add_argument("--extra", action="append", default=[], metavar="FAMILY:P=V,...",
                   help="also time an ad-hoc instantiation, e.g. "
                        "'warptiling:BM=128,BN=128,BK=16,WM=64,WN=32,WNITER=2,TM=8,TN=4,NT=256,"
                        "VEC=1,MINB=2' (repeatable)")
    p.add_argument("--backend", choices=("nvrtc", "nvcc"), default="nvrtc",
                   help="compiler for the rungs (default nvrtc, as gemmlab uses)")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--json", dest="json_path", default=None, help="write raw samples here")
    a = p.parse_args(argv)
    if a.repeats < 1 or a.warmup < 0:
        p.error("--repeats must be >= 1 and --warmup >= 0")
    return a


def _extra_rung(spec: str, i: int) -> families.Rung:
    family, _, assigns = spec.partition(":")
    params = {k.strip(): int(v) for k, v in (a.split("=") for a in assigns.split(",") if a)}
    tag = "_".join(f"{k.lower()}{v}" for k, v in params.items())
    return families.make_rung(f"x{i}_{family}_{tag}", 0, family, f"ad-hoc {spec}", **params)


def main(argv=None) -> int:
    args = _parse(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    from gemmlab.runtime import cublas, device

    device.require_gpu()
    import cupy

    from gemmlab.runtime.autotune import measure_ms
    from gemmlab.runtime.launch import prepare

    info = device.info()
    M, N, K = args.shape if args.shape else (args.size,) * 3
    rungs = ([registry.get(n) for n in args.rungs.split(",")] if args.rungs
             else list(ladders.LADDER))
    if args.candidates:
        rungs += list(registry.autotune_candidates())
    if args.sweep:
        rungs += list(registry.sweep_variants())
    rungs += [_extra_rung(spec, i) for i, spec in enumerate(args.extra)]
    flops = 2.0 * M * N * K
    flush = 2 * info.l2_bytes

    rng = cupy.random.default_rng(0)
    a = rng.standard_normal((M, K), dtype=cupy.float32)
    b = rng.standard_normal((K, N), dtype=cupy.float32)
    c = cupy.empty((M, N), dtype=cupy.float32)
    ref = cupy.empty((M, N), dtype=cupy.float32)

    def time_it(fn):
        return measure_ms(fn, warmup=args.warmup, repeats=args.repeats, flush_bytes=flush)

    cublas.sgemm(a, b, ref)
    ref_norm = float(cupy.linalg.norm(ref))
    results = [{"rung": "cublas", "samples_ms": time_it(lambda: cublas.sgemm(a, b, ref))}]
    for r in rungs:
        t0 = time.perf_counter()
        run = prepare(r, M, N, K, backend=args.backend)
        setup_s = time.perf_counter() - t0
        c.fill(float("nan"))
        run(a, b, c)
        err = float(cupy.linalg.norm(c - ref)) / ref_norm
        kernel = run._vec or run._scalar
        results.append({"rung": r.name, "instantiation": run.rung_for(a, b, c).name,
                        "backend": run.backend,
                        "registers": int(kernel.num_regs), "rel_err_vs_cublas": err,
                        "setup_s": setup_s, "samples_ms": time_it(lambda: run(a, b, c))})
    results.append({"rung": "cublas (again)",
                    "samples_ms": time_it(lambda: cublas.sgemm(a, b, ref))})

    cub = statistics.median(results[0]["samples_ms"] + results[-1]["samples_ms"])
    rows = []
    for res in results:
        s = sorted(res["samples_ms"])
        med = statistics.median(s)
        q1, q3 = s[len(s) // 4], s[(3 * len(s)) // 4]
        res.update(median_ms=med, tflops=flops / med / 1e9, pct_cublas=100 * cub / med)
        rows.append([res["rung"], res.get("instantiation", ""), res.get("backend", ""),
                     res.get("registers", ""),
                     f"{med:.3f}", f"{(q3 - q1) / med * 100:.1f}", f"{res['tflops']:.2f}",
                     f"{res['pct_cublas']:.1f}",
                     f"{res['rel_err_vs_cublas']:.1e}" if "rel_err_vs_cublas" in res else ""])
    meta = {"device": info.name, "arch": info.arch, "sm_count": info.sm_count,
            "shape": [M, N, K], "cublas_math": cublas.math_mode(),
            "cupy": cupy.__version__, "driver": cupy.cuda.runtime.driverGetVersion(),
            "runtime": cupy.cuda.runtime.runtimeGetVersion(), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": " ".join(sys.argv),
            "warmup": args.warmup, "repeats": args.repeats, "l2_flush_bytes": flush,
            "backend": args.backend}
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    print_table(["rung", "instantiation", "compiler", "regs", "median ms", "IQR %", "TFLOP/s",
                 "% cuBLAS", "rel err"], rows,
                title=f"{info.name} ({info.arch}), M={M} N={N} K={K}",
                caption=f"{meta['cublas_math']}; median of {args.repeats} after {args.warmup} "
                        f"warm-up, L2 flushed; % cuBLAS vs the median of both cuBLAS runs")
    return 0


if __name__ == "__main__":
    from gemmlab.errors import UserError

    try:
        sys.exit(main())
    except UserError as e:
        print(f"tune_kernels: error: {e.message}", file=sys.stderr)
        sys.exit(e.code)
