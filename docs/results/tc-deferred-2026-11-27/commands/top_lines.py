"""The hottest source lines of a dump_lines.py JSON, with their top stall reasons and SASS (run on
the CPU from the repository root): python top_lines.py X_lines.json <src dir of the tree> [N]"""
import json
import sys

sys.path.insert(0, sys.argv[2])
from gemmlab.kernels.source import read_source  # noqa: E402

TEXT = read_source("persistent_fp8.cu").splitlines()
launch = json.load(open(sys.argv[1]))[0]
total = launch["total"]["samples"]
for ln in sorted(launch["lines"], key=lambda x: -x["samples"])[:int(sys.argv[3]) if len(sys.argv) > 3 else 12]:
    stalls = sorted(ln["stalls"].items(), key=lambda x: -x[1])[:4]
    text = TEXT[ln["line"] - 1].strip()[:70] if ln["line"] <= len(TEXT) else "?"
    print("%5.1f%% %8d L%-4d %-70s %s" % (100 * ln["samples"] / total, ln["executed"], ln["line"], text, stalls))
    for s in ln["sass"][:3]:
        print("          ", s)
