"""Time the tensor-core dispatch rungs' alternatives side by side with cuBLAS at its best: a device aid
for choosing their rules (issue #20).

For every shape: the default plan and each forced alternative (every tile configuration that
applies, each split-K count that keeps the grid within one wave, and for odd shapes the wgmma_bf16
scalar fallback instead of copies to 16-byte pitches). Each is checked once against cuBLAS's output
(NaN-poisoned C first; relative Frobenius error within the bf16 rounding bound), then everything -
cuBLAS included - is timed in interleaved rounds (order reversed every round, so clock drift under
the power cap hits all sides alike) with the ladder's harness (``bench.timer.time_fn``: CUDA events,
L2 flushed before every run). Copies and the split-K reduction are inside every timed call.

    python benchmarks/tc_dispatch_compare.py --dtype bf16 --json OUT/tc_bf16.json
    python benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "4096,4096,4096;1,4096,4096"

Prints, per shape, each variant's median, % of cuBLAS (the median of the per-round ratios, as
``bench.results.pct_of``; the JSON keeps the pooled ratio too) and, for M <= 64, % of the DRAM copy
ceiling for the bytes the product must move (A, B and C once).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

BF16_SHAPES = (
    # large: 4096^3 and 8192^3 under the power cap; model projections
    (4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (16384, 4096, 4096),
    (8192, 8192, 28672), (8192, 28672, 8192),
    # medium and small squares, and neighbours
    (2048, 2048, 2048), (1024, 1024, 1024), (512, 512, 512), (2047, 2047, 2047),
    (4095, 4095, 4095), (4097, 4097, 4097),
    # prefill and decode token counts on LLaMA-3-8B / Mistral-7B projections (N x K)
    (2048, 4096, 4096), (2048, 14336, 4096), (2048, 4096, 14336), (2048, 6144, 4096),
    (128, 8192, 8192), (128, 4096, 4096), (128, 14336, 4096), (128, 4096, 14336),
    (64, 4096, 4096), (16, 4096, 4096), (1, 4096, 4096), (16, 8192, 28672), (1, 14336, 4096),
    (16, 4096, 14336), (1, 4096, 14336),
    # more decode: 8 tokens, LLaMA-3-8B QKV (6144) and fused gate/up (28672)
    (8, 4096, 4096), (1, 6144, 4096), (16, 6144, 4096), (1, 28672, 4096),
    # odd K or N
    (3000, 1000, 77), (1000, 3000, 80), (2048, 4095, 4096), (2048, 4096, 4095),
)
FP8_SHAPES = (
    (4096, 4096, 4096), (8192, 8192, 8192), (4096, 14336, 4096), (2048, 2048, 2048),
    (1024, 1024, 1024), (512, 512, 512), (128, 8192, 8192), (128, 4096, 4096), (16, 4096, 4096),
    (1, 4096, 4096), (16, 8192, 28672), (4095, 4095, 4095), (2048, 4096, 4088),
    (8, 4096, 4096), (1, 14336, 4096), (1, 4096, 14336), (16, 4096, 14336), (1, 6144, 4096),
)
COPY_DEFAULT = 2.985e12  # H100 SXM, measured 2026-11-23 (gemmlab ceilings): used if none is stored


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16")
    p.add_argument("--shapes", default=None, help='"M,N,K;M,N,K" (default: the built-in list)')
    p.add_argument("--warmup-ms", type=float, default=5.0)
    p.add_argument("--rep-ms", type=float, default=25.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--json", dest="json_path", default=None)
    p.add_argument("--quick", action="store_true", help="only the default plan (the rules' choice)")
    p.add_argument("--only", default=None,
                   help="comma-separated variant prefixes to keep besides the default plan "
                        "(e.g. '64x64,64x128 S=1,mma')")
    p.add_argument("--keep-plans", default=None,
                   help="JSON file mapping 'MxNxK' to plan names (e.g. an earlier tree's "
                        "rules' plans): keep the variants that run them besides the default plan")
    p.add_argument("--decode", action="store_true",
                   help="only the default plan, the unsplit 64 x 128 tile and the decode kernels")
    return p.parse_args(argv)


def alternatives(dtype, M, N, K, sms, quick=False, decode=False, dram_gbps=None):
    """(label, Policy) pairs: the default plan first, then forced configurations and splits whose
    plans differ from every earlier one (stream-K: "<config> SK<w>", the partial wave of tiles
    and w full waves before it). ``dram_gbps``: the GPU's datasheet bandwidth, which some rules
    weigh (as TcDispatchedGemm passes it) - without it the default plan is the H100's."""
    from gemmlab.errors import InputError
    from gemmlab.runtime import dispatch_tc as D

    base = D.plan(dtype, M, N, K, sms, D.Operands(), D.Policy(), dram_gbps)
    out, seen = [("dispatch", D.Policy())], {base.name}
    if quick:
        return out
    if decode:  # the unsplit 64 x 128 tile and its split-K twins
        nk = -(-K // D.BK[dtype])
        for s in (1, 2, 4, 8):
            pol = D.Policy(config="64x128", split=s)
            if s > nk // D.MIN_FORCED_SLICE_KTILES:
                continue
            name = D.plan(dtype, M, N, K, sms, D.Operands(), pol, dram_gbps).name
            if name not in seen:
                seen.add(name)
                out.append((f"64x128 S={s}", pol))
    configs = [] if decode else [c for c in D.configs(dtype) if (M <= 2048 or not c.startswith("64x"))
               and (M > D.STREAM_M or not c.endswith("c2"))]
    nk = -(-K // D.BK[dtype])
    for c in configs:
        t = D.tiles(M, N, c)
        for s in (1, 2, 3, 4, 6, 8, 12, 16):
            if s > 1 and (t * s > 2 * sms or s > nk // 2):
                continue
            pol = D.Policy(config=c, split=s)
            try:
                p = D.plan(dtype, M, N, K, sms, D.Operands(), pol, dram_gbps)
            except InputError:  # a plan the tile cannot take (a ping-pong tile split)
                continue
            if p.name not in seen:
                seen.add(p.name)
                out.append((f"{c} S={s}", pol))
        for w in (0, 1, 2):  # stream-K: the partial wave plus w full waves
            pol = D.Policy(config=c, streamk=w)
            try:
                p = D.plan(dtype, M, N, K, sms, D.Operands(), pol, dram_gbps)
            except InputError:
                continue
            key = f"{p.name} {p.streamk}"
            if p.streamk and key not in seen:
                seen.add(key)
                out.append((f"{c} SK{w}", pol))
    if dtype == "bf16" and base.name.startswith("repitch"):
        out.append(("odd=wgmma", D.Policy(odd="wgmma")))
    if dtype == "bf16" and base.name.startswith("repitch") and decode:
        out.pop()
    if dtype == "bf16" and D.decode_fits(dtype, M, N, K, D.Operands(), D.MMA_MAX_M):
        for cols in D.MMA_COLS:
            if cols > 32 and M > 16:  # 64-column strips hold 16 tokens
                continue
            for ks in D.paths.MMA_BF16_SPLITS:
                pol = D.Policy(config="mma", cols=cols, split=ks)
                p = D.plan(dtype, M, N, K, sms, D.Operands(), pol, dram_gbps)
                if p.name not in seen:
                    seen.add(p.name)
                    out.append((f"mma c={cols} ks={ks}", pol))
    if D.decode_fits(dtype, M, N, K, D.Operands(), D.SWAP_MAX_M):
        rule_tile = D.swap_tokens(M)
        # the rules' token tile, smaller ones (token tiles, a CTA each) up to 4 tiles a strip,
        # and the 16-token tile where the rules' is smaller (its rule until m64n8)
        tiles = [t for t in D.paths.SWAP_TOKENS if t <= max(rule_tile, 16) and -(-M // t) <= 4
                 and (t == rule_tile or t < D.paths.SWAP_TRIM_TN)]
        for tn in sorted(tiles, key=lambda t: t != rule_tile):
            tag = "" if tn == rule_tile else f" t={tn}"
            if tag:  # the rules' split and ring for this tile's CTAs
                pol = D.Policy(config="swap", tokens=tn)
                seen.add(D.plan(dtype, M, N, K, sms, D.Operands(), pol, dram_gbps).name)
                out.append((f"swap{tag} auto", pol))
            for ks in D.paths.SWAP_SPLITS:
                for st in D.paths.swap_stages(tn):
                    pol = D.Policy(config="swap", split=ks, stages=st, tokens=tn if tag else None)
                    name = D.plan(dtype, M, N, K, sms, D.Operands(), pol, dram_gbps).name
                    if name not in seen:
                        seen.add(name)
                        out.append((f"swap{tag} ks={ks} s={st}", pol))
    if D.decode_fits(dtype, M, N, K, D.Operands(), D.max_decode_rows(dtype)):
        one = dtype == "fp8" or D.decode_rows(dtype, M) == 1  # K shared by a cluster
        for cols in (D.paths.GEMV_BF16_COLS if dtype == "bf16" else (None,)):
            for ks in (D.paths.GEMV_SPLITS if one else (1,)):
                pol = D.Policy(config="gemv", cols=cols, split=ks)
                p = D.plan(dtype, M, N, K, sms, D.Operands(), pol, dram_gbps)
                if p.name not in seen:
                    seen.add(p.name)
                    out.append((f"gemv c={cols} ks={ks}" if cols else f"gemv ks={ks}", pol))
    return out


def main(argv=None) -> int:
    args = _parse(argv)
    from gemmlab.bench import interleave
    from gemmlab.bench.cublas_best import best_bf16, best_fp8
    from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
    from gemmlab.hardware import find_gpu
    from gemmlab.kernels import registry
    from gemmlab.runtime import device
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm
    from gemmlab.shapes import grids

    cupy = device.require_gpu()
    info = device.info()
    dtype = args.dtype
    shapes = ([s.dims for s in grids.parse_shapes(args.shapes)] if args.shapes
              else list(BF16_SHAPES if dtype == "bf16" else FP8_SHAPES))
    keep_plans = None
    if args.keep_plans:
        with open(args.keep_plans) as f:
            keep_plans = json.load(f).get(dtype, {})
    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=args.warmup_ms, rep_ms=args.rep_ms)
    try:
        from gemmlab.bench.ceilings import copy_ceiling

        copy = copy_ceiling(info.name).get("copy_bytes_per_s") or COPY_DEFAULT
    except Exception as e:  # a device aid: note it and go on with the H100 figure
        print(f"copy ceiling not measured ({e}); using {COPY_DEFAULT:.3e} B/s", file=sys.stderr)
        copy = COPY_DEFAULT
    rung = registry.get(f"dispatch_{dtype}")
    spec = find_gpu(info.name)  # the datasheet bandwidth the rules weigh, as the rung reads it
    gbps = spec.dram_bytes_per_s / 1e9 if spec is not None else None
    eb = 2 if dtype == "bf16" else 1
    records = []
    for M, N, K in shapes:
        t_shape = time.perf_counter()
        rng = cupy.random.default_rng(M * 31 + N * 17 + K)
        if dtype == "bf16":
            from gemmlab.numerics import bf16 as conv

            a = conv.to_bits(rng.random((M, K), dtype=cupy.float32) * 2 - 1)
            b = conv.to_bits(rng.random((K, N), dtype=cupy.float32) * 2 - 1)
            ref_run = best_bf16(M, N, K)
        else:
            from gemmlab.numerics import fp8 as conv

            a = conv.to_bits(rng.random((M, K), dtype=cupy.float32) * 2 - 1)
            b = conv.to_bits(rng.random((N, K), dtype=cupy.float32) * 2 - 1)
            try:
                ref_run = best_fp8(M, N, K)
            except Exception as e:  # cuBLASLt FP8 does not take every shape (K % 16 != 0)
                print(f"\n{M}x{N}x{K}: no cuBLASLt FP8 reference ({e}); skipped", flush=True)
                records.append({"shape": [M, N, K], "cublas_error": str(e), "variants": []})
                continue
        ref = cupy.empty((M, N), dtype=cupy.uint16)
        c = cupy.empty((M, N), dtype=cupy.uint16)
        ref_run(a, b, ref, 1.0, 0.0)
        ref_f = _bf16_to_f32(cupy, ref)
        ref_norm = float(cupy.linalg.norm(ref_f)) or 1.0
        rec = {"shape": [M, N, K], "cublas": getattr(ref_run, "summary", "cuBLAS"),
               "min_bytes": M * K * eb + K * N * eb + M * N * 2, "variants": []}
        sides = []  # (label, run, record)
        first = TcDispatchedGemm(rung, M, N, K)
        keep = tuple(x.strip() for x in args.only.split(",")) if args.only else None
        want = keep_plans.get(f"{M}x{N}x{K}", []) if keep_plans is not None else None
        for label, pol in alternatives(dtype, M, N, K, info.sm_count, args.quick, args.decode,
                                      gbps):
            if label != "dispatch" and want is not None:
                from gemmlab.runtime import dispatch_tc as D

                if D.plan(dtype, M, N, K, info.sm_count, D.Operands(), pol, gbps).name not in want:
                    continue
            elif keep and label != "dispatch" and not label.startswith(keep):
                continue
            try:
                run = first if label == "dispatch" else TcDispatchedGemm(rung, M, N, K, policy=pol)
                c.fill(0x7FC0)  # bf16 NaN
                run(a, b, c, 1.0, 0.0)
                cupy.cuda.get_current_stream().synchronize()
                out = _bf16_to_f32(cupy, c)
                err = float(cupy.linalg.norm(out - ref_f)) / ref_norm
                nan = bool(cupy.isnan(out).any())
            except Exception as e:  # keep going: one failing variant must not hide the others
                rec["variants"].append({"variant": label, "error": f"{type(e).__name__}: {e}"})
                print(f"{M}x{N}x{K} {label}: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            ran = run.rung_for(a, b, c)
            v = {"variant": label, "ran": ran.name, "summary": ran.summary, "rel_err_vs_cublas": err,
                 "nan": nan, "ok": (not nan) and err <= 2e-2}
            rec["variants"].append(v)
            sides.append((label, run, v))
        parts = {label: [] for label, _, _ in sides}
        parts["cublas"] = []
        everyone = [(lbl, run) for lbl, run, _ in sides] + [("cublas", ref_run)]
        for r in range(args.rounds):
            for i in interleave.order(len(everyone), r):
                lbl, run = everyone[i]
                res = time_fn(lambda run=run, a=a, b=b, c=c: run(a, b, c, 1.0, 0.0), backend, opts)
                parts[lbl].append(list(res.samples_s))
        cub = [x for p in parts["cublas"] for x in p]
        cub_med = statistics.median(cub)
        rec["cublas_median_s"] = cub_med
        rec["cublas_round_medians_s"] = [statistics.median(p) for p in parts["cublas"]]
        for lbl, _, v in sides:
            mine = [x for p in parts[lbl] for x in p]
            med = statistics.median(mine)
            v["median_s"] = med
            v["round_medians_s"] = [statistics.median(p) for p in parts[lbl]]
            v["round_vs_cublas"] = [statistics.median(q) / statistics.median(p)
                                    for p, q in zip(parts[lbl], parts["cublas"])]
            # the median of the rounds' ratios (bench.results.pct_of): pooled samples mix clock states
            v["vs_cublas"] = statistics.median(v["round_vs_cublas"])
            v["pooled_vs_cublas"] = cub_med / med
            v["pct_of_copy"] = 100 * rec["min_bytes"] / med / copy
            v["tflops"] = 2 * M * N * K / med / 1e12
        rec["cublas_pct_of_copy"] = 100 * rec["min_bytes"] / cub_med / copy
        rec["seconds"] = time.perf_counter() - t_shape
        records.append(rec)
        _print_shape(rec)
        del a, b, c, ref, ref_f, first, sides, everyone
        cupy.get_default_memory_pool().free_all_blocks()
    meta = {"device": info.name, "arch": info.arch, "sm_count": info.sm_count, "dtype": dtype,
            "copy_bytes_per_s": copy, "timing": opts.to_dict(), "rounds": args.rounds,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": " ".join(sys.argv)}
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"meta": meta, "shapes": records}, f, indent=1)
    return 0


def _bf16_to_f32(cupy, bits):
    return (bits.astype(cupy.uint32) << 16).view(cupy.float32)


def _print_shape(rec):
    M, N, K = rec["shape"]
    print(f"\n{M}x{N}x{K}: cuBLAS {rec['cublas_median_s'] * 1e6:.1f} us "
          f"({rec['cublas_pct_of_copy']:.0f}% of copy) [{rec['cublas']}] {rec['seconds']:.1f}s")
    for v in rec["variants"]:
        if "error" in v:
            print(f"  {v['variant']:<20} ERROR {v['error']}")
            continue
        rounds = "/".join(f"{x:.3f}" for x in v["round_vs_cublas"])
        flag = "" if v["ok"] else f"  WRONG (rel err {v['rel_err_vs_cublas']:.1e}, nan {v['nan']})"
        print(f"  {v['variant']:<20} {v['median_s'] * 1e6:10.1f} us  {v['vs_cublas']:.3f}x cuBLAS "
              f"(rounds {rounds})  {v['pct_of_copy']:5.1f}% copy  {v['ran']}{flag}")


if __name__ == "__main__":
    sys.exit(main())
