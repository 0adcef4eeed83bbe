"""Does the order of the FFMAs in the tile kernel's outer product change ptxas's register-bank
conflicts, and the speed? A device probe for issue #12 (4096^3).

Nsight Compute puts most of the dispatch rung's dispatch stalls at 4096^3 on FFMAs, and half of the
main loop's FFMAs read two source registers from one bank (docs/shapes.md). The loop nest
``for m: for n: acc[m][n] += a[m] * b[n]`` is rewritten in the source text (the kernel files are not
changed) as n-outer, and as a 2 x 2-blocked order; each variant of the big tile (64x128x32) is
compiled with nvcc, its SASS main loop counted (FFMAs with two same-bank sources: register number
mod 4) with cuobjdump, checked against cuBLAS and timed with the ladder harness at 4096^3, cuBLAS
right before it, twice. Usage on the device:

    PYTHONPATH=src python benchmarks/ffma_order_probe.py --json OUT/ffma_order.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

LOOP = """                for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
                    for (int n = 0; n < WNITER * TN; ++n)
                        acc[m][n] += get(a[m], kk) * regN[n];"""
ORDERS = {
    "m-outer (as is)": LOOP,
    "n-outer": """                for (int n = 0; n < WNITER * TN; ++n)
#pragma unroll
                    for (int m = 0; m < WMITER * TM; ++m)
                        acc[m][n] += get(a[m], kk) * regN[n];""",
    "2x2 blocks": """                for (int m0 = 0; m0 < WMITER * TM; m0 += 2)
#pragma unroll
                    for (int n0 = 0; n0 < WNITER * TN; n0 += 2)
#pragma unroll
                        for (int q = 0; q < 4; ++q)
                            acc[m0 + q / 2][n0 + q % 2] += get(a[m0 + q / 2], kk) * regN[n0 + q % 2];""",
}
_FFMA = re.compile(r"FFMA\S*\s+R\d+,\s*-?(R\d+)\S*,\s*-?(R\d+)\S*,\s*-?(R\d+)")


def bank_stats(sass: str) -> tuple[int, int]:
    """(FFMAs with three register sources, of which two or more share a bank: number mod 4)."""
    tot = same = 0
    for m in _FFMA.finditer(sass):
        banks = [int(r[1:]) % 4 for r in m.groups()]
        tot += 1
        same += len(set(banks)) < 3
    return tot, same


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", dest="json_path", default=None)
    args = p.parse_args(argv)
    import cupy

    from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
    from gemmlab.kernels import paths
    from gemmlab.runtime import cublas, device
    from gemmlab.runtime.compile import compile_cubin, get_compiler

    info = device.info()
    M = N = K = 4096
    rng = cupy.random.default_rng(5)
    a = rng.random((M, K), dtype=cupy.float32) * 2 - 1
    b = rng.random((K, N), dtype=cupy.float32) * 2 - 1
    ref = cupy.empty((M, N), dtype=cupy.float32)
    cublas.sgemm(a, b, ref)
    c = cupy.empty_like(ref)
    backend, opts = CupyBackend(flush_l2=True), TimingOptions(warmup_ms=5, rep_ms=40)
    k = paths.tile_kernel("big", 1, 1)
    base = paths.translation_unit([k])
    if LOOP not in base:
        print("the loop text was not found in the kernel source: nothing to compare", file=sys.stderr)
        return 1
    grid = (-(-N // k.params["BN"]), -(-M // k.params["BM"]), 1)
    out = {"device": info.name, "shape": [M, N, K], "kernel": k.name, "variants": []}
    for label, text in ORDERS.items():
        src = base.replace(LOOP, text)
        cubin = compile_cubin(src, arch=info.arch, compiler=get_compiler("nvcc"), name=k.kernel)
        sass = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True).stdout
        tot, same = bank_stats(sass)
        mod = cupy.RawModule(path=str(cubin))
        fn = mod.get_function(k.kernel)
        fn.max_dynamic_shared_size_bytes = k.dynamic_smem
        argv_ = (cupy.int32(M), cupy.int32(N), cupy.int32(K), cupy.int32(K), cupy.int32(N),
                 cupy.int32(N), cupy.int32(K), cupy.int64(0), cupy.float32(1), a, b,
                 cupy.float32(0), c)

        def run():
            fn(grid, (k.threads, 1, 1), argv_, shared_mem=k.dynamic_smem)

        c.fill(float("nan"))
        run()
        err = float(cupy.linalg.norm(c - ref) / cupy.linalg.norm(ref))
        rec = {"order": label, "regs": int(fn.num_regs), "local_bytes": int(fn.local_size_bytes),
               "ffma": tot, "ffma_same_bank": same, "rel_err": err, "rounds": []}
        for _ in range(2):
            cub = statistics.median(time_fn(lambda: cublas.sgemm(a, b, ref), backend, opts).samples_s)
            med = statistics.median(time_fn(run, backend, opts).samples_s)
            rec["rounds"].append({"cublas_s": cub, "median_s": med, "pct_of_cublas": 100 * cub / med})
        out["variants"].append(rec)
        pct = " / ".join(f"{r['pct_of_cublas']:.1f}%" for r in rec["rounds"])
        print(f"{label:<16} regs {rec['regs']} local {rec['local_bytes']}  FFMA {tot}, same-bank "
              f"{same} ({100 * same / max(tot, 1):.0f}%)  err {err:.1e}  {pct} of cuBLAS", flush=True)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
