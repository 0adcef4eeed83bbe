"""A held-out run's score: the rules' plan against the earlier rules' plan at each shape (both run
in the same run; the earlier plans in an old_plans_r*.json written by draw_held_out*.py).
Usage (repository root): python3 docs/results/tc-pp112-2026-11-29/commands/held_out.py JSON PLANS
  run 2: r2/held_fp8.json commands/old_plans_r2.json (tree bc72ad8)
  run 5: r5/held_longk.json commands/old_plans_r5.json (tree 3f182d4)
  runs 6, 7: r6/held_r6.json, r7/held_r7.json with old_plans_r6.json, old_plans_r7.json (a87cc89)
  tc-pp168 run 5: ../../tc-pp168-2026-11-29/r5/held_shortk.json, .../commands/old_plans_r5.json"""
import json
import sys

d = json.load(open(sys.argv[1]))
old = json.load(open(sys.argv[2]))["fp8"]
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
