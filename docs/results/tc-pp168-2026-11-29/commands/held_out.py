"""Run 2's held-out shapes: the rules' plan (pingpong_width) against the earlier rules' plan, the
ping-pong 128 x 128 (forced, same run). Usage (repository root):
python3 docs/results/tc-pp168-2026-11-29/commands/held_out.py docs/results/tc-pp168-2026-11-29/r2/held_fp8.json"""
import json
import sys

d = json.load(open(sys.argv[1]))
print("==", d["meta"]["device"], d["meta"]["date"])
gains = []
for s in d["shapes"]:
    key = "x".join(map(str, s["shape"]))
    v = {x["variant"]: x for x in s["variants"]}
    disp, old = v["dispatch"], next(x for x in s["variants"] if x["ran"] == "128x128pp" and x["variant"] != "dispatch")
    ok = all(x.get("ok") for x in s["variants"])
    g = 100 * (disp["vs_cublas"] - old["vs_cublas"])
    gains.append(g)
    print("%-16s %-10s %5.1f vs 128x128pp %5.1f  %+5.1f  correct=%s" % (
        key, disp["ran"], 100 * disp["vs_cublas"], 100 * old["vs_cublas"], g, ok))
print("changed %d: ahead %d, mean %+.2f points, least %+.1f" % (
    len(gains), sum(g > 0 for g in gains), sum(gains) / len(gains), min(gains)))
