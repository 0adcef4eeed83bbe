"""Run 3's held-out shapes: the rules' plan (pingpong_short_k) against the earlier rules' plan
(commands/old_plans.json, first name of each list) and the forced ping-pong tile where the rule
kept the cooperative one. Usage (repository root): python3 commands/held_out.py DIR"""
import json
import sys

R = sys.argv[1]
old = json.load(open(f"{R}/commands/old_plans.json"))
for dt in ("fp8", "bf16"):
    d = json.load(open(f"{R}/r3/held_{dt}.json"))
    print("==", dt, d["meta"]["device"], d["meta"]["date"])
    gains = []
    for s in d["shapes"]:
        key = "x".join(map(str, s["shape"]))
        disp = next(x for x in s["variants"] if x["variant"] == "dispatch")
        was = old[dt][key][0]
        pp = "128x160pp" if dt == "fp8" else "128x128pp"
        forced = {x["ran"]: x for x in s["variants"] if x["variant"] != "dispatch" and x.get("ok")}
        ok = all(x.get("ok") for x in s["variants"])
        dv = 100 * disp["vs_cublas"]
        if disp["ran"] == was:
            f = forced.get(pp)
            print("%-17s kept %-10s %5.1f   forced %s %s  correct=%s" % (
                key, was, dv, pp, "%.1f" % (100 * f["vs_cublas"]) if f else "-", ok))
        else:
            ov = 100 * forced[was]["vs_cublas"]
            gains.append(dv - ov)
            print("%-17s %-10s %5.1f vs earlier %-10s %5.1f  %+5.1f  correct=%s" % (
                key, disp["ran"], dv, was, ov, dv - ov, ok))
    print("changed %d: ahead %d, mean %+.2f points\n" % (
        len(gains), sum(g > 0 for g in gains), sum(gains) / len(gains)))
