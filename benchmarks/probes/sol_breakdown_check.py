"""Check gemmlab's derived Speed-of-Light throughputs against every sub-unit ncu measured.

    PYTHONPATH=src python benchmarks/probes/sol_breakdown_check.py sol_breakdown_raw.csv[.xz] [--json OUT]

Input: the raw page of benchmarks/probes/sol_breakdown.sh (ncu's breakdown: prefix over lts__throughput,
l1tex__throughput and sm__throughput). ncu defines each throughput as the max of its sub-units' % of peak;
for each launch this prints which sub-unit is the busiest and how far below it the max of the sub-units
gemmlab collects (gemmlab.profile.metrics: _L2_UNITS, _l1_elapsed) falls.
"""

from __future__ import annotations

import argparse
import collections
import csv
import io
import json
import lzma
import sys
from pathlib import Path

from gemmlab.profile.metrics import _L2_UNITS, definition

ELAPSED = ".avg.pct_of_peak_sustained_elapsed"
L1_SHORTS = ("l1_wavefronts_pct", "lsuin_requests_pct", "l1_xbar_req_pct", "l1_texin_req_pct")


def _rows(path: Path) -> list[list[str]]:
    text = lzma.open(path, "rt").read() if path.suffix == ".xz" else path.read_text()
    return list(csv.reader(io.StringIO(text)))


def _num(cell: str):
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return None


def _bases(shorts) -> list[str]:
    """The sub-unit base names (``lts__d_sectors``) behind gemmlab's short names."""
    return [n.split(".")[0] for s in shorts for n in definition(s).names[:1]]


def check(path: Path) -> dict:
    rows = _rows(path)
    head, launches = rows[0], rows[2:]
    kernel = head.index("Kernel Name")
    out = {}
    for unit, prefix, ours in (("L2", "lts__", _bases(_L2_UNITS)), ("L1/TEX", "l1tex__", _bases(L1_SHORTS))):
        cols = {h.split(".")[0]: i for i, h in enumerate(head) if h.startswith(prefix) and h.endswith(ELAPSED)}
        tops, gaps = collections.Counter(), []
        for row in launches:
            vals = {b: _num(row[i]) or 0.0 for b, i in cols.items()}
            top = max(vals, key=vals.get)
            tops[top] += 1
            mine = max((vals.get(b, 0.0) for b in ours), default=0.0)
            gaps.append((round(vals[top] - mine, 2), top, row[kernel][:80]))
        gaps.sort(reverse=True)
        out[unit] = {"launches": len(launches), "busiest_sub_unit": dict(tops.most_common()),
                     "largest_gap_points": gaps[:5], "gaps_over_3_points": sum(g[0] > 3 for g in gaps)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", type=Path)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    res = check(a.csv)
    text = json.dumps(res, indent=1)
    if a.json:
        a.json.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
