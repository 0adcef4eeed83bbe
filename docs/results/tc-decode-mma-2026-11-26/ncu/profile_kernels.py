import cupy
from gemmlab.kernels.registry import get
from gemmlab.numerics import bf16 as conv
from gemmlab.runtime.dispatch_tc import Policy
from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

for (M, N, K), pols in [((16, 4096, 4096), [Policy(), Policy(config="mma", cols=32, split=2), Policy(config="mma", cols=64, split=2)]),
                        ((16, 28672, 4096), [Policy(), Policy(config="mma", cols=64, split=1)]),
                        ((16, 1600, 6400), [Policy(), Policy(config="mma", cols=32, split=4)])]:
    rng = cupy.random.default_rng(1)
    a = conv.to_bits(rng.random((M, K), dtype=cupy.float32) - 0.5)
    b = conv.to_bits(rng.random((K, N), dtype=cupy.float32) - 0.5)
    c = cupy.zeros((M, N), dtype=cupy.uint16)
    for pol in pols:
        run = TcDispatchedGemm(get("dispatch_bf16"), M, N, K, policy=pol)
        run(a, b, c)
        cupy.cuda.runtime.deviceSynchronize()
        print(M, N, K, run.plan.name, flush=True)
