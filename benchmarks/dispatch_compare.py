"""Time the dispatch rung's alternatives side by side with cuBLAS (FP32, TF32 off): a device aid for
choosing its rules (issue #12).

For every shape: the default plan, and each alternative policy whose plan differs from it -
``odd=scalar`` (4-byte loads instead of zero-padded copies + the 16-byte kernel: the padded-vs-guarded
question), ``skinny=False`` (the tile path at a skinny shape), ``split=1`` (no split-K), the other tile
shape - plus the double_buffered rung as it runs today. Each is checked against cuBLAS once (relative
error), then timed with the ladder's harness (``bench.timer.time_fn``: CUDA events, L2 flushed
before every run). The padded copies and the split-K reduction are inside every timed call.

    python benchmarks/dispatch_compare.py --json OUT/dispatch_compare.json
    python benchmarks/dispatch_compare.py --shapes "4095,4095,4095;1,4096,4096" --rep-ms 30

Prints a table (median, % of cuBLAS, GB/s and % of the copy ceiling for skinny shapes) and, per
odd shape, which of padded / 4-byte won.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

DEFAULT_SHAPES = (
    # odd N or K: padded copies vs 4-byte loads
    (4095, 4095, 4095), (4097, 4097, 4097), (1023, 1023, 1023), (1025, 1025, 1025),
    (1000, 3000, 77), (1024, 50257, 768), (127, 127, 127), (4097, 127, 1000),
    # tiny products: the one-wave shared-memory kernel or the tile plans
    (64, 64, 64), (160, 160, 160), (255, 255, 255), (96, 96, 1024), (300, 520, 136), (200, 200, 200),
    # small K: a 32-deep K-step half empty
    (4096, 4096, 16),
    # few tiles: split-K and the tile shape
    (1024, 1024, 1024), (2048, 2048, 2048), (128, 128, 65536), (256, 256, 16384), (4096, 4096, 4096),
    # skinny
    (1, 4096, 4096), (4096, 1, 4096), (8, 4096, 4096), (16, 4096, 4096), (1, 4097, 4095),
    (4097, 1, 4095), (4096, 16, 4096), (1, 11008, 4096),
)
COPY_DEFAULT = 2.985e12  # H100 SXM, measured 2026-11-23 (gemmlab ceilings): used if none is stored


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shapes", default=None, help='"M,N,K;M,N,K" (default: a built-in list of 28)')
    p.add_argument("--warmup-ms", type=float, default=5.0)
    p.add_argument("--rep-ms", type=float, default=40.0)
    p.add_argument("--json", dest="json_path", default=None)
    p.add_argument("--no-baseline", action="store_true", help="skip the double_buffered rung")
    return p.parse_args(argv)


def _alternatives(M, N, K, machine):
    from gemmlab.kernels import paths
    from gemmlab.runtime import dispatch as D

    base = D.plan(M, N, K, machine)
    out = [("dispatch", D.Policy())]
    seen = {base.name}
    cands = [("odd=scalar", D.Policy(odd="scalar")), ("skinny=False", D.Policy(skinny=False)),
             ("split=1", D.Policy(split=1)), ("tiny=False", D.Policy(tiny=False))]
    if M * N * K <= 2**26 and not (N <= D.SKINNY or M <= D.SKINNY_M):
        cands.append(("tiny=True", D.Policy(tiny=True)))
    if base.main_launch.kernel.family != "tile_ld":
        base = D.plan(M, N, K, machine, D.Operands(), D.Policy(tiny=False))
    if base.main_launch.kernel.family == "tile_ld":
        big = (paths.BIG["BM"], paths.BIG["BN"])
        other = "small" if base.main_launch.kernel.tile == big else "big"
        cands.append((f"tile={other}", D.Policy(tile=other)))
        cands.append((f"tile={other},split=1", D.Policy(tile=other, split=1)))
    for label, pol in cands:
        p = D.plan(M, N, K, machine, D.Operands(), pol)
        if p.name not in seen:
            seen.add(p.name)
            out.append((label, pol))
    return out


def main(argv=None) -> int:
    args = _parse(argv)
    from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
    from gemmlab.kernels import registry
    from gemmlab.runtime import cublas, device
    from gemmlab.runtime.dispatch_gemm import DispatchedGemm
    from gemmlab.runtime.launch import prepare
    from gemmlab.shapes import grids, shapemap

    cupy = device.require_gpu()
    info = device.info()
    shapes = [s.dims for s in grids.parse_shapes(args.shapes)] if args.shapes else list(DEFAULT_SHAPES)
    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=args.warmup_ms, rep_ms=args.rep_ms)
    try:
        from gemmlab.bench.ceilings import copy_ceiling

        copy = copy_ceiling(info.name).get("copy_bytes_per_s") or COPY_DEFAULT
    except Exception as e:  # a device aid: note it and go on with the H100 figure
        print(f"copy ceiling not measured ({e}); using {COPY_DEFAULT:.3e} B/s", file=sys.stderr)
        copy = COPY_DEFAULT
    dispatch_rung = registry.get("dispatch")
    records = []

    def timed(fn):
        r = time_fn(fn, backend, opts)
        return statistics.median(r.samples_s), list(r.samples_s)

    for M, N, K in shapes:
        rng = cupy.random.default_rng(M * 31 + N * 17 + K)
        a = rng.random((M, K), dtype=cupy.float32) * 2 - 1
        b = rng.random((K, N), dtype=cupy.float32) * 2 - 1
        ref = cupy.empty((M, N), dtype=cupy.float32)
        c = cupy.empty((M, N), dtype=cupy.float32)
        cublas.sgemm(a, b, ref)
        ref_norm = float(cupy.linalg.norm(ref)) or 1.0
        cub_s, cub_samples = timed(lambda: cublas.sgemm(a, b, ref))
        minb = shapemap.min_bytes(M, N, K)
        rec = {"shape": [M, N, K], "class": shapemap.shape_class(M, N, K), "cublas_median_s": cub_s,
               "cublas_samples_s": cub_samples, "variants": []}
        runs = []
        first = DispatchedGemm(dispatch_rung, M, N, K)
        for label, pol in _alternatives(M, N, K, first.machine):
            runs.append((label, first if label == "dispatch" else DispatchedGemm(dispatch_rung, M, N, K, policy=pol)))
        if not args.no_baseline:
            runs.append(("double_buffered", prepare("double_buffered", M, N, K)))
        for label, run in runs:
            t0 = time.perf_counter()
            try:
                c.fill(float("nan"))
                run(a, b, c)
                err = float(cupy.linalg.norm(c - ref)) / ref_norm
                med, samples = timed(lambda: run(a, b, c))
            except Exception as e:  # keep going: one failing variant must not hide the others
                rec["variants"].append({"variant": label, "error": f"{type(e).__name__}: {e}"})
                print(f"{M}x{N}x{K} {label}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            ran = run.rung_for(a, b, c)
            rec["variants"].append({
                "variant": label, "ran": ran.name, "summary": getattr(ran, "summary", ran.name),
                "rel_err_vs_cublas": err, "ok": err <= 1e-4, "median_s": med, "samples_s": samples,
                "pct_of_cublas": 100 * cub_s / med, "gbps": minb / med / 1e9, "pct_of_copy": 100 * minb / med / copy,
                "seconds_incl_setup": time.perf_counter() - t0})
        records.append(rec)
        _print_shape(rec)
    meta = {"device": info.name, "arch": info.arch, "sm_count": info.sm_count, "copy_bytes_per_s": copy,
            "cublas_math": cublas.math_mode(), "timing": opts.to_dict(), "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "command": " ".join(sys.argv)}
    verdicts = _padded_vs_scalar(records)
    for line in verdicts:
        print(line)
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"meta": meta, "shapes": records, "padded_vs_scalar": verdicts}, f, indent=1)
    return 0


def _print_shape(rec):
    M, N, K = rec["shape"]
    print(f"\n{M}x{N}x{K} ({rec['class']}): cuBLAS {rec['cublas_median_s'] * 1e3:.4f} ms")
    for v in rec["variants"]:
        if "error" in v:
            print(f"  {v['variant']:<22} ERROR {v['error']}")
            continue
        bw = f"  {v['gbps']:7.0f} GB/s ({v['pct_of_copy']:.0f}% of copy)" if rec["class"].startswith("skinny") else ""
        flag = "" if v["ok"] else f"  WRONG (rel err {v['rel_err_vs_cublas']:.1e})"
        print(f"  {v['variant']:<22} {v['median_s'] * 1e3:9.4f} ms {v['pct_of_cublas']:6.1f}% of cuBLAS{bw}  {v['ran']}{flag}")


def _padded_vs_scalar(records):
    out = []
    for rec in records:
        by = {v["variant"]: v for v in rec["variants"] if "error" not in v}
        d, s = by.get("dispatch"), by.get("odd=scalar")
        if d is None or s is None or not d["ran"].startswith("padded"):
            continue
        win = "padded" if d["median_s"] <= s["median_s"] else "4-byte"
        M, N, K = rec["shape"]
        out.append(f"padded vs 4-byte at {M}x{N}x{K}: {d['pct_of_cublas']:.1f}% vs {s['pct_of_cublas']:.1f}% of cuBLAS -> {win}")
    return out


if __name__ == "__main__":
    sys.exit(main())
