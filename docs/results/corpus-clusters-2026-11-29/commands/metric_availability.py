"""Which names of gemmlab's default collection each chip's ncu --query-metrics lists (run 2's files).

    PYTHONPATH=src python docs/results/corpus-clusters-2026-11-29/commands/metric_availability.py DIR

DIR holds q_<chip>.txt (`ncu --query-metrics --chip <chip>`). launch__* names come from
`ncu --query-metrics-collection launch` (q_launch.txt) and the SourceCounters sample counters
(smsp__pcsamp_*) and sm__maximum_warps_per_active_cycle_pct are listed by neither: they are left out.
"""
import re
import sys
from pathlib import Path

from gemmlab.profile import collect

d = Path(sys.argv[1])
names = [m for m in collect.default_collection().metrics
         if not m.startswith("launch__") and "pcsamp" not in m and m != "sm__maximum_warps_per_active_cycle_pct"]
print(f"{len(names)} of the default collection's {len(collect.default_collection().metrics)} names checked")
for q in sorted(d.glob("q_*.txt")):
    if q.stem in ("q_launch",) or q.stem.startswith("q_all"):
        continue
    have = {m.group(1) for line in q.open() if (m := re.match(r"(\S+__\S+)\s+(Counter|Ratio|Throughput)", line))}
    missing = sorted({collect.base_name(n) for n in names if collect.base_name(n) not in have})
    print(f"{q.stem[2:]}: {len(have)} metrics listed; not there: {', '.join(missing) or 'none'}")
