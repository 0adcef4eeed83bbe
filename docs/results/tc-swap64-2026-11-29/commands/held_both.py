"""A held-out score for plans of both dtypes: the rules' plan against the earlier tree's at each
shape (both in the same run; earlier plans from a draw script's JSON, keyed by dtype).
Usage (repository root): python3 .../held_both.py PLANS_JSON RESULT_JSON..."""
import json
import sys
from pathlib import Path

old = json.load(open(sys.argv[1]))
gains = []
for f in sys.argv[2:]:
    d = json.load(open(f))
    dtype = "fp8" if "fp8" in Path(f).name else "bf16"
    print("==", f, d["meta"]["device"], d["meta"]["date"])
    for s in d["shapes"]:
        key = "x".join(map(str, s["shape"]))
        disp = next(x for x in s["variants"] if x["variant"] == "dispatch")
        was = next(x for x in s["variants"] if x["variant"] != "dispatch"
                   and x["ran"] == old[dtype][key])
        g = 100 * (disp["vs_cublas"] - was["vs_cublas"])
        gains.append(g)
        print("%-5s %-15s %-17s %6.1f vs earlier %-17s %6.1f  %+6.1f  correct=%s" % (
            dtype, key, disp["ran"], 100 * disp["vs_cublas"], old[dtype][key],
            100 * was["vs_cublas"], g, all(x.get("ok") for x in s["variants"])))
print("changed %d: ahead %d, mean %+.2f points, least %+.1f" % (
    len(gains), sum(g > 0 for g in gains), sum(gains) / len(gains), min(gains)))
