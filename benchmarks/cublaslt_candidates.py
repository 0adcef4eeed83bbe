"""List and time every cuBLAS BF16 candidate at a few sizes, standalone (the debug step of
benchmarks/run_tcref_device.sh).

Uses only gemmlab's ctypes layer (gemmlab.runtime.cublaslt) and CuPy - not the ladder, not the
selection module - so that if the integrated best-of reference fails, this still shows what
works: the libcublasLt found, each heuristic algorithm's configuration, its time, its agreement
with cublasGemmEx, the same for torch.matmul, and (through torch.profiler, when PyTorch is there)
the kernels each launched. Times: median of 20 runs, each between its own CUDA events, L2 NOT
flushed (a listing; the ladder's selection flushes).

    python benchmarks/cublaslt_candidates.py [--sizes 4096,8192] [--algos 8] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback


def _time_ms(cupy, fn, runs=20, warmup=3):
    for _ in range(warmup):
        fn()
    cupy.cuda.get_current_stream().synchronize()
    out = []
    for _ in range(runs):
        s, e = cupy.cuda.Event(), cupy.cuda.Event()
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(cupy.cuda.get_elapsed_time(s, e))
    out.sort()
    return out[len(out) // 2], out[0]


def one_problem(n, out_dtype, algos):
    import cupy
    import numpy as np

    from gemmlab.numerics.bf16 import from_bits, to_bits
    from gemmlab.runtime import cublas, cublaslt

    M = N = K = n
    flops = 2.0 * M * N * K
    rng = cupy.random.default_rng(0)
    a = to_bits(rng.random((M, K), dtype=cupy.float32) * 2 - 1)
    b = to_bits(rng.random((K, N), dtype=cupy.float32) * 2 - 1)
    odt = cupy.uint16 if out_dtype == "bf16" else cupy.float32
    c_ref, c = cupy.zeros((M, N), odt), cupy.zeros((M, N), odt)
    dec = (lambda y: from_bits(y).astype(cupy.float64)) if out_dtype == "bf16" else (
        lambda y: y.astype(cupy.float64))
    rows, runs = [], []

    def add(name, fn, **detail):
        row = {"name": name, **detail}
        try:
            c.fill(0)
            fn(c)
            cupy.cuda.get_current_stream().synchronize()
            ref = dec(c_ref)
            row["rel_diff_vs_gemm_ex"] = float(cupy.linalg.norm(dec(c) - ref) / cupy.linalg.norm(ref))
            med, best = _time_ms(cupy, lambda: fn(c))
            row.update(median_ms=med, min_ms=best, tflops=flops / (med * 1e-3) / 1e12)
            runs.append((len(rows), lambda: fn(c)))
        except Exception as e:  # noqa: BLE001 - a listing: record and go on
            row["error"] = f"{type(e).__name__}: {e}".splitlines()[0]
        rows.append(row)
        t = f"{row['median_ms']:8.4f} ms {row['tflops']:7.1f} TFLOP/s" if "median_ms" in row else (
            f"ERROR {row['error']}")
        print(f"  {name:<96} {t}  diff {row.get('rel_diff_vs_gemm_ex', float('nan')):.2e}",
              flush=True)

    cublas.gemm_bf16(a, b, c_ref)  # the baseline's output, for agreement
    add("cublasGemmEx CUBLAS_GEMM_DEFAULT", lambda cc: cublas.gemm_bf16(a, b, cc))

    lt_info = {}
    try:
        api = cublaslt.api()
        lt_info = {"library": getattr(api, "path", None), "version": api.version()}
        plan = cublaslt.LtPlan(api, cublaslt.handle(cupy.cuda.runtime.getDevice()), M, N, K,
                               out_dtype, count=algos)
        ws = cupy.empty(plan.workspace, cupy.uint8)
        one, zero = np.array(1.0, np.float32), np.array(0.0, np.float32)
        lt_info["returned"] = len(plan.algos)
        for i in range(len(plan.algos)):
            d = plan.describe(i)

            def fn(cc, _i=i):
                plan.run(_i, a.data.ptr, b.data.ptr, cc.data.ptr, one.ctypes.data,
                         zero.ctypes.data, ws.data.ptr, cupy.cuda.get_current_stream().ptr)

            add(f"cublasLt #{i}: {cublaslt.short_label(d)}", fn, config=d)
    except Exception as e:  # noqa: BLE001
        lt_info["error"] = f"{type(e).__name__}: {e}"
        print("  cuBLASLt:", lt_info["error"], flush=True)
        traceback.print_exc()

    torch_info = {}
    if out_dtype == "bf16":
        try:
            import torch

            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
            torch_info["version"] = torch.__version__
            view = lambda x: torch.from_dlpack(x.view(cupy.int16)).view(torch.bfloat16)  # noqa: E731
            ta, tb = view(a), view(b)

            def tfn(cc):
                view(cc).addmm_(ta, tb, beta=0.0, alpha=1.0)

            add(f"torch.matmul (addmm_, PyTorch {torch.__version__})", tfn)
        except Exception as e:  # noqa: BLE001
            torch_info["error"] = f"{type(e).__name__}: {e}"
            print("  torch:", torch_info["error"], flush=True)

    names_note = None
    try:
        from gemmlab.bench.cublas_best import kernel_names

        per, names_note = kernel_names([fn for _, fn in runs],
                                       cupy.cuda.get_current_stream().synchronize)
        if per is not None:
            for (i, _), ks in zip(runs, per):
                rows[i]["kernels"] = ks
                print(f"  kernels of {rows[i]['name'][:60]}: {ks}", flush=True)
    except Exception as e:  # noqa: BLE001
        names_note = f"{type(e).__name__}: {e}"
    if names_note:
        print("  kernel names:", names_note, flush=True)
    timed = [r for r in rows if "median_ms" in r]
    best = min(timed, key=lambda r: r["median_ms"])["name"] if timed else None
    print(f"  fastest: {best}", flush=True)
    return {"shape": [M, N, K], "out_dtype": out_dtype, "cublaslt": lt_info, "torch": torch_info,
            "kernel_names_note": names_note, "candidates": rows, "fastest": best}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="4096,8192")
    p.add_argument("--algos", type=int, default=8)
    p.add_argument("--out")
    args = p.parse_args(argv)
    import cupy

    dev = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.runtime.getDevice())
    report = {"gpu": dev["name"].decode() if isinstance(dev["name"], bytes) else dev["name"],
              "cupy": cupy.__version__, "problems": []}
    print(f"GPU {report['gpu']}, CuPy {cupy.__version__}", flush=True)
    for n in (int(s) for s in args.sizes.split(",")):
        for out in ("bf16", "fp32") if n <= 4096 else ("bf16",):
            print(f"{n}^3, A,B bf16, C {out}, COMPUTE_32F:", flush=True)
            try:
                report["problems"].append(one_problem(n, out, args.algos))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                report["problems"].append({"shape": [n] * 3, "out_dtype": out,
                                           "error": f"{type(e).__name__}: {e}"})
            cupy.get_default_memory_pool().free_all_blocks()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
