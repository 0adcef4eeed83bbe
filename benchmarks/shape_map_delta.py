"""Per-shape change of % of cuBLAS between two shape maps of one dtype (`gemmlab shapes --out`
JSON, optionally .xz): the median change, and the largest falls and rises with the plan that ran
on each side. Used to tell a code change from machine-to-machine spread (issue #20).

    python benchmarks/shape_map_delta.py OLD.json.xz NEW.json.xz [--top 8]
"""

from __future__ import annotations

import argparse
import json
import lzma
import statistics
import sys


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    out = {}
    if "rows" not in d:  # a map alone (shape_map_bars.py --remap's): its points
        for q in d["map"]["points"]:
            if q.get("pct_of_cublas") is not None:
                out[(q["M"], q["N"], q["K"])] = (q["pct_of_cublas"], q.get("ran", "?"))
        return d["map"].get("dtype", "?"), out
    for r in d["rows"]:
        if r.get("is_reference") or r.get("pct_of_cublas") is None:
            continue
        sp = r["spec"]
        launched = r["launched"] if isinstance(r["launched"], dict) else json.loads(r["launched"])
        out[(sp["M"], sp["N"], sp["K"])] = (r["pct_of_cublas"], launched.get("rung", "?"))
    return d.get("dtype", "?"), out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--top", type=int, default=8)
    args = p.parse_args(argv)
    dt, a = load(args.old)
    _, b = load(args.new)
    ds = sorted((b[k][0] - a[k][0], k, a[k][1], b[k][1], a[k][0], b[k][0]) for k in a if k in b)
    if not ds:
        print("no shape in both maps", file=sys.stderr)
        return 2
    print(f"{dt}: {len(ds)} shapes in both; median change {statistics.median(x[0] for x in ds):+.1f} "
          f"points; M >= 2048: {statistics.median([x[0] for x in ds if x[1][0] >= 2048] or [0]):+.1f}")
    # the largest falls and rises; every shape once where the two ends would meet
    shown = ds if 2 * args.top >= len(ds) else ds[:args.top] + ds[-args.top:]
    for d in shown:
        print("  %+.1f %s %s -> %s (%.1f -> %.1f)" % d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
