"""Replay passes of candidate metric collections on one rung, to choose a default under 12 passes.

Device only (from the repository root):
    PYTHONPATH=src python3 benchmarks/explore_passes.py --rung coalesced --out passes_explore.json
    [--full-reports DIR --full-rungs a,b]   # also keep --set full reports of these rungs

Each candidate is the default collection minus some groups, or with the warp-stall group cut to
the reasons the analyzer names as categories. Prints passes and the primary diagnosis per candidate.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from gemmlab.profile import collect, targets
from gemmlab.profile.collect import Collection
from gemmlab.profile.metrics import definition
from gemmlab.profile.runner import find_ncu
from gemmlab.workflows import profile_run

# Stall reasons that map to an analyzer category or decide between candidates (the others are
# folded into "other" = CPI minus these).
CORE_STALLS = ("long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier",
               "math_pipe_throttle", "wait", "not_selected", "dispatch_stall", "tex_throttle")


def without(groups: tuple[str, ...], drop_stalls: bool = False) -> Collection:
    c = collect.default_collection([g for g in collect.GROUP_NAMES if g not in groups])
    metrics = c.metrics
    if drop_stalls:
        keep = {definition(f"stall_{r}").names[0] for r in CORE_STALLS}
        metrics = tuple(m for m in metrics
                        if "average_warps_issue_stalled" not in m or m in keep)
    name = "-".join(groups) + ("+core-stalls" if drop_stalls else "")
    return Collection(name=name or "default", metrics=metrics, sections=c.sections, groups=c.groups)


LIGHT = ("source_counters", "roofline", "atomics", "memory_hierarchy")
CANDIDATES = [
    without(()),
    without(("source_counters",)),
    without(LIGHT),
    without(LIGHT, drop_stalls=True),
    without(LIGHT + ("local_memory",), drop_stalls=True),
    without(LIGHT + ("pipes",)),
    without(LIGHT + ("warp_stalls",)),
    without(LIGHT + ("pipes", "local_memory"), drop_stalls=True),
]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--rung", default="coalesced")
    p.add_argument("--shape", default="2048,2048,2048")
    p.add_argument("--out", required=True)
    p.add_argument("--reports", default="/tmp/gemmlab-explore")
    p.add_argument("--full-rungs", default="")
    args = p.parse_args()
    shape = tuple(int(x) for x in args.shape.split(","))
    ncu = find_ncu(None)
    root = Path(args.reports) / str(int(time.time()))
    rows = []
    target = targets.rung_target(args.rung, shape)
    for i, c in enumerate(CANDIDATES):
        try:
            r = profile_run.run_profile(target, c, ncu=ncu, output=root / f"c{i}", overwrite=True)
            row = {"candidate": c.name, "metrics": len(c.metrics), "sections": list(c.sections), "passes": r.passes,
                   "wall_s": r.wall_s, "primary": [d.primary.category.value for d in r.diagnoses],
                   "confidence": [d.primary.confidence.value for d in r.diagnoses]}
        except Exception as e:  # a benchmark: record and go on
            row = {"candidate": c.name, "error": str(e)}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    for rung in filter(None, args.full_rungs.split(",")):
        try:
            r = profile_run.run_profile(targets.rung_target(rung, shape), collect.full_collection(), ncu=ncu,
                                    output=root / f"full_{rung}", overwrite=True)
            rows.append({"full_report": str(r.report), "rung": rung, "passes": r.passes,
                         "primary": [d.primary.category.value for d in r.diagnoses]})
        except Exception as e:
            rows.append({"full_report": None, "rung": rung, "error": str(e)})
    Path(args.out).write_text(json.dumps(rows, indent=1))
    for row in rows:
        print(row.get("candidate", row.get("rung")), row.get("passes"), row.get("primary"), row.get("confidence", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
