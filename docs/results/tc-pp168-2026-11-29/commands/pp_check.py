"""Device check of every ping-pong tile (forced): edge and grid shapes, beta 0 (TMA stores) and not
(direct epilogue), against the harness's reference (gemmlab.bench.check.Checker)."""
import sys, zlib
import cupy as cp
from gemmlab.bench.check import Checker
from gemmlab.kernels.registry import get
from gemmlab.runtime.dispatch_tc import Policy, _TILES, configs
from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

SHAPES = [(127, 1000, 4097), (1000, 264, 1000), (1, 4095, 2080), (4097, 4095, 1000), (2048, 4800, 1600),
          (4095, 1000, 77), (640, 3200, 4096), (2048, 11008, 4096), (1000, 1181, 4095), (129, 169, 4097)]
bad = n = 0
for dtype in ("bf16", "fp8"):
    for config in configs(dtype):
        if not _TILES[config].pingpong:
            continue
        for shape in SHAPES:
            run = TcDispatchedGemm(get(f"dispatch_{dtype}"), *shape, policy=Policy(config=config))
            assert run.plan.config == config
            for beta in (0.0, -0.5):
                checker = Checker(xp=cp, seed=zlib.crc32(f"{dtype}{config}{shape}{beta}".encode()),
                                  synchronize=cp.cuda.get_current_stream().synchronize)
                res = checker.check(run, *shape, 1.25, beta, dtype, "bf16")
                n += 1
                if not res.ok:
                    bad += 1
                    print("FAIL", dtype, config, shape, beta, res.reason)
print(f"{n - bad}/{n} ping-pong checks passed")
sys.exit(1 if bad else 0)
