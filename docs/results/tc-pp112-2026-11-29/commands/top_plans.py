"""Run 3: each shape's rules' plan and the four fastest of every forced plan (% of cuBLASLt).
Usage: python3 docs/results/tc-pp112-2026-11-29/commands/top_plans.py JSON"""
import json
import sys

d = json.load(open(sys.argv[1]))
print("==", d["meta"]["device"], d["meta"]["date"])
for s in d["shapes"]:
    vs = sorted(s["variants"], key=lambda x: -x["vs_cublas"])
    disp = next(x for x in vs if x["variant"] == "dispatch")
    print("%-15s rules %-10s %5.1f | fastest: %s | %d plans, all correct: %s" % (
        "x".join(map(str, s["shape"])), disp["ran"], 100 * disp["vs_cublas"],
        ", ".join("%s %.1f" % (x["ran"], 100 * x["vs_cublas"]) for x in vs[:4]), len(vs),
        all(x.get("ok") for x in vs)))
