"""Replay passes each default-collection metric costs when collected alone (device only).

    PYTHONPATH=src python3 benchmarks/metric_pass_costs.py --groups speed_of_light,pipes,warp_stalls \
        --rung coalesced --shape 1024,1024,1024 --out metric_pass_costs.json

Passes are not additive (ncu packs compatible counters into one pass), but a metric that costs many
passes alone is where a cheaper collection has to start.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from gemmlab.profile import collect, targets
from gemmlab.profile.collect import Collection
from gemmlab.profile.runner import find_ncu
from gemmlab.workflows import profile_run


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--groups", default="speed_of_light,pipes,warp_stalls")
    p.add_argument("--rung", default="coalesced")
    p.add_argument("--shape", default="1024,1024,1024")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    ncu = find_ncu(None)
    target = targets.rung_target(a.rung, tuple(int(x) for x in a.shape.split(",")))
    root = Path("/tmp/gemmlab-metric-costs") / str(int(time.time()))
    rows = []
    for g in a.groups.split(","):
        for name in collect.group(g).ncu_names:
            try:
                r = profile_run.run_profile(target, Collection(name=name, metrics=(name,)), ncu=ncu,
                                        output=root / name.replace(".", "_"), overwrite=True, analyze=False)
                rows.append({"group": g, "metric": name, "passes": r.passes})
            except Exception as e:  # a measurement script: record and go on
                rows.append({"group": g, "metric": name, "error": str(e)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    Path(a.out).write_text(json.dumps(rows, indent=1))
    for r in sorted(rows, key=lambda r: -(r.get("passes") or 0)):
        print(f"{r.get('passes')!s:>4}  {r['group']:15s} {r['metric']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
