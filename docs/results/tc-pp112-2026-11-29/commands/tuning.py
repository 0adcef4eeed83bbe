"""Run 1's tuning table: % of cuBLASLt at its best for the rules' plan (tree bc72ad8) and every
forced ping-pong width, with each tile's issued fraction on 132 SMs.
Usage (repository root): PYTHONPATH=src python3 docs/results/tc-pp112-2026-11-29/commands/tuning.py JSON"""
import json
import sys

from gemmlab.runtime import dispatch_tc as D

COLS = ("128x112pp", "128x144pp", "128x128pp", "128x160pp", "128x168pp", "128x176pp", "128x256c1")
d = json.load(open(sys.argv[1]))
print("==", d["meta"]["device"], d["meta"]["date"])
print("%-16s %-18s" % ("shape", "earlier plan") + "".join("%15s" % c for c in COLS))
for s in d["shapes"]:
    M, N, K = s["shape"]
    v = {x["variant"]: x for x in s["variants"]}
    disp = v["dispatch"]
    row = "%-16s %-10s %5.1f  " % ("%dx%dx%d" % (M, N, K), disp["ran"], 100 * disp["vs_cublas"])
    for c in COLS:
        x = v.get(c + " S=1") or (disp if disp["ran"] == c else None)
        row += "%15s" % ("%5.1f [%.3f]" % (100 * x["vs_cublas"], D.issued_fraction(M, N, c, 132))
                         if x else "-")
    print(row, "correct" if all(x.get("ok") for x in s["variants"]) else "WRONG")
