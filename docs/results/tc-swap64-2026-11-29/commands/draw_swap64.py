"""Draws the held-out set of the 33-64-token study before any of it runs: shapes of 33-64 tokens
(M), N 1024..5632 and K 2048..16384 in steps of 256 / 1024, where this tree's H200 rules (132 SMs,
4800 GB/s) split the swapped kernel (k >= 2), the tuning grid excluded; a random 10 of them
(seed 64), each with its keep list (swap_plans.py). Prints the shapes.
Usage (repository root, PYTHONPATH=src): python3 .../draw_swap64.py"""
import random

from gemmlab.runtime import dispatch_tc as D

TUNING = {(m, n, k) for m in (40, 64) for n in (1536, 2048, 2560, 3072, 4096)
          for k in (4096, 8192, 14336)}
pool = [(m, n, k) for m in range(33, 65) for n in range(1024, 5633, 256)
        for k in range(2048, 16385, 1024) if (m, n, k) not in TUNING]
split = [s for s in pool if (p := D.plan("fp8", *s, 132, dram_gbps=4800.0)).config == "swap"
         and p.splits >= 2]
print(f"{len(split)} of {len(pool)} split the swapped kernel (fp8)")
pick = random.Random(64).sample(split, 10)
print(";".join(",".join(map(str, s)) for s in pick))
