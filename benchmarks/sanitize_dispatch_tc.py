"""Every path of the tensor-core dispatch rungs (dispatch_bf16, dispatch_fp8; issue #20: "compute-
sanitizer clean on every path"), once, for NVIDIA's compute-sanitizer:

    compute-sanitizer --tool memcheck  --report-api-errors no --error-exitcode 3 python benchmarks/sanitize_dispatch_tc.py --set memcheck
    compute-sanitizer --tool initcheck --report-api-errors no --error-exitcode 3 python benchmarks/sanitize_dispatch_tc.py --set initcheck
    compute-sanitizer --tool racecheck --report-api-errors no --error-exitcode 3 python benchmarks/sanitize_dispatch_tc.py --set racecheck
    compute-sanitizer --tool synccheck --report-api-errors no --error-exitcode 3 python benchmarks/sanitize_dispatch_tc.py --set racecheck

(``benchmarks/run_sanitizer_device.sh OUT tc`` runs all four.) ``--report-api-errors no``: the
first TMA encode through cuda.bindings probes versioned driver entry points, and
cuGetProcAddress_v2 answers INVALID_VALUE for those the driver lacks (34 times on the H100 and the
H200, at tma.py's encode): host-side lookups, not kernel errors; a real API failure raises in
Python and fails the case. Each case launches the plan with
beta = 0 into a NaN-filled C and with beta = 0.5, and compares with a float64 product of the same
bf16 / e4m3 inputs (relative Frobenius error <= 2e-2, no NaN); a wrong result exits 1 on its own,
a sanitizer finding exits 3.

``memcheck``: the decode kernels (every bf16 column strip, 1 to 16 tokens, N and K off their
strips and chunks, K shared by clusters of 4 and 8; the bf16 tensor-core decode kernel's strips
and clusters of 1, 4 and 8; the swapped-operand wgmma decode kernel's token tiles, clusters and
rings), the 64 x 128, 64 x 256, 128 x 128 and clustered 128 x 256 tiles (and 128 x 160), split-K,
stream-K, the 2-D clusters, the ping-pong 128 x 128 tile, 128 x 192, 128 x 64 split past M,
copies of A or B to 16-byte pitches, the wgmma fallback, misaligned A, B and C. ``initcheck``:
the paths that read memory they allocated (the copies, the split-K and stream-K workspaces and
counters).
``racecheck``: small shapes of every kernel (shared-memory hazards).
"""

from __future__ import annotations

import argparse
import sys

