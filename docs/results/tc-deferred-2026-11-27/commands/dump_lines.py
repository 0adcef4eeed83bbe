"""Device aid (untracked): every source line of each launch in an .ncu-rep, with samples, stalls and
instructions executed, as JSON."""
import json, sys
from gemmlab.profile.source_lines import read_lines
out = []
for L in read_lines(sys.argv[1]):
    tot = L.total
    out.append({"name": L.name, "total": {"samples": tot.samples, "executed": tot.executed, "stalls": tot.stalls},
                "lines": [{"file": ln.file, "line": ln.line, "samples": ln.samples, "executed": ln.executed,
                           "stalls": ln.stalls,
                           "sass": [(i.sass, i.executed, i.samples) for i in sorted(ln.instructions, key=lambda i: -i.samples)[:4]]}
                          for ln in L.lines]})
json.dump(out, open(sys.argv[2], "w"), indent=0)
print(sys.argv[1], [(o["name"], o["total"]["samples"], o["total"]["executed"]) for o in out])
