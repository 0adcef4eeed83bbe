"""Every path of the dispatch rung, once, for NVIDIA's compute-sanitizer (issue #12: "never a read out
of bounds - compute-sanitizer clean"). Run it under each tool on the device:

    compute-sanitizer --tool memcheck  --error-exitcode 3 python benchmarks/sanitize_dispatch.py --set memcheck
    compute-sanitizer --tool initcheck --error-exitcode 3 python benchmarks/sanitize_dispatch.py --set initcheck
    compute-sanitizer --tool racecheck --error-exitcode 3 python benchmarks/sanitize_dispatch.py --set racecheck
    compute-sanitizer --tool synccheck --error-exitcode 3 python benchmarks/sanitize_dispatch.py --set racecheck

(``benchmarks/run_sanitizer_device.sh OUT`` runs all four.) Each case launches the plan with
beta = 0 into a NaN-filled C and with beta = 0.5, and compares with cuBLAS SGEMM (relative
Frobenius error <= 1e-4, no NaN); a wrong result exits 1 on its own, a sanitizer finding exits 3.

The sets: ``memcheck`` covers every path at odd sizes (skinny M and N with 16- and 4-byte loads and
split-K, tiny, both tile shapes, padded copies of A, B or both, the 4-byte policy, forced splits,
unaligned views of A, B and C); ``initcheck`` the paths that read memory they allocated (the
padded copies' zero padding, the split-K workspace); ``racecheck`` small shapes of every kernel
(shared-memory hazards; the tool is ~1000x slower than the kernel).
"""

from __future__ import annotations

import argparse
import sys

# (M, N, K, policy keywords or None, which operand to misalign or "")
MEMCHECK = [
    ((1, 1, 1), None, ""), ((1, 7, 127), None, ""), ((7, 1, 4097), None, ""),
    ((1, 4097, 4095), None, ""), ((1, 4096, 4096), None, ""), ((4, 1000, 4097), None, ""),
    ((7, 1000, 4097), None, ""), ((16, 4096, 1000), None, ""), ((4097, 1, 4095), None, ""),
    ((1000, 7, 4097), None, ""), ((4095, 16, 1000), None, ""), ((7, 7, 65536), None, ""),
    ((127, 127, 127), None, ""), ((7, 17, 127), None, ""), ((255, 255, 255), None, ""),
    ((127, 127, 65536), None, ""), ((128, 128, 65536), None, ""), ((1000, 1000, 1000), None, ""),
    ((1000, 3000, 77), None, ""), ((1000, 4097, 127), None, ""), ((4097, 127, 1000), None, ""),
    ((127, 4097, 1000), None, ""), ((1025, 1025, 1025), None, ""), ((4097, 4097, 4097), None, ""),
    ((4095, 4095, 1000), {"odd": "scalar"}, ""), ((1000, 1000, 4097), {"tile": "big", "split": 5}, ""),
    ((1000, 1000, 4097), {"tile": "small", "split": 1}, ""), ((1000, 127, 1000), {"tiny": True}, ""),
    ((1, 4097, 4095), {"skinny": False}, ""), ((127, 127, 65536), {"odd": "pad", "split": 64}, ""),
    ((1000, 1000, 1000), None, "a"), ((1000, 1000, 1000), None, "b"), ((1000, 1000, 1000), None, "c"),
    ((4, 4096, 4096), None, "b"), ((4096, 4, 4096), None, "a"), ((128, 128, 65536), None, "c"),
]
INITCHECK = [
    ((1000, 3000, 77), None, ""), ((1000, 4097, 127), None, ""), ((4097, 127, 1000), None, ""),
    ((127, 127, 65536), None, ""), ((1, 4096, 4096), None, ""), ((4096, 1, 4096), None, ""),
    ((1000, 1000, 1000), None, "a"), ((1025, 1025, 1025), None, ""),
]
RACECHECK = [
    ((127, 127, 127), None, ""), ((70, 130, 200), {"tiny": False}, ""),
    ((130, 260, 96), {"tile": "big"}, ""), ((200, 300, 77), {"tiny": False}, ""),
    ((3, 200, 700), None, ""), ((200, 3, 700), None, ""), ((33, 16, 512), None, ""),
    ((68, 68, 600), None, ""), ((96, 130, 41), {"tiny": False}, ""),
]
SETS = {"memcheck": MEMCHECK, "initcheck": INITCHECK, "racecheck": RACECHECK}


def _misaligned(cp, x):
    """A copy of x whose data starts 4 bytes past a 16-byte boundary."""
    flat = cp.empty(x.size + 1, dtype=cp.float32)
    view = flat[1:].reshape(x.shape)
    view[...] = x
    return view


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", choices=sorted(SETS), default="memcheck")
    args = p.parse_args(argv)
    import cupy as cp

    from gemmlab.kernels import registry
    from gemmlab.runtime import cublas
    from gemmlab.runtime.dispatch import Policy
    from gemmlab.runtime.dispatch_gemm import DispatchedGemm

    rung = registry.get("dispatch")
    bad = 0
    for (M, N, K), pol, off in SETS[args.set]:
        rng = cp.random.default_rng(M * 3 + N * 5 + K)
        a = rng.random((M, K), dtype=cp.float32) - 0.5
        b = rng.random((K, N), dtype=cp.float32) - 0.5
        c0 = rng.random((M, N), dtype=cp.float32) - 0.5
        ref = cp.empty((M, N), dtype=cp.float32)
        run = DispatchedGemm(rung, M, N, K, policy=Policy(**(pol or {})))
        errs = []
        for beta in (0.0, 0.5):
            ops = {"a": a, "b": b, "c": cp.full((M, N), cp.nan, cp.float32) if beta == 0 else c0.copy()}
            if off:
                ops[off] = _misaligned(cp, ops[off])
            ref[...] = c0
            cublas.sgemm(a, b, ref, 1.0, beta)
            run(ops["a"], ops["b"], ops["c"], 1.0, beta)
            got = ops["c"]
            ok = bool(cp.isfinite(got).all())
            err = float(cp.linalg.norm(got - ref) / (cp.linalg.norm(ref) or 1.0)) if ok else float("nan")
            errs.append(err)
            if not (ok and err <= 1e-4):
                bad += 1
        ran = run.rung_for(*(_misaligned(cp, x) if off == n else x
                             for n, x in (("a", a), ("b", b), ("c", c0)))).name
        print(f"{M}x{N}x{K} {pol or ''} {('misaligned ' + off) if off else ''}: {ran}; "
              f"rel err {errs[0]:.1e}, {errs[1]:.1e}", flush=True)
    print(f"{args.set}: {len(SETS[args.set])} cases, {bad} wrong results", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
