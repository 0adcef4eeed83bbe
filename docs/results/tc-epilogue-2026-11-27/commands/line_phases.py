"""Sum dump_lines.py's per-line samples and instructions by the device function each line lies in
(lines of persistent_fp8.cu's translation unit as gemmlab.kernels.source inlines it; run on the CPU
from the repository root with PYTHONPATH=src):

    python docs/results/tc-epilogue-2026-11-27/commands/line_phases.py X_lines.json [...]
"""
import json
import sys

from gemmlab.kernels.source import read_source

TEXT = read_source("persistent_fp8.cu").splitlines()


def function_of(line: int) -> str:
    for j in range(min(line - 1, len(TEXT) - 2), -1, -1):
        if "__device__" in TEXT[j]:
            return " ".join((TEXT[j] + " " + TEXT[j + 1]).split())[:90]
    return "?"


for path in sys.argv[1:]:
    launch = json.load(open(path))[0]
    total = launch["total"]["samples"]
    by = {}
    for ln in launch["lines"]:
        s = by.setdefault(function_of(ln["line"]), [0, 0])
        s[0] += ln["samples"]
        s[1] += ln["executed"]
    print(f"== {path}: {launch['name']}, {total} warp samples, {launch['total']['executed']} instructions")
    print("  samples  instructions  function")
    for name, (smp, ex) in sorted(by.items(), key=lambda kv: -kv[1][0])[:14]:
        print(f"  {100 * smp / total:6.1f}%  {ex:12d}  {name}")
