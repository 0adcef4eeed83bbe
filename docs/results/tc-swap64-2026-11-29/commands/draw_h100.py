"""Draws the H100 check of this session's swapped-kernel rules before it runs (no H100 was lent):
shapes of 17-128 tokens, N 512..8192 in steps of 64, K 1024..16384 in steps of 1024, whose H100
plan (132 SMs, 3350 GB/s) differs between the earlier tree (first argument: its src/, 093c1e7)
and this one (cluster residency, the 64-token short-row split); a random 8 a dtype (seed 100).
Writes the earlier plans as --keep-plans JSON (second argument), prints the shapes.
Usage (repository root): python3 .../draw_h100.py OLD_SRC OLD_PLANS_JSON"""
import json
import random
import subprocess
import sys

CODE = """
import json, sys
import gemmlab.runtime.dispatch_tc as D
out = {}
for dt, m, n, k in json.load(sys.stdin):
    out[f"{dt} {m}x{n}x{k}"] = D.plan(dt, m, n, k, 132, dram_gbps=3350.0).name
print(json.dumps(out))
"""


def plans(src, cases):
    r = subprocess.run([sys.executable, "-c", CODE], input=json.dumps(cases), text=True,
                       capture_output=True, check=True, env={"PYTHONPATH": src})
    return json.loads(r.stdout)


cases = [(dt, m, n, k) for dt in ("fp8", "bf16") for m in range(17, 129) for n in range(512, 8193, 64)
         for k in range(1024, 16385, 1024)]
old, new = plans(sys.argv[1], cases), plans("src", cases)
changed = sorted(c for c in old if old[c] != new[c])
print(f"{len(changed)} of {len(cases)} changed")
rng = random.Random(100)
pick = {dt: rng.sample([c for c in changed if c.startswith(dt)], 8) for dt in ("fp8", "bf16")}
json.dump({dt: {c.split()[1]: old[c] for c in pick[dt]} for dt in pick}
          | {"new": {c: new[c] for dt in pick for c in pick[dt]}},
          open(sys.argv[2], "w"), indent=1)
for dt in pick:
    for c in pick[dt]:
        print(c, old[c], "->", new[c])
    print(dt, ";".join(c.split()[1].replace("x", ",") for c in pick[dt]))
