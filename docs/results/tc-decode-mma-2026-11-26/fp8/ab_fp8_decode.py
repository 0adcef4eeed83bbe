"""A/B: the fp8 decode kernel before (one stage of 4 chunks) and after (two stages of 2), same
machine, interleaved rounds, plus the 64x128 plan as the runs' common reference."""
import json, statistics, sys
import numpy as np
import cupy
from gemmlab.bench import interleave
from gemmlab.bench.timer import CupyBackend, TimingOptions, time_fn
from gemmlab.kernels import paths
from gemmlab.kernels.registry import get
from gemmlab.kernels.source import read_source
from gemmlab.numerics import fp8 as conv
from gemmlab.runtime.compile import compile_module
from gemmlab.runtime.dispatch_tc import Policy
from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

ks = {8: paths.gemv_kernel("fp8", 8), 16: paths.gemv_kernel("fp8", 16)}
mods = {n: compile_module(read_source(f) + "\n" + "\n".join(paths.wrapper(k) for k in ks.values()), "ab_" + n)
        for n, f in (("old", "decode_tc_old.cu"), ("new", "decode_tc.cu"))}
backend = CupyBackend(flush_l2=True)
opts = TimingOptions(warmup_ms=3, rep_ms=15)
out = []
for spec in sys.argv[1].split(";"):
    M, N, K = map(int, spec.split(","))
    rng = cupy.random.default_rng(M + N + K)
    a = conv.to_bits(rng.random((M, K), dtype=cupy.float32) - 0.5)
    b = conv.to_bits(rng.random((N, K), dtype=cupy.float32) - 0.5)
    c = cupy.zeros((M, N), dtype=cupy.uint16)
    k = ks[8 if M <= 8 else 16]
    args = (np.int32(M), np.int32(N), np.int32(K), np.float32(1.0), a, b, np.float32(0.0), c)
    grid = (-(-N // 16), 1, 1)
    sides = {n: (lambda f=m.get_function(k.kernel): f(grid, (256, 1, 1), args)) for n, m in mods.items()}
    t = TcDispatchedGemm(get("dispatch_fp8"), M, N, K, policy=Policy(config="64x128"))
    sides["64x128"] = lambda: t(a, b, c)
    res = {}
    for n, f in sides.items():  # same answer from both kernels
        c.fill(0); f(); res[n] = cupy.asnumpy(c).copy()
    same = bool((res["old"] == res["new"]).all())
    names = list(sides)
    samples = {n: [] for n in names}
    for r in range(3):
        for i in interleave.order(len(names), r):
            samples[names[i]].append(statistics.median(time_fn(sides[names[i]], backend, opts).samples_s))
    med = {n: statistics.median(v) for n, v in samples.items()}
    rec = {"shape": [M, N, K], "bitwise_same_old_new": same, "median_s": med, "round_medians_s": samples}
    out.append(rec)
    print(f"{M}x{N}x{K}: old {med['old']*1e6:.1f} us  new {med['new']*1e6:.1f} us  ({med['old']/med['new']:.3f}x)  64x128 {med['64x128']*1e6:.1f} us  same={same}", flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=1)
