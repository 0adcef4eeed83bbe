"""The draw scripts' shared part: every case's plan name under a source tree (a subprocess with
that tree on PYTHONPATH; 132 SMs at a datasheet bandwidth), and a random pick of the changed
cases, written as --keep-plans JSON (the earlier tree's plans, and the new ones under "new") and
printed as shape lists. ``draw``: (dtype, M, N, K) cases, a pick per dtype (draw_residency.py,
draw_short_split.py, draw_h100.py); ``draw_fp8``: fp8 shapes by the H200's tile rule
(choose_config, tc-pp112's plans_of; draw_long_k.py, draw_pp128*.py)."""
import json
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tc-pp112-2026-11-29" / "commands"))
from plans_of import plans as fp8_plans  # noqa: E402

CODE = """
import json, sys
import gemmlab.runtime.dispatch_tc as D
gbps = float(sys.argv[1])
out = {}
for dt, m, n, k in json.load(sys.stdin):
    out[f"{dt} {m}x{n}x{k}"] = D.plan(dt, m, n, k, 132, dram_gbps=gbps).name
print(json.dumps(out))
"""


def plans(src: str, cases: list, gbps: float) -> dict:
    r = subprocess.run([sys.executable, "-c", CODE, str(gbps)], input=json.dumps(cases),
                       text=True, capture_output=True, check=True, env={"PYTHONPATH": src})
    return json.loads(r.stdout)


def draw(argv: list, cases: list, gbps: float, seed: int, per_dtype: int) -> None:
    """argv: OLD_SRC OLD_PLANS_JSON [NEW_SRC] (the new tree: ./src unless named)."""
    old_src, out_json = argv[1], argv[2]
    new_src = argv[3] if len(argv) > 3 else "src"
    old, new = plans(old_src, cases, gbps), plans(new_src, cases, gbps)
    changed = sorted(c for c in old if old[c] != new[c])
    print(f"{len(changed)} of {len(cases)} changed")
    count = {}
    for c in changed:
        key = (c.split()[0], old[c], new[c])
        count[key] = count.get(key, 0) + 1
    for k, n in sorted(count.items(), key=lambda x: -x[1])[:12]:
        print("  ", *k, n)
    rng = random.Random(seed)
    pick = {dt: rng.sample([c for c in changed if c.startswith(dt)], per_dtype)
            for dt in ("fp8", "bf16")}
    json.dump({dt: {c.split()[1]: old[c] for c in pick[dt]} for dt in pick}
              | {"new": {c: new[c] for dt in pick for c in pick[dt]}},
              open(out_json, "w"), indent=1)
    for dt in pick:
        for c in pick[dt]:
            print(c, old[c], "->", new[c])
        print(dt, ";".join(c.split()[1].replace("x", ",") for c in pick[dt]))


def draw_fp8(argv: list, shapes: list, seen: set, seed: int, count: int) -> None:
    """argv: OLD_SRC OLD_PLANS_JSON [NEW_SRC] (the new tree: ./src unless named); ``seen``: the
    "MxNxK" keys an earlier run used, never drawn."""
    old_src, out_json = argv[1], argv[2]
    new_src = argv[3] if len(argv) > 3 else "src"
    old, new = fp8_plans(old_src, shapes), fp8_plans(new_src, shapes)
    changed = sorted(k for k in old if old[k] != new[k] and k not in seen)
    moves = {}
    for k in changed:
        moves[(old[k], new[k])] = moves.get((old[k], new[k]), 0) + 1
    print(f"{len(changed)} of {len(shapes)} changed")
    for (a, b), n in sorted(moves.items(), key=lambda x: -x[1]):
        print(f"  {a} -> {b}: {n}")
    pick = random.Random(seed).sample(changed, count)
    json.dump({"fp8": {k: old[k] for k in pick}, "new": {k: new[k] for k in pick}},
              open(out_json, "w"), indent=1)
    for k in pick:
        print(k, old[k], "->", new[k])
    print(";".join(k.replace("x", ",") for k in pick))
