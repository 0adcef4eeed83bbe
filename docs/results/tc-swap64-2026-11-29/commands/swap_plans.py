"""The plans each tuning shape of the 33-64-token study times (--keep-plans JSON): the swapped
kernel at 1, 2 and 4 CTAs a strip (each at the ring depth choose_swap's rule gives that many
CTAs), 64 x 64, and the plan the rules give without the swapped kernel (swap_could off) - H200
(132 SMs, 4800 GB/s). Usage (repository root, PYTHONPATH=src):
python3 docs/results/tc-swap64-2026-11-29/commands/swap_plans.py "M,N,K;..." OUT_JSON"""
import json
import sys

from gemmlab.runtime import dispatch_tc as D
from gemmlab.runtime.dispatch_tc import paths

SMS, GBPS = 132, 4800.0


def depth(dtype, rows, ctas, ks):
    def resident(st):
        k = paths.swap_kernel(dtype, rows, ks, st)
        return SMS * (D.SM90_SMEM_PER_SM // (k.dynamic_smem + D.SMEM_RESERVED_PER_BLOCK))
    depths = paths.swap_stages(rows)
    fits = [st for st in depths if ctas * st <= D.SWAP_INFLIGHT_STAGES and ctas <= resident(st)]
    return max(fits) if fits else min(depths)


def without_swap(dtype, M, N, K):
    keep = D.swap_could
    D.swap_could = lambda *a, **k: False
    try:
        return D.plan(dtype, M, N, K, SMS, dram_gbps=GBPS).name
    finally:
        D.swap_could = keep


def main():
    shapes = [tuple(map(int, s.split(","))) for s in sys.argv[1].split(";")]
    out = {}
    for dtype in ("fp8", "bf16"):
        out[dtype] = {}
        for M, N, K in shapes:
            rows = D.swap_tokens(M)
            names = []
            for ks in (1, 2, 4):
                if ks > 1 and (-(-K // D.BK[dtype])) // D.SWAP_MIN_RUN < ks:
                    continue
                st = depth(dtype, rows, -(-N // D.SWAP_COLS) * ks, ks)
                names.append(D.plan(dtype, M, N, K, SMS, policy=D.Policy(config="swap", split=ks,
                                    stages=st), dram_gbps=GBPS).name)
            names += ["64x64", without_swap(dtype, M, N, K)]
            out[dtype][f"{M}x{N}x{K}"] = names
    json.dump(out, open(sys.argv[2], "w"), indent=1)
    for dtype in out:
        for k, v in out[dtype].items():
            rules = D.plan(dtype, *map(int, k.split("x")), SMS, dram_gbps=GBPS).name
            print(dtype, k, "rules", rules, "| keep", ", ".join(v))


main()
