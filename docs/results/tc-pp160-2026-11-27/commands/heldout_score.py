"""Held-out score of the fp8 128 x 160 rule (runs 4 and 5): per shape, HEAD's plan (its two
alternating --quick passes) against the plan this tree's rules choose (their --quick passes, or
the forced run of that tile), and the best measured tile. Run from the repository root:
PYTHONPATH=src python3 docs/results/tc-pp160-2026-11-27/commands/heldout_score.py"""
import json
import math
import os

from gemmlab.runtime import dispatch_tc as D

HERE = os.path.join(os.path.dirname(__file__), "..")


def load(files):
    out = {}
    for f in files:
        for s in json.load(open(f))["shapes"]:
            for v in s["variants"]:
                name = v["ran"] if v["variant"] == "dispatch" else v["variant"].split()[0]
                out.setdefault(tuple(s["shape"]), {}).setdefault(name, []).append(100 * v["vs_cublas"])
    return out


mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
rows = []
for run in ("r4", "r5"):
    d = os.path.join(HERE, run)
    f = lambda n: os.path.join(d, n)  # noqa: E731
    base = load([f("fp8_base_1.json"), f("fp8_base_2.json")])
    every = load([f(n) for n in ("fp8_base_1.json", "fp8_base_2.json", "fp8_new_1.json",
                                 "fp8_new_2.json", "fp8_forced.json")])
    for shape, plans in base.items():
        old = next(iter(plans))
        new = D.choose_config("fp8", *shape, 132)
        o, n = mean(plans[old]), mean(every[shape][new])
        best = max(mean(v) for v in every[shape].values())
        rows.append((o, n, best))
        print(f"{run} {'x'.join(map(str, shape)):>16} {old:>10} -> {new:<10} "
              f"{o:5.1f} -> {n:5.1f}  (best {best:5.1f})")
g = lambda i: math.exp(mean([math.log(r[i]) for r in rows]))  # noqa: E731
print(f"{len(rows)} shapes: geometric mean HEAD {g(0):.1f}, this rule {g(1):.1f}, best {g(2):.1f}")
print(f"within 1 point of the best: HEAD {sum(r[0] >= r[2] - 1 for r in rows)}, "
      f"this rule {sum(r[1] >= r[2] - 1 for r in rows)}")