# (dtype, (M, N, K), policy keywords or None, which operand to misalign or "")
MEMCHECK = [
    ("bf16", (1, 4104, 4112), None, ""), ("bf16", (7, 4096, 4096), None, ""),
    ("bf16", (16, 1000, 14336), {"config": "gemv", "cols": 16}, ""),
    ("bf16", (3, 1000, 4096), {"config": "gemv", "cols": 64}, ""),
    ("bf16", (16, 1000, 14344), {"config": "mma", "cols": 32, "split": 4}, ""),
    ("bf16", (9, 4104, 1032), {"config": "mma", "cols": 64, "split": 1}, ""),
    ("bf16", (32, 200, 4104), {"config": "mma", "cols": 32, "split": 8}, ""),
    ("bf16", (127, 1000, 4097), None, ""), ("bf16", (1000, 3001, 77), None, ""),
    ("bf16", (1000, 3001, 77), {"odd": "wgmma"}, ""),
    ("bf16", (127, 1000, 4096), {"config": "64x128", "split": 3}, ""),
    ("bf16", (300, 600, 512), {"config": "128x256c2"}, ""), ("bf16", (1000, 1000, 1000), None, ""),
    ("bf16", (129, 1000, 640), {"config": "64x256"}, ""), ("bf16", (1, 4096, 4096), {"config": "64x128"}, ""),
    ("bf16", (256, 512, 512), None, "a"), ("bf16", (256, 512, 512), None, "b"),
    ("bf16", (256, 512, 512), None, "c"), ("bf16", (4, 4096, 4096), None, "c"),
    ("fp8", (1, 4095, 4096), None, ""), ("fp8", (9, 1000, 14336), None, ""),
    ("fp8", (127, 1000, 4112), None, ""), ("fp8", (127, 1000, 4096), {"config": "64x128", "split": 3}, ""),
    ("fp8", (1000, 3000, 77), None, ""), ("fp8", (300, 600, 512), {"config": "128x256c2"}, ""),
    ("fp8", (256, 512, 512), None, "a"), ("fp8", (4, 4096, 4096), None, "c"),
    # stream-K: a shared last wave, fewer iterations than clusters, tiles shared by ten runs
    ("bf16", (1000, 3000, 1000), {"config": "64x128", "streamk": 1}, ""),
    ("bf16", (300, 600, 512), {"config": "128x256c2", "streamk": 0}, ""),
    ("bf16", (127, 1000, 4097), {"config": "64x128", "streamk": 0}, ""),
    ("fp8", (4097, 4095, 640), {"config": "128x256c2", "streamk": 0}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x160c2", "streamk": 1}, ""),
    ("fp8", (1000, 1600, 1024), {"config": "128x160c1"}, ""),
    # bf16 128 x 160: B in three 64-column chunks (the third reaching 32 columns past the tile, and
    # past N at the last one); TMA stores; split-K; stream-K; in clusters of 2 (chunks shared by
    # rows of K)
    ("bf16", (1000, 1600, 1024), {"config": "128x160c1"}, ""),
    ("bf16", (1000, 3000, 1000), {"config": "128x160c1", "split": 3}, ""),
    ("bf16", (1000, 3000, 1024), {"config": "128x160c1", "streamk": 1}, ""),
    ("bf16", (1000, 4800, 1000), {"config": "128x160c2"}, ""),
    ("bf16", (1000, 3000, 1024), {"config": "128x160c2", "split": 2}, ""),
    # fp8 128 x 200 (C by TMA in one unswizzled 200-column box): ragged M and N, split-K, stream-K;
    # beta 0 and 0.5; C misaligned (no TMA stores)
    ("fp8", (1000, 1600, 1024), {"config": "128x200c1"}, ""),
    ("fp8", (300, 1000, 1120), {"config": "128x200c1", "split": 3}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x200c1", "streamk": 1}, ""),
    ("fp8", (300, 520, 256), {"config": "128x200c1"}, "c"),
    # 64 x 64 (the stream tile at a wave of tiles): TMA stores, split-K, stream-K, ragged edges
    ("bf16", (127, 1000, 4097), {"config": "64x64"}, ""),
    ("fp8", (127, 1000, 4096), {"config": "64x64", "split": 3}, ""),
    ("bf16", (300, 1000, 1024), {"config": "64x64", "streamk": 1}, ""),
    ("fp8", (300, 1000, 1024), {"config": "64x64", "streamk": 0}, ""),
    # 128 x 64 (the H200's stream tile past 64 rows): split-K 2 with rows past M (their threads
    # neither park nor add), one slice with no rows of a second warpgroup at all (M = 40)
    ("bf16", (97, 1000, 6144), {"config": "128x64c1", "split": 2}, ""),
    ("fp8", (40, 1000, 4096), {"config": "128x64c1", "split": 3}, ""),
    # 2-D clusters (A multicast along N, B along M; bf16 B shared by rows of K): partial
    # clusters at M and N, TMA stores, split-K, stream-K
    ("bf16", (127, 1000, 4097), {"config": "64x32c2x4"}, ""),
    ("fp8", (127, 1000, 4096), {"config": "64x32c2x4"}, ""),
    ("bf16", (200, 1000, 1000), {"config": "64x32c2x4", "split": 3}, ""),
    ("fp8", (300, 1000, 1024), {"config": "64x32c2x4", "streamk": 1}, ""),
    # ping-pong 128 x 128 (two consumer warpgroups on alternate tiles): several tiles per CTA,
    # ragged M and N; every case runs beta 0 (TMA stores) and 0.5 (the direct epilogue); C
    # misaligned (case "c": no TMA stores)
    ("bf16", (1000, 3000, 1000), {"config": "128x128pp"}, ""),
    ("fp8", (2047, 2000, 512), {"config": "128x128pp"}, ""),
    ("bf16", (300, 520, 256), {"config": "128x128pp"}, "c"),
    # fp8's ping-pong 128 x 160 (160 accumulators a thread, C by TMA in five 32-column boxes):
    # several tiles per CTA, ragged M and N, a last K-tile short of K (1120: 3 k32 steps); C
    # misaligned
    ("fp8", (2047, 3000, 1120), {"config": "128x160pp"}, ""),
    ("fp8", (300, 1000, 512), {"config": "128x160pp"}, "c"),
    # fp8's ping-pong 128 x 112, 144, 168 and 176 (C by TMA in one unswizzled box of the tile's
    # width): several tiles per CTA, ragged M and N (N not a multiple of 8 past the tile: 1181),
    # a short last K-tile; C misaligned
    ("fp8", (2047, 3000, 1120), {"config": "128x168pp"}, ""),
    ("fp8", (300, 1181, 512), {"config": "128x168pp"}, "c"),
    ("fp8", (2047, 3000, 1120), {"config": "128x176pp"}, ""),
    ("fp8", (300, 1181, 512), {"config": "128x176pp"}, "c"),
    ("fp8", (2047, 3000, 1120), {"config": "128x112pp"}, ""),
    ("fp8", (300, 1181, 512), {"config": "128x112pp"}, "c"),
    ("fp8", (2047, 3000, 1120), {"config": "128x144pp"}, ""),
    ("fp8", (300, 1181, 512), {"config": "128x144pp"}, "c"),
    # 128 x 192 (bf16 B in three 64-column chunks, shared by rows of K in pairs): ragged N, split-K,
    # stream-K
    ("bf16", (300, 1000, 640), {"config": "128x192c1"}, ""),
    ("bf16", (1000, 1600, 512), {"config": "128x192c2", "split": 2}, ""),
    ("fp8", (300, 1000, 512), {"config": "128x192c2", "streamk": 1}, ""),
    # a last K-tile short of K issues only the K-steps that hold K: fp8 2 (1600), 1 (1056) and 3
    # (1120) k32 steps; bf16 3 (1000), 1 (1040) and 2 (1056) k16 steps; whole tiles, ping-pong,
    # split-K, stream-K
    ("fp8", (1000, 1016, 1600), {"config": "128x256c2"}, ""),
    ("fp8", (300, 1016, 1056), {"config": "128x128pp"}, ""),
    ("fp8", (1000, 1016, 1120), {"config": "128x160c1", "streamk": 1}, ""),
    ("bf16", (1000, 1016, 1000), {"config": "128x256c1", "split": 3}, ""),
    ("bf16", (300, 1016, 1040), {"config": "128x192c1"}, ""),
    ("bf16", (127, 1016, 1056), {"config": "64x64"}, ""),
    # decode kernels with K shared by a cluster (the rules' 1x1600x6400 plans, ragged N and K,
    # blocks with no K at all)
    ("bf16", (1, 1600, 6400), None, ""), ("fp8", (16, 1600, 6400), None, ""),
    ("bf16", (1, 1000, 14344), {"config": "gemv", "cols": 64, "split": 8}, ""),
    ("bf16", (1, 200, 1040), {"config": "gemv", "cols": 16, "split": 8}, ""),
    ("fp8", (16, 1000, 6400), {"config": "gemv", "split": 4}, ""),
    ("fp8", (7, 200, 1040), {"config": "gemv", "split": 8}, ""),
    # the swapped-operand wgmma decode kernel (decode_wgmma.cu): every token tile (8 tokens
    # and fewer: m64n8), clusters of 1-8 CTAs a strip, rings of 4-16 stages, ragged N (fp8: odd)
    # and K, CTAs with no K, misaligned C
    ("bf16", (16, 1000, 14336), {"config": "swap", "split": 4, "stages": 4}, ""),
    ("fp8", (9, 203, 1040), {"config": "swap", "split": 8, "stages": 16}, ""),
    ("bf16", (32, 4104, 4112), {"config": "swap", "split": 2, "stages": 6}, ""),
    ("fp8", (1, 1600, 6400), {"config": "swap", "split": 4, "stages": 8}, ""),
    ("bf16", (7, 8, 16), {"config": "swap", "split": 8, "stages": 12}, ""),
    ("bf16", (16, 4096, 4096), {"config": "swap"}, "c"),
    ("bf16", (100, 1000, 6400), {"config": "swap", "split": 4, "stages": 6}, ""),
    ("fp8", (64, 203, 1040), {"config": "swap", "split": 2, "stages": 12}, ""),
    ("fp8", (65, 1000, 4096), {"config": "swap", "split": 8, "stages": 8}, ""),
    # token boxes of M rows in the 64- and 128-token tiles (the rest zeroed once): 40 of 64
    ("bf16", (40, 4104, 4112), {"config": "swap", "split": 1, "stages": 8}, ""),
    # one CTA a strip (no cluster: a block barrier, its own shared memory), C off 8 bytes and N
    # odd: the one-at-a-time stores
    ("fp8", (16, 203, 1040), {"config": "swap", "split": 1, "stages": 4}, "c"),
    # token tiles (forced): a CTA per tile of TN tokens of a strip, the last partly empty
    ("fp8", (17, 1000, 4112), {"config": "swap", "tokens": 8, "split": 2, "stages": 6}, ""),
    ("bf16", (40, 1000, 1040), {"config": "swap", "tokens": 8, "split": 1, "stages": 16}, ""),
    ("bf16", (33, 203 * 8, 1040), {"config": "swap", "tokens": 32, "split": 4, "stages": 4}, "c"),
]
INITCHECK = [
    ("bf16", (1000, 3001, 77), None, ""), ("bf16", (127, 1000, 4096), {"config": "64x128", "split": 3}, ""),
    ("bf16", (127, 1000, 4097), {"config": "64x64"}, ""), ("fp8", (127, 1000, 4096), {"config": "64x64", "split": 3}, ""),
    ("bf16", (256, 512, 512), None, "a"), ("bf16", (1, 4104, 4112), None, ""),
    ("fp8", (1000, 3000, 77), None, ""), ("fp8", (127, 1000, 4096), {"config": "64x128", "split": 3}, ""),
    ("fp8", (1, 4095, 4096), None, ""),
    ("bf16", (1000, 3000, 1000), {"config": "64x128", "streamk": 1}, ""),
    ("fp8", (4097, 4095, 640), {"config": "128x256c2", "streamk": 0}, ""),
    ("bf16", (200, 1000, 1000), {"config": "64x32c2x4", "split": 3}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x128pp"}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x160pp"}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x168pp"}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x176pp"}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x112pp"}, ""),
    ("fp8", (1000, 3000, 1024), {"config": "128x144pp"}, ""),
    ("fp8", (1000, 1016, 1600), {"config": "128x256c1", "split": 3}, ""),
    ("bf16", (97, 1000, 6144), {"config": "128x64c1", "split": 2}, ""),
    ("fp8", (300, 1000, 1120), {"config": "128x200c1", "split": 3}, ""),
    # decode kernels with K shared by a cluster
    ("bf16", (1, 1600, 6400), None, ""), ("fp8", (16, 1000, 6400), {"config": "gemv", "split": 4}, ""),
    ("bf16", (16, 1000, 4112), {"config": "swap", "split": 4, "stages": 4}, ""),
    ("fp8", (17, 203, 1040), {"config": "swap", "split": 8, "stages": 6}, ""),
]
RACECHECK = [
    ("bf16", (3, 72, 512), {"config": "gemv", "cols": 16}, ""), ("bf16", (16, 80, 256), {"config": "gemv", "cols": 64}, ""),
    ("bf16", (16, 72, 1032), {"config": "mma", "cols": 32, "split": 4}, ""),
    ("bf16", (30, 72, 520), {"config": "mma", "cols": 32, "split": 2}, ""),
    ("bf16", (5, 136, 264), {"config": "mma", "cols": 64, "split": 1}, ""),
    ("fp8", (9, 40, 512), None, ""), ("bf16", (70, 130, 200), {"config": "64x128"}, ""),
    ("fp8", (70, 130, 256), {"config": "64x128", "split": 2}, ""), ("bf16", (130, 260, 96), {"config": "128x256c1"}, ""),
    ("bf16", (300, 520, 256), {"config": "128x128c1", "streamk": 0}, ""),
    ("bf16", (70, 130, 200), {"config": "64x64"}, ""), ("fp8", (70, 130, 256), {"config": "64x64", "split": 2}, ""),
    ("bf16", (97, 130, 512), {"config": "128x64c1", "split": 2}, ""),
    ("fp8", (130, 330, 512), {"config": "128x160c1", "streamk": 0}, ""),
    ("bf16", (130, 330, 512), {"config": "128x160c1", "streamk": 0}, ""),
    ("bf16", (300, 330, 256), {"config": "128x160c2"}, ""),
    ("bf16", (130, 330, 512), {"config": "64x64", "streamk": 0}, ""),
    ("bf16", (130, 330, 512), {"config": "64x32c2x4"}, ""), ("fp8", (130, 330, 512), {"config": "64x32c2x4"}, ""),
    ("bf16", (70, 130, 256), {"config": "64x32c2x4", "split": 2}, ""),
    ("bf16", (300, 520, 256), {"config": "128x128pp"}, ""), ("fp8", (300, 520, 256), {"config": "128x128pp"}, ""),
    ("bf16", (300, 400, 256), {"config": "128x192c2"}, ""),
    ("fp8", (300, 520, 256), {"config": "128x200c1"}, ""),
    ("fp8", (130, 330, 512), {"config": "128x200c1", "streamk": 0}, ""),
    ("fp8", (300, 1016, 160), {"config": "128x128pp"}, ""),
    ("fp8", (300, 1016, 160), {"config": "128x160pp"}, ""), ("fp8", (300, 650, 256), {"config": "128x160pp"}, ""),
    ("fp8", (300, 1016, 160), {"config": "128x168pp"}, ""),
    ("fp8", (300, 690, 256), {"config": "128x168pp"}, ""),
    ("fp8", (300, 1016, 160), {"config": "128x176pp"}, ""),
    ("fp8", (300, 720, 256), {"config": "128x176pp"}, ""),
    ("fp8", (300, 1016, 160), {"config": "128x112pp"}, ""),
    ("fp8", (300, 450, 256), {"config": "128x112pp"}, ""),
    ("fp8", (300, 1016, 160), {"config": "128x144pp"}, ""),
    ("fp8", (300, 580, 256), {"config": "128x144pp"}, ""),
    ("bf16", (130, 1016, 96), {"config": "128x256c1", "streamk": 0}, ""),
    ("bf16", (1, 72, 1032), {"config": "gemv", "cols": 64, "split": 4}, ""),
    ("fp8", (9, 40, 2048), {"config": "gemv", "split": 2}, ""),
    ("fp8", (1, 40, 512), {"config": "gemv", "split": 8}, ""),
    ("bf16", (16, 72, 1032), {"config": "swap", "split": 4, "stages": 4}, ""),
    ("fp8", (30, 130, 512), {"config": "swap", "split": 2, "stages": 4}, ""),
    ("bf16", (1, 200, 4096), {"config": "swap", "split": 1, "stages": 16}, ""),
    ("bf16", (128, 136, 1032), {"config": "swap", "split": 2, "stages": 4}, ""),
    ("fp8", (16, 130, 512), {"config": "swap", "tokens": 8, "split": 2, "stages": 4}, ""),
]
SETS = {"memcheck": MEMCHECK, "initcheck": INITCHECK, "racecheck": RACECHECK}


def _misaligned(cp, x):
    """A copy of x whose data starts one element past a 16-byte boundary."""
    flat = cp.empty(x.size + 1, dtype=x.dtype)
    view = flat[1:].reshape(x.shape)
    view[...] = x
    return view


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", choices=sorted(SETS), default="memcheck")
    p.add_argument("--match", default="", help="only the cases whose dtype, shape or policy contains "
                   "this text, or one of several separated by '|' (e.g. 128x160 after a change "
                   "to that tile; 'gemv|swap': the decode kernels)")
    args = p.parse_args(argv)
    import cupy as cp

    from gemmlab.kernels import registry
    from gemmlab.numerics import bf16, fp8
    from gemmlab.runtime.dispatch_tc import Policy
    from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

    terms = args.match.split("|")
    cases = [c for c in SETS[args.set]
             if any(t in f"{c[0]} {c[1][0]}x{c[1][1]}x{c[1][2]} {c[2]}" for t in terms)]
    if not cases:
        print(f"--match {args.match!r}: no case of the {args.set} set matches", file=sys.stderr)
        return 2
    bad = 0
    for dtype, (M, N, K), pol, off in cases:
        conv = bf16 if dtype == "bf16" else fp8
        rng = cp.random.default_rng(M * 3 + N * 5 + K)
        a = conv.to_bits(rng.random((M, K), dtype=cp.float32) - 0.5)
        b_shape = (N, K) if dtype == "fp8" else (K, N)
        b = conv.to_bits(rng.random(b_shape, dtype=cp.float32) - 0.5)
        c0 = bf16.to_bits(rng.random((M, N), dtype=cp.float32) - 0.5)
        af, bfl = conv.from_bits(a).astype(cp.float64), conv.from_bits(b).astype(cp.float64)
        prod = af @ (bfl.T if dtype == "fp8" else bfl)
        run = TcDispatchedGemm(registry.get(f"dispatch_{dtype}"), M, N, K, policy=Policy(**(pol or {})))
        errs = []
        for beta in (0.0, 0.5):
            c = cp.full((M, N), 0x7FC0, cp.uint16) if beta == 0 else c0.copy()
            ops = {"a": a, "b": b, "c": c}
            if off:
                ops[off] = _misaligned(cp, ops[off])
            run(ops["a"], ops["b"], ops["c"], 1.0, beta)
            got = bf16.from_bits(ops["c"]).astype(cp.float64)
            want = prod + beta * bf16.from_bits(c0).astype(cp.float64)
            ok = bool(cp.isfinite(got).all())
            err = float(cp.linalg.norm(got - want) / (cp.linalg.norm(want) or 1.0)) if ok else float("nan")
            errs.append(err)
            if not (ok and err <= 2e-2):
                bad += 1
        ran = run.rung_for(*(_misaligned(cp, x) if off == n else x
                             for n, x in (("a", a), ("b", b), ("c", c0)))).name
        print(f"{dtype} {M}x{N}x{K} {pol or ''} {('misaligned ' + off) if off else ''}: {ran}; "
              f"rel err {errs[0]:.1e}, {errs[1]:.1e}", flush=True)
    print(f"{args.set}: {len(cases)} cases, {bad} wrong results", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
