"""Probe the FP8 rung on the GPU, standalone: correctness at a few shapes with a map of where a
wrong result is wrong, how the measured error sits against the FP8 bound (the accumulator model of
gemmlab.numerics.fp8 is a model of undocumented hardware: this is where it is confirmed), then a
quick timing at 4096^3 and 8192^3 against every cuBLASLt FP8 heuristic algorithm (FAST_ACCUM on
and off) and torch._scaled_mm. It uses the launcher and gemmlab.runtime.cublaslt directly - not
the ladder, the checker or the selection module - so that a failing integration still shows what
works. Times: median of 20 launches between CUDA events, L2 NOT flushed (a probe; the ladder
flushes).

    PYTHONPATH=src python benchmarks/fp8_probe.py [--time] [--quick] [--set P=V ...] [--out F.json]

--set overrides a compile-time parameter (a new instantiation: e.g. CLUSTER=1 to take multicast
out of the picture, EPI_PIECE=0 to take the TMA-store epilogue out).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import traceback

SHAPES = [(128, 256, 128), (256, 512, 256), (300, 520, 144), (1000, 3000, 128), (200, 517, 64),
          (4096, 4096, 4096)]
QUICK = [(128, 256, 128), (300, 520, 144)]


def say(*a):
    print(*a, flush=True)


def operands(cp, M, N, K, seed):
    from gemmlab.numerics import fp8

    rng = cp.random.default_rng(seed)
    a = fp8.to_bits(rng.random((M, K), dtype=cp.float32) * 2 - 1)
    b = fp8.to_bits(rng.random((N, K), dtype=cp.float32) * 2 - 1)  # N x K: "TN"
    return a, b


def error_stats(cp, out_bits, a, b, K):
    """Worst elementwise error / bound, normwise error / bound, worst |err| / T, bad count."""
    from gemmlab.bench.check import reference
    from gemmlab.numerics import bf16, fp8

    ref, absref = reference(fp8.from_bits(a), fp8.from_bits(b).T, 1.0, 0.0, xp=cp)
    out = bf16.from_bits(out_bits).astype(cp.float64)
    tol = fp8.tolerance(K)
    finite = cp.isfinite(out)
    err = cp.where(finite, cp.abs(out - ref), cp.inf)
    bound = tol.elementwise(absref, ref)
    bad = err > bound
    rel = float(cp.linalg.norm(cp.where(finite, out - ref, -ref)) / cp.linalg.norm(ref))
    return {
        "wrong": int(bad.sum()), "nonfinite": int((~finite).sum()),
        "poison_left": int((out_bits == bf16.POISON_BF16).sum()),
        "worst_elem_ratio": float((err / cp.maximum(bound, 1e-30)).max()),
        "normwise": rel, "normwise_bound": tol.normwise,
        "worst_err_over_T": float((cp.where(finite, err, 0) / cp.maximum(absref, 1e-30)).max()),
    }, bad, ref, out


def error_map(cp, bad, M, N):
    """Fraction wrong per 8 x 8 block of the first 128 x 256 (one CTA tile), and per 128 x 256
    tile of the first 8 x 8 tiles: '#' > 50%, '+' some, '.' none."""
    import numpy as np

    lines = []
    sub = cp.asnumpy(bad[:128, :256])
    sub = np.pad(sub, ((0, 128 - sub.shape[0]), (0, 256 - sub.shape[1])))
    frac = sub.reshape(16, 8, 32, 8).mean(axis=(1, 3))
    lines.append("   first tile, 8x8 blocks (rows down, columns across):")
    lines += ["   " + "".join("#" if v > 0.5 else ("+" if v > 0 else ".") for v in r) for r in frac]
    if M > 128 or N > 256:
        tm, tn = min(8, -(-M // 128)), min(8, -(-N // 256))
        full = cp.asnumpy(bad[: tm * 128, : tn * 256])
        full = np.pad(full, ((0, tm * 128 - full.shape[0]), (0, tn * 256 - full.shape[1])))
        tiles = full.reshape(tm, 128, tn, 256).mean(axis=(1, 3))
        lines.append("   per 128x256 tile:")
        lines += ["   " + "".join("#" if v > 0.5 else ("+" if v > 0 else ".") for v in r)
                  for r in tiles]
    return lines


def time_ms(cp, fn, runs=20, warmup=3):
    import numpy as np

    for _ in range(warmup):
        fn()
    cp.cuda.get_current_stream().synchronize()
    ts = []
    for _ in range(runs):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(e0, e1))
    return float(np.median(ts))


def lt_candidates(cp, M, N, K, algos=8):
    """(name, fast_accum, run(a, b, c)) for every cuBLASLt FP8 heuristic algorithm, both modes."""
    import numpy as np

    from gemmlab.runtime import cublas, cublaslt

    cublas._handle("fp32")
    api = cublaslt.api()
    h = cublaslt.handle(cp.cuda.runtime.getDevice())
    one, zero = np.array(1.0, np.float32), np.array(0.0, np.float32)
    out, keep = [], []
    ws = cp.empty(cublaslt.DEFAULT_WORKSPACE, cp.uint8)
    keep.append(ws)
    for fast in (True, False):
        try:
            plan = cublaslt.LtPlan(api, h, M, N, K, "bf16", count=algos, in_dtype="fp8",
                                   fast_accum=fast)
        except Exception as e:  # noqa: BLE001 - a probe reports and goes on
            say(f"   cuBLASLt FP8 fast_accum={int(fast)}: {type(e).__name__}: {e}")
            continue
        keep.append(plan)
        say(f"   cuBLASLt FP8 fast_accum={int(fast)}: {len(plan.algos)} algorithms "
            f"({getattr(api, 'path', '?')}, version {api.version()})")
        for i in range(len(plan.algos)):
            label = cublaslt.short_label(plan.describe(i))

            def run(a, b, c, _i=i, _p=plan):
                _p.run(_i, a.data.ptr, b.data.ptr, c.data.ptr, one.ctypes.data, zero.ctypes.data,
                       ws.data.ptr, cp.cuda.get_current_stream().ptr)

            out.append((f"cublasLt fast_accum={int(fast)} #{i} {label}", fast, run))
    return out, keep


def torch_candidates(cp):
    try:
        import torch
    except ImportError:
        return [], "PyTorch not importable"
    if not hasattr(torch, "_scaled_mm"):
        return [], f"PyTorch {torch.__version__}: no _scaled_mm"
    out = []
    for fast in (True, False):
        def run(a, b, c, _fast=fast):
            ta = torch.from_dlpack(a).view(torch.float8_e4m3fn)
            tb = torch.from_dlpack(b).view(torch.float8_e4m3fn).t()
            tc = torch.from_dlpack(c.view(cp.int16)).view(torch.bfloat16)
            one = torch.ones((), dtype=torch.float32, device=ta.device)
            ptr = cp.cuda.get_current_stream().ptr
            stream = torch.cuda.ExternalStream(ptr) if ptr else torch.cuda.default_stream()
            with torch.cuda.stream(stream):
                torch._scaled_mm(ta, tb, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                 use_fast_accum=_fast, out=tc)

        out.append((f"torch._scaled_mm use_fast_accum={_b(fast)} (PyTorch {torch.__version__})",
                    fast, run))
    return out, None


def _b(x):
    return "True" if x else "False"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--time", action="store_true", help="time against cuBLASLt FP8 at 4096, 8192")
    ap.add_argument("--quick", action="store_true", help="correctness at two small shapes only")
    ap.add_argument("--set", action="append", default=[], metavar="PARAM=VALUE")
    ap.add_argument("--out", help="write what was found as JSON")
    args = ap.parse_args()

    import cupy as cp

    from gemmlab.kernels import registry
    from gemmlab.numerics import bf16
    from gemmlab.runtime import compile as comp
    from gemmlab.runtime.launch import prepare

    report: dict = {"set": args.set, "shapes": [], "timing": []}
    rung = registry.get("persistent_fp8")
    if args.set:
        params = dict(rung.params)
        for kv in args.set:
            k, v = kv.split("=")
            params[k] = int(v)
        tag = "_".join(kv.replace("=", "").lower() for kv in args.set)
        rung = dataclasses.replace(rung, name=f"{rung.name}_{tag}",
                                   kernel=f"gemmlab_{rung.name}_{tag}", params=params)
    dev = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    say(f"== {rung.name} params={dict(rung.params)} threads={rung.threads} "
        f"smem={rung.dynamic_smem} on {dev['name'].decode()} sm_{dev['major']}{dev['minor']}")
    t0 = time.perf_counter()
    try:
        k = comp.compile_rung(rung)
        report["kernel"] = {"registers": int(k.num_regs), "compile_s": time.perf_counter() - t0}
        say(f"compiled in {time.perf_counter() - t0:.1f}s: {k.num_regs} registers/thread")
    except Exception as e:  # noqa: BLE001
        say(f"COMPILE/LOAD ERROR {type(e).__name__}: {str(e)[:2000]}")
        report["kernel"] = {"error": f"{type(e).__name__}: {e}"}
        _write(args.out, report)
        return 1

    for shape in (QUICK if args.quick else SHAPES):
        M, N, K = shape
        a, b = operands(cp, M, N, K, seed=M + N + K)
        c = cp.full((M, N), bf16.POISON_BF16, dtype=cp.uint16)
        entry: dict = {"shape": list(shape)}
        try:
            run = prepare(rung, M, N, K)
            run(a, b, c, 1.0, 0.0)
            cp.cuda.get_current_stream().synchronize()
            stats, bad, ref, out = error_stats(cp, c, a, b, K)
            entry.update(stats)
            ok = stats["wrong"] == 0 and stats["normwise"] <= stats["normwise_bound"]
            say(f"{shape}: {'OK' if ok else 'WRONG'} wrong={stats['wrong']}/{M * N} "
                f"unwritten={stats['poison_left']} nonfinite={stats['nonfinite']} "
                f"worst err/bound={stats['worst_elem_ratio']:.3g} normwise={stats['normwise']:.3e} "
                f"(bound {stats['normwise_bound']:.3e}) worst err/T={stats['worst_err_over_T']:.3g}")
            if not ok:
                for line in error_map(cp, bad, M, N):
                    say(line)
                say(f"   ref[:2,:6]={cp.asnumpy(ref[:2, :6]).round(3).tolist()}")
                say(f"   out[:2,:6]={cp.asnumpy(out[:2, :6]).round(3).tolist()}")
            entry["ok"] = ok
            # beta != 0 takes the direct epilogue: a second opinion on the main loop
            if M * N <= 3000 * 1000:
                from gemmlab.bench.check import reference
                from gemmlab.numerics import fp8

                c0 = bf16.to_bits(cp.random.default_rng(5).random((M, N), dtype=cp.float32))
                c2 = c0.copy()
                run(a, b, c2, 1.0, -0.5)
                cp.cuda.get_current_stream().synchronize()
                r2, ab2 = reference(fp8.from_bits(a), fp8.from_bits(b).T, 1.0, -0.5,
                                    bf16.from_bits(c0), xp=cp)
                e2 = cp.abs(bf16.from_bits(c2).astype(cp.float64) - r2)
                w2 = int((~(e2 <= fp8.tolerance(K).elementwise(ab2, r2))).sum())
                entry["beta_pass_wrong"] = w2
                say(f"   beta=-0.5 (direct epilogue): wrong={w2}")
        except Exception as e:  # noqa: BLE001 - a probe reports everything
            entry["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:400]
            say(f"{shape}: ERROR {entry['error']}")
            traceback.print_exc()
        report["shapes"].append(entry)
    say(f"correctness {time.perf_counter() - t0:.1f}s")

    if rung.needs.cluster != (1, 1, 1):
        try:
            from cuda.bindings import driver as cu

            cfg = cu.CUlaunchConfig()
            cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = 132, 1, 1
            cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = rung.threads, 1, 1
            cfg.sharedMemBytes = rung.dynamic_smem
            err, n = cu.cuOccupancyMaxActiveClusters(cu.CUfunction(k.kernel.ptr), cfg)
            report["max_active_clusters"] = int(n)
            say(f"max active clusters of {rung.needs.cluster}: {n} ({err.name})")
        except Exception as e:  # noqa: BLE001
            say(f"max active clusters: unavailable ({type(e).__name__}: {e})")

    if args.time:
        for n in (4096, 8192):
            a, b = operands(cp, n, n, n, seed=2)
            c = cp.zeros((n, n), dtype=cp.uint16)
            flops = 2.0 * n**3
            cands = [(rung.name, None, lambda a_, b_, c_, _r=prepare(rung, n, n, n): _r(a_, b_, c_))]
            keep = []
            try:
                lt, keep = lt_candidates(cp, n, n, n)
                cands += lt
            except Exception as e:  # noqa: BLE001
                say(f"   cuBLASLt unavailable: {type(e).__name__}: {e}")
            tc, note = torch_candidates(cp)
            cands += tc
            if note:
                say(f"   torch: {note}")
            rows = []
            for name, fast, fn in cands:
                row = {"size": n, "name": name, "fast_accum": fast}
                try:
                    c.fill(0)
                    fn(a, b, c)
                    cp.cuda.get_current_stream().synchronize()
                    if n == 4096:  # error vs the exact product (8192's float64 copy is 0.5 GB)
                        stats, *_ = error_stats(cp, c, a, b, n)
                        row.update(normwise=stats["normwise"], worst_elem_ratio=stats["worst_elem_ratio"])
                    ms = time_ms(cp, lambda: fn(a, b, c))
                    row.update(ms=ms, tflops=flops / ms / 1e9)
                except Exception as e:  # noqa: BLE001
                    row["error"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                rows.append(row)
            lib = [r for r in rows if "ms" in r and r["name"] != rung.name]
            best = min(lib, key=lambda r: r["ms"]) if lib else None
            for r in rows:
                err = (f" normwise={r['normwise']:.2e} err/bound={r['worst_elem_ratio']:.2f}"
                       if "normwise" in r else "")
                if "ms" in r:
                    pct = f" {100 * best['ms'] / r['ms']:6.1f}% of best lib" if best else ""
                    say(f"time {n}: {r['name'][:90]:<90} {r['ms']:8.4f} ms {r['tflops']:7.1f} "
                        f"TFLOP/s{pct}{err}")
                else:
                    say(f"time {n}: {r['name'][:90]:<90} ERROR {r['error']}")
            report["timing"] += rows
            del keep
    _write(args.out, report)
    return 0 if all(s.get("ok") for s in report["shapes"]) else 1


def _write(path, report):
    if path:
        with open(path, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
