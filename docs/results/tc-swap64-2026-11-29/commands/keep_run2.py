"""Run 2's tuning sets and what each shape times (--keep-plans JSON): the plan of the earlier
tree (first argument: its src/, 093c1e7) and of this one, 64 x 64, the plan without the swapped
kernel, and each question's forced swapped plans - H200 (132 SMs, 4800 GB/s).
Q1: 33-64 tokens where the 64-token split may pass the SMs, N 4480-5632: 2 CTAs a strip
(6 / 4 stages) against 64 x 64. Q2: the same at N 1024-1280, 8 CTAs a strip against 4.
Q3: 32 strips x 4 at 6 and 4 stages (all clusters resident). Q4: 65-128 tokens, 4 CTAs a strip,
the ring cut to keep every cluster resident.
Usage (repository root, PYTHONPATH=src): python3 .../keep_run2.py OLD_SRC OUT_JSON"""
import json
import subprocess
import sys

from gemmlab.runtime import dispatch_tc as D

SMS, GBPS = 132, 4800.0
Q = {
    "q1": ([(m, n, k) for m in (40, 64) for n in (4480, 5120, 5632) for k in (4096, 8192, 14336)],
           lambda t: [f"swap_m{t}_k2_s6", f"swap_m{t}_k2_s4"]),
    "q2": ([(m, n, k) for m in (40, 64) for n in (1024, 1280) for k in (4096, 8192, 14336)],
           lambda t: [f"swap_m{t}_k4_s8", f"swap_m{t}_k4_s12", f"swap_m{t}_k8_s6",
                      f"swap_m{t}_k8_s4"]),
    "q3": ([(m, 2048, k) for m in (40, 64) for k in (4096, 8192, 14336)],
           lambda t: [f"swap_m{t}_k4_s6", f"swap_m{t}_k4_s4", f"swap_m{t}_k2_s12"]),
    "q4": ([(m, n, k) for m in (96, 128) for n in (1792, 2048) for k in (6144, 15360)],
           lambda t: [f"swap_m{t}_k4_s8", f"swap_m{t}_k4_s4", f"swap_m{t}_k2_s8"]),
}
OLD = """
import json, sys
import gemmlab.runtime.dispatch_tc as D
print(json.dumps({f"{dt} {m}x{n}x{k}": D.plan(dt, m, n, k, 132, dram_gbps=4800.0).name
                  for dt, m, n, k in json.load(sys.stdin)}))
"""


def without_swap(dtype, M, N, K):
    keep = D.swap_could
    D.swap_could = lambda *a, **k: False
    try:
        return D.plan(dtype, M, N, K, SMS, dram_gbps=GBPS).name
    finally:
        D.swap_could = keep


cases = [(dt, *s) for dt in ("fp8", "bf16") for q in Q.values() for s in q[0]]
old = json.loads(subprocess.run([sys.executable, "-c", OLD], input=json.dumps(cases), text=True,
                                capture_output=True, check=True,
                                env={"PYTHONPATH": sys.argv[1]}).stdout)
out = {"fp8": {}, "bf16": {}, "old": old}
for name, (shapes, extra) in Q.items():
    print(name, ";".join(",".join(map(str, s)) for s in shapes))
    for dt in ("fp8", "bf16"):
        for M, N, K in shapes:
            t = D.swap_tokens(M)
            key = f"{M}x{N}x{K}"
            new = D.plan(dt, M, N, K, SMS, dram_gbps=GBPS).name
            out[dt][key] = list(dict.fromkeys(
                [old[f"{dt} {key}"], new, "64x64", without_swap(dt, M, N, K)] + extra(t)))
            print(" ", dt, key, "old", old[f"{dt} {key}"], "new", new)
json.dump(out, open(sys.argv[2], "w"), indent=1)
