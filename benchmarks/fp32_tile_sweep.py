"""Which FP32 tile kernel should the dispatch rung run? A device probe for issue #12.

The dispatch rung's tile path is double_buffered's template (``tile_ld``) at one "big" and one
"small" instantiation. This probe times every instantiation of that template that compiles
without spilling (block tile, warp tile, BK, stages, blocks/SM cap, rasterization), built with
nvcc, side by side with cuBLAS SGEMM (TF32 off), and prints the ranking. In order:

1. ``square``: every candidate at 4096^3 (each checked against cuBLAS, then timed with the ladder's
   harness: CUDA events, L2 flushed by a read before every run), cuBLAS re-timed every 8 candidates
   so a clock drift shows; the best ``--top`` re-timed at 4096^3, 4095^3 and 4097^3 (padded copies
   inside the call, as the dispatch rung runs them), 2048^3 and two model shapes, each right after
   cuBLAS at the same shape.
2. ``tiny``: 127^3, where the time is a few microseconds: small tiles (32x32 / 32x64 / 64x32 /
   64x64) with split-K 1, 2, 4, 8, every FP32 ladder rung that accepts the shape, and an empty
   kernel (the launch-and-events floor).

Everything goes to ``--json`` with raw samples; a line per result to stdout. Usage on the device:

    PYTHONPATH=src python benchmarks/fp32_tile_sweep.py --json OUT/sweep.json --jobs 16

``--list`` prints the candidates without a GPU.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import itertools
import json
import statistics
import sys
import time

SMEM_LIMIT = 227 * 1024  # H100 opt-in shared memory per block


def _valid(bm, bn, bk, wm, wn, wni, nt, st) -> bool:
    """double_buffered_ld's and WarpTile's static_asserts (TM = 8, TN = 4), in Python."""
    if bm % wm or bn % wn or (bm // wm) * (bn // wn) * 32 != nt:
        return False
    area = wm * wn
    if area % (32 * 8 * 4 * wni):
        return False
    wmiter = area // (32 * 8 * 4 * wni)
    if wmiter < 1 or wm % wmiter or wn % wni:
        return False
    wsubm, wsubn = wm // wmiter, wn // wni
    if (wsubm // 8) * (wsubn // 4) != 32 or wsubm % 8 or wsubn % 4 or bm % 32:
        return False
    kc = bk // 4
    if kc < 2 or kc & (kc - 1) or (bm * bk // 4) % nt or (bk * bn // 4) % nt:
        return False
    if nt % kc or nt % (bn // 4):
        return False
    return st * bk * (bm + bn) * 4 <= SMEM_LIMIT


def square_candidates() -> list[dict]:
    """Block tiles 64..256, 4 or 8 warps, 64 or 128 accumulators per thread."""
    out = []
    for (bm, bn), nt, (bk, st) in itertools.product(
            [(64, 128), (128, 64), (128, 128), (128, 256), (256, 128), (64, 256), (256, 64)],
            (128, 256), ((16, 3), (32, 2), (16, 4))):
        for wm, wn, wni in itertools.product((32, 64, 128), (32, 64, 128), (1, 2, 4)):
            acc = wm * wn // 32
            if acc not in (64, 128) or not _valid(bm, bn, bk, wm, wn, wni, nt, st):
                continue
            # 64 accumulators in a 4-warp block: ask ptxas for 3 resident blocks (the previous
            # H100 winner's cap, <= 168 registers); otherwise leave the register count alone.
            minb = 3 if (acc == 64 and nt == 128) else 0
            out.append(dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, WNITER=wni, TM=8, TN=4,
                            NT=nt, STAGES=st, GROUP=0, MINB=minb))
    return out


def wide_candidates() -> list[dict]:
    """cuBLAS's own FP32 shape on the H100 (ncu: sm80_xmma_gemm_f32f32..._tilesize256x128x8_stage3
    _warpsize4x2x1: 8 warps of 64 x 64, 128 accumulators per lane, one block per SM) and its
    neighbours, at the shallow K-steps (BK 8) the default space leaves out."""
    out = []
    for (bm, bn), (bk, st), wni in itertools.product(
            [(256, 128), (128, 256), (128, 128)], ((8, 2), (8, 3), (8, 4), (16, 2), (16, 3)), (2, 4)):
        for wm, wn in ((64, 64), (128, 32), (32, 128)):
            nt = (bm // wm) * (bn // wn) * 32
            if nt not in (128, 256) or not _valid(bm, bn, bk, wm, wn, wni, nt, st):
                continue
            out.append(dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, WNITER=wni, TM=8, TN=4, NT=nt,
                            STAGES=st, GROUP=0, MINB=0))
    return out


def tiny_candidates() -> list[dict]:
    out = []
    for (bm, bn), bk in itertools.product([(32, 32), (32, 64), (64, 32), (64, 64)], (8, 16)):
        nt = (bm // 32) * (bn // 32) * 32
        if _valid(bm, bn, bk, 32, 32, 1, nt, 3):
            out.append(dict(BM=bm, BN=bn, BK=bk, WM=32, WN=32, WNITER=1, TM=8, TN=4, NT=nt,
                            STAGES=3, GROUP=0, MINB=0))
    return out


def label(p: dict) -> str:
    return (f"{p['BM']}x{p['BN']}x{p['BK']}_w{p['WM']}x{p['WN']}n{p['WNITER']}_t{p['NT']}"
            f"_s{p['STAGES']}_b{p['MINB']}" + (f"_g{p['GROUP']}" if p["GROUP"] else ""))


def report(res: dict, cublas_s: float, where: str, name: str, scale: float, extra) -> dict:
    """Add % of cuBLAS to a timed result and print its line (ms at scale 1e3, us at 1e6)."""
    if "median_s" not in res:
        print(f"{where} {name:<44} {res['error']}", flush=True)
        return res
    res["pct_of_cublas"] = 100 * cublas_s / res["median_s"]
    unit = "ms" if scale == 1e3 else "us"
    print(f"{where} {name:<44} {res['median_s'] * scale:9.4f} {unit} {res['pct_of_cublas']:5.1f}%  "
          f"{extra(res)}", flush=True)
    return res


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", dest="json_path", default=None)
    p.add_argument("--jobs", type=int, default=8, help="parallel nvcc compiles")
    p.add_argument("--top", type=int, default=6)
    p.add_argument("--parts", default="square,tiny")
    p.add_argument("--rep-ms", type=float, default=30.0)
    p.add_argument("--list", action="store_true")
    p.add_argument("--limit", type=int, default=0, help="first N square candidates only")
    p.add_argument("--space", choices=("default", "wide"), default="default",
                   help="square candidates: the default space, or cuBLAS-like 128-accumulator tiles")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = _parse(argv)
    sq = square_candidates() if args.space == "default" else wide_candidates()
    tiny = tiny_candidates()
    if args.limit:
        sq = sq[:args.limit]
    if args.list:
        for p in sq + tiny:
            print(label(p))
        print(f"{len(sq)} square, {len(tiny)} tiny candidates")
        return 0

    import cupy

    from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
    from gemmlab.kernels import paths, registry
    from gemmlab.runtime import cublas, device
    from gemmlab.runtime.compile import compile_cubin, get_compiler
    from gemmlab.runtime.dispatch import Policy
    from gemmlab.runtime.dispatch_gemm import DispatchedGemm
    from gemmlab.runtime.launch import prepare

    info = device.info()
    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=5, rep_ms=args.rep_ms)
    rung = registry.get("dispatch")
    out = {"meta": {"device": info.name, "arch": info.arch, "sm_count": info.sm_count,
                    "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": " ".join(sys.argv),
                    "timing": opts.to_dict(), "cublas_math": cublas.math_mode()}}

    def register(p: dict) -> str:
        name = "sw_" + label(p)
        paths.TILES[name] = p
        return name

    def precompile(cands: list[dict], vecs) -> dict[str, str]:
        """nvcc every (candidate, VEC, VEC_C) in parallel into the kernel cache; errors by label."""
        comp = get_compiler("nvcc")
        jobs = {}
        errors = {}
        with cf.ThreadPoolExecutor(args.jobs) as ex:
            for p in cands:
                for v, c in vecs:
                    k = paths.PathKernel(f"sw_{v}{c}", "tile_ld", {**p, "VEC": v, "VEC_C": c})
                    src = paths.translation_unit([k])
                    jobs[ex.submit(compile_cubin, src, arch=info.arch, compiler=comp,
                                   name=k.kernel)] = label(p)
            for f in cf.as_completed(jobs):
                if f.exception() is not None:
                    errors[jobs[f]] = str(f.exception()).splitlines()[0][:200]
        return errors

    def operands(M, N, K):
        rng = cupy.random.default_rng(M * 7 + N * 3 + K)
        a = rng.random((M, K), dtype=cupy.float32) * 2 - 1
        b = rng.random((K, N), dtype=cupy.float32) * 2 - 1
        ref = cupy.empty((M, N), dtype=cupy.float32)
        cublas.sgemm(a, b, ref)
        return a, b, ref, cupy.empty_like(ref)

    def timed(fn):
        r = time_fn(fn, backend, opts)
        return statistics.median(r.samples_s), list(r.samples_s)

    def run_one(run, a, b, ref, c):
        c.fill(float("nan"))
        run(a, b, c)
        err = float(cupy.linalg.norm(c - ref) / (cupy.linalg.norm(ref) or 1.0))
        if not err <= 1e-4:
            return {"error": f"relative error {err:.2e} vs cuBLAS"}
        med, samples = timed(lambda: run(a, b, c))
        return {"median_s": med, "samples_s": samples, "rel_err": err}

    def cublas_time(a, b, c):
        return timed(lambda: cublas.sgemm(a, b, c))

    t0 = time.perf_counter()
    parts = args.parts.split(",")
    if "square" in parts:
        errors = precompile(sq, [(1, 1)])
        print(f"compiled {len(sq)} square candidates in {time.perf_counter() - t0:.0f} s; "
              f"{len(errors)} failed", flush=True)
        M = N = K = 4096
        a, b, ref, c = operands(M, N, K)
        rows, cub = [], []

        def time_square(p):
            name = label(p)
            if name in errors:
                return {"cfg": p, "label": name, "error": errors[name]}
            try:
                run = DispatchedGemm(rung, M, N, K, backend="nvcc",
                                     policy=Policy(tile=register(p), split=1))
                k = run._kernel(run.plan.main_launch.kernel)
                res = run_one(run, a, b, ref, c)
                res.update(regs=int(k.num_regs), local_bytes=int(k.local_size_bytes),
                           blocks_per_sm=run._blocks_per_sm(run.plan.main_launch.kernel))
            except Exception as e:  # noqa: BLE001 - a probe reports every failure and goes on
                res = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
            res.update(cfg=p, label=name, cublas_s=cub[-1])
            return report(res, cub[-1], "4096^3", name, 1e3, lambda r: (
                f"regs {r['regs']} local {r['local_bytes']} blocks/SM {r['blocks_per_sm']}"))

        for i, p in enumerate(sq):
            if i % 8 == 0:
                cub.append(cublas_time(a, b, c)[0])
            rows.append(time_square(p))
        # Phase B: the best 4 geometries with rasterization bands, other register caps and BK.
        good = sorted((r for r in rows if "median_s" in r), key=lambda r: r["median_s"])
        extra = []
        for r in good[:4]:
            p = r["cfg"]
            for change in ({"GROUP": 8}, {"GROUP": 16}, {"MINB": 0 if p["MINB"] else 2},
                           {"BK": 8, "STAGES": 4}, {"BK": 32, "STAGES": 3}):
                q = {**p, **change}
                if _valid(q["BM"], q["BN"], q["BK"], q["WM"], q["WN"], q["WNITER"], q["NT"],
                          q["STAGES"]) and q not in sq and q not in extra:
                    extra.append(q)
        errors.update(precompile(extra, [(1, 1)]))
        for p in extra:
            rows.append(time_square(p))
        out["square_4096"] = {"cublas_s": cub, "rows": rows}
        good = sorted((r for r in rows if "median_s" in r), key=lambda r: r["median_s"])
        best = [r["cfg"] for r in good[:args.top]]
        shapes = [(4096, 4096, 4096), (4095, 4095, 4095), (4097, 4097, 4097), (2048, 2048, 2048),
                  (2048, 11008, 4096), (4096, 768, 3072), (1024, 50257, 768)]
        confirm = []
        for M, N, K in shapes:
            a, b, ref, c = operands(M, N, K)
            # the small tile as the dispatch rung has it, built with nvcc, for comparison
            for p in best + [dict(paths.SMALL), None]:
                cub_s, _ = cublas_time(a, b, c)
                name = "dispatch (current default)" if p is None else label(p)
                run = None
                try:
                    if p is None:  # the dispatch rung as it is now (its own rules, NVRTC)
                        run = prepare("dispatch", M, N, K)
                    else:
                        run = DispatchedGemm(rung, M, N, K, backend="nvcc",
                                             policy=Policy(tile=register(p), split=1))
                    res = run_one(run, a, b, ref, c)
                except Exception as e:  # noqa: BLE001
                    res = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
                res.update(shape=[M, N, K], label=name, cublas_s=cub_s,
                           ran=run.rung_for(a, b, c).name if run is not None else "")
                confirm.append(report(res, cub_s, f"{M}x{N}x{K}", name, 1e3, lambda r: r["ran"]))
            del a, b, ref, c
            cupy.get_default_memory_pool().free_all_blocks()
        out["confirm"] = confirm
        print(f"square part done at {time.perf_counter() - t0:.0f} s", flush=True)

    if "tiny" in parts:
        precompile(tiny, [(0, 0), (1, 1), (1, 0)])
        M = N = K = 127
        a, b, ref, c = operands(M, N, K)
        rows = []
        empty = cupy.RawKernel('extern "C" __global__ void gemmlab_empty() {}', "gemmlab_empty")
        empty((1,), (32,), ())
        e_s, e_samples = timed(lambda: empty((1,), (32,), ()))
        rows.append({"label": "empty kernel", "median_s": e_s, "samples_s": e_samples})
        print(f"127^3 empty kernel {e_s * 1e6:.2f} us", flush=True)
        runs = []
        for p in tiny:
            for s in (1, 2, 4, 8):
                runs.append((f"{label(p)} split {s}", lambda p=p, s=s: DispatchedGemm(
                    rung, M, N, K, backend="nvcc", policy=Policy(tile=register(p), split=s))))
        runs.append(("dispatch (current default)", lambda: prepare("dispatch", M, N, K)))
        for r in registry.all_rungs("fp32"):
            # the ladder's rungs and the shared-memory tiling sweep (small tiles, one element per
            # thread) as they are: 127 is odd, so the vector rungs' scalar twins
            if r.name in ("dispatch", "autotuned") or r.name.startswith("autotuned_"):
                continue
            if r.accepts(M, N, K) and (r.name.endswith("_scalar") or not r.vectorized):
                runs.append((r.name, lambda r=r: prepare(r, M, N, K)))
        for name, make in runs:
            cub_s, _ = cublas_time(a, b, c)
            try:
                run = make()
                res = run_one(run, a, b, ref, c)
            except Exception as e:  # noqa: BLE001
                res = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"}
            res.update(label=name, cublas_s=cub_s)
            rows.append(report(res, cub_s, "127^3", name, 1e6,
                               lambda r: f"(cuBLAS {cub_s * 1e6:.2f} us)"))
        out["tiny_127"] = rows
        print(f"tiny part done at {time.perf_counter() - t0:.0f} s", flush=True)

    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
