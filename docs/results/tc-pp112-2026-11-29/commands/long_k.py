"""Run 4's table: % of cuBLASLt at its best for the rules' plan (tree 3f182d4, cooperative at
these long-K shapes) and every forced ping-pong width, with each tile's issued fraction on 132 SMs.
Usage (repository root): PYTHONPATH=src python3 docs/results/tc-pp112-2026-11-29/commands/long_k.py JSON"""
import json
import sys

from gemmlab.runtime import dispatch_tc as D

W = ("128x112pp", "128x128pp", "128x144pp", "128x160pp", "128x168pp", "128x176pp")
d = json.load(open(sys.argv[1]))
print("==", d["meta"]["device"], d["meta"]["date"])
print("%-17s %-22s" % ("shape", "earlier plan [frac]") + "".join("%15s" % w for w in W))
for s in d["shapes"]:
    M, N, K = s["shape"]
    v = {x["ran"]: x for x in s["variants"]}
    disp = next(x for x in s["variants"] if x["variant"] == "dispatch")
    print("%-17s %-10s %5.1f [%.3f]" % ("%dx%dx%d" % (M, N, K), disp["ran"],
                                      100 * disp["vs_cublas"], D.issued_fraction(M, N, disp["ran"], 132))
          + "".join("%15s" % ("%5.1f [%.3f]" % (100 * v[w]["vs_cublas"], D.issued_fraction(M, N, w, 132)))
                    for w in W),
          "correct" if all(x.get("ok") for x in s["variants"]) else "WRONG")
