"""Run 6: the rules' plan (wider than 160 where 160 divides N) against the earlier rules' plan
(commands/old_plans_r6.json: tree a87cc89's choose_config on the H200), forced in the same run.
Usage (repository root): python3 docs/results/tc-pp112-2026-11-29/commands/held_out_r6.py JSON"""
import json
import sys
from pathlib import Path

old = json.load(open(Path(__file__).with_name("old_plans_r6.json")))["fp8"]
d = json.load(open(sys.argv[1]))
print("==", d["meta"]["device"], d["meta"]["date"])
gains = []
for s in d["shapes"]:
    key = "x".join(map(str, s["shape"]))
    disp = next(x for x in s["variants"] if x["variant"] == "dispatch")
    was = next(x for x in s["variants"] if x["variant"] != "dispatch" and x["ran"] == old[key])
    g = 100 * (disp["vs_cublas"] - was["vs_cublas"])
    gains.append(g)
    print("%-17s %-10s %5.1f vs earlier %-10s %5.1f  %+5.1f  correct=%s" % (
        key, disp["ran"], 100 * disp["vs_cublas"], old[key], 100 * was["vs_cublas"], g,
        all(x.get("ok") for x in s["variants"])))
print("changed %d: ahead %d, mean %+.2f points, least %+.1f" % (
    len(gains), sum(g > 0 for g in gains), sum(gains) / len(gains), min(gains)))
