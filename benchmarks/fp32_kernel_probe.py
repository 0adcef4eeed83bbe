"""Can a differently built FP32 kernel beat the tile_ld template? A device probe for sgemm_rb.

``kernels/sgemm_rb.cu`` is a register-blocked SGEMM (A transposed in shared memory, register-staged
global loads with one barrier per K tile, register double-buffered fragments, a 128-register cap
for 16 warps per SM; the header says why). This script compiles each of its variants
(``gemmlab.kernels.sgemm_rb.VARIANTS``) with nvcc, checks each against cuBLAS (relative Frobenius
error <= 1e-4 on an output pre-filled with NaN) and times it with the ladder's harness as
``fp32_tile_sweep.py`` does (CUDA events, L2 flushed before every run, 5 ms warm-up, 30 ms of
runs), cuBLAS SGEMM (FP32 math) timed right before each variant at the same shape, at 4096^3,
2048^3 and 4095 x 4095 x 4096. The dispatch rung as it is now (tile_ld 64 x 128 x 32, nvcc) is
timed the same way for reference.

The kernels need lda and ldb multiples of 4 (tile_ld's 16-byte path): where K or N is not, the
probe passes a zero-padded copy of A or B made once, outside the timing (at 4095 x 4095 x 4096: B
with ldb = 4096; C is written with ldc = 4095, so the 4-byte epilogue runs). The dispatch rung's
time there includes its own padded copies: it is what a caller gets.

One line per (shape, kernel): ms, % of cuBLAS, registers, local bytes; everything (samples too) to
``--json``. A failing variant is reported and skipped. Usage on the device:

    PYTHONPATH=src python benchmarks/fp32_kernel_probe.py --json OUT/fp32_kernel_probe.json

``--list`` prints the variants without a GPU.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

SHAPES = ((4096, 4096, 4096), (2048, 2048, 2048), (4095, 4095, 4096))
STATIC_SMEM_LIMIT = 48 * 1024


def _parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", dest="json_path", default=None)
    p.add_argument("--rep-ms", type=float, default=30.0)
    p.add_argument("--rounds", type=int, default=1,
                   help="time every (shape, kernel) this many times (cuBLAS before each)")
    p.add_argument("--list", action="store_true")
    return p.parse_args(argv)


def _err_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines() or [""]
    return f"{type(e).__name__}: {lines[0][:300]}"


def main(argv=None) -> int:
    args = _parse(argv)
    from gemmlab.kernels import sgemm_rb

    if args.list:
        for v in sgemm_rb.VARIANTS:
            print(f"{v.name}: {v.template_call}, {v.NT} threads, MINB {v.MINB}, "
                  f"{v.dynamic_smem} B shared")
        return 0

    import cupy
    import numpy as np

    from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
    from gemmlab.runtime import cublas, device
    from gemmlab.runtime.compile import compile_module
    from gemmlab.runtime.launch import prepare

    t0 = time.perf_counter()
    info = device.info()
    backend = CupyBackend(flush_l2=True)
    opts = TimingOptions(warmup_ms=5, rep_ms=args.rep_ms)
    out = {"meta": {"device": info.name, "arch": info.arch, "sm_count": info.sm_count,
                    "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": " ".join(sys.argv),
                    "timing": opts.to_dict(), "cublas_math": cublas.math_mode()},
           "variants": {}, "rows": []}

    # ---- compile every variant (nvcc, gemmlab's kernel cache) ------------------------------------
    kernels = {}
    for v in sgemm_rb.VARIANTS:
        rec = {"template": v.template_call, "threads": v.NT, "minb": v.MINB,
               "dynamic_smem": v.dynamic_smem}
        try:
            module = compile_module(sgemm_rb.translation_unit([v]), v.kernel, backend="nvcc")
            k = module.get_function(v.kernel)
            if v.dynamic_smem > STATIC_SMEM_LIMIT:
                k.max_dynamic_shared_size_bytes = v.dynamic_smem
            rec.update(regs=int(k.num_regs), local_bytes=int(k.local_size_bytes))
            kernels[v.name] = k
            print(f"compiled {v.name:<28} regs {rec['regs']:>3}  local {rec['local_bytes']} B  "
                  f"smem {v.dynamic_smem} B", flush=True)
        except Exception as e:  # noqa: BLE001 - a probe reports every failure and goes on
            rec["error"] = _err_line(e)
            print(f"compiled {v.name:<28} FAILED {rec['error']}", flush=True)
        out["variants"][v.name] = rec
    print(f"compiled in {time.perf_counter() - t0:.0f} s", flush=True)

    def timed(fn):
        r = time_fn(fn, backend, opts)
        return statistics.median(r.samples_s), list(r.samples_s)

    def pitched(x):
        """x itself when its width is a multiple of 4, else a zero-padded copy; and its pitch."""
        rows, cols = x.shape
        if cols % 4 == 0:
            return x, cols
        pad = cupy.zeros((rows, -(-cols // 4) * 4), dtype=cupy.float32)
        pad[:, :cols] = x
        return pad, pad.shape[1]

    def check_and_time(run, c, ref):
        c.fill(float("nan"))
        run()
        cupy.cuda.get_current_stream().synchronize()
        err = float(cupy.linalg.norm(c - ref) / (cupy.linalg.norm(ref) or 1.0))
        if not err <= 1e-4:  # NaN fails too
            return {"error": f"relative error {err:.2e} vs cuBLAS"}
        med, samples = timed(run)
        return {"median_s": med, "samples_s": samples, "rel_err": err}

    try:
        for M, N, K in SHAPES:
            rng = cupy.random.default_rng(M * 7 + N * 3 + K)
            a = rng.random((M, K), dtype=cupy.float32) * 2 - 1
            b = rng.random((K, N), dtype=cupy.float32) * 2 - 1
            ref = cupy.empty((M, N), dtype=cupy.float32)
            cublas.sgemm(a, b, ref)
            c = cupy.empty_like(ref)
            ap, lda = pitched(a)
            bp, ldb = pitched(b)
            ldc = N
            shape = f"{M}x{N}x{K}"

            runs = []
            for v in sgemm_rb.VARIANTS:
                k = kernels.get(v.name)
                if k is None:
                    runs.append((v.name, None, out["variants"][v.name]))
                    continue
                argv_ = (np.int32(M), np.int32(N), np.int32(K), np.int32(lda), np.int32(ldb),
                         np.int32(ldc), np.float32(1.0), ap, bp, np.float32(0.0), c)
                launch = (lambda k=k, v=v, argv_=argv_:
                          k(v.grid(M, N), v.block, argv_, shared_mem=v.dynamic_smem))
                runs.append((v.name, launch, out["variants"][v.name]))
            try:  # the current best: the dispatch rung as it is (tile_ld 64x128x32 with nvcc)
                disp = prepare("dispatch", M, N, K)
                try:
                    dk = disp._kernel(disp.plan.main_launch.kernel)
                    dmeta = {"regs": int(dk.num_regs), "local_bytes": int(dk.local_size_bytes),
                             "ran": disp.rung_for(a, b, c).name}
                except Exception as e:  # noqa: BLE001
                    dmeta = {"meta_error": _err_line(e)}
                runs.append(("dispatch (current best)", lambda disp=disp: disp(a, b, c), dmeta))
            except Exception as e:  # noqa: BLE001
                runs.append(("dispatch (current best)", None, {"error": _err_line(e)}))

            for rnd in range(args.rounds):
                for name, launch, meta in runs:
                    row = {"shape": [M, N, K], "label": name, "round": rnd, "lda": lda,
                           "ldb": ldb, "ldc": ldc,
                           **{k_: v_ for k_, v_ in meta.items() if k_ not in ("template",)}}
                    try:
                        cub_s, cub_samples = timed(lambda: cublas.sgemm(a, b, c))
                        row.update(cublas_s=cub_s, cublas_samples_s=cub_samples)
                        if launch is None:
                            row.setdefault("error", "not compiled")
                        else:
                            row.update(check_and_time(launch, c, ref))
                    except Exception as e:  # noqa: BLE001
                        row["error"] = _err_line(e)
                    if "median_s" in row:
                        row["pct_of_cublas"] = 100 * row["cublas_s"] / row["median_s"]
                        print(f"{shape:<16} {name:<28} {row['median_s'] * 1e3:8.4f} ms "
                              f"{row['pct_of_cublas']:6.1f}% of cuBLAS ({row['cublas_s'] * 1e3:.4f} ms)"
                              f"  regs {row.get('regs', '?')}  local {row.get('local_bytes', '?')} B"
                              + (f"  [{row['ran']}]" if "ran" in row else ""), flush=True)
                    else:
                        print(f"{shape:<16} {name:<28} FAILED {row['error']}", flush=True)
                    out["rows"].append(row)
            runs = disp = None  # (a 4096^3 set of operands is 256 MiB: no need to free more)
    finally:
        out["meta"]["seconds"] = time.perf_counter() - t0
        if args.json_path:
            with open(args.json_path, "w") as f:
                json.dump(out, f, indent=1)
    print(f"done in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
