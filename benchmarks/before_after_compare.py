"""Compare the runs benchmarks/before_after_device.sh made with two versions of gemmlab.

    PYTHONPATH=src python benchmarks/before_after_compare.py DIR [--md OUT.md] [--json OUT.json]

DIR holds <what>_<old|new>_<round>.json. Every row of the old run is matched to the new run's row
of the same kernel, shape and sweep point in the same round; for each pair: both medians, new/old,
and ``stats.effect(old, new)`` (faster / slower / same, from the raw samples). Files of either
version load through ``bench.results.load_record`` (gemmlab 0.1 files are record version 1).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from gemmlab.bench.results import load_record
from gemmlab.bench.stats import effect


def key(row) -> tuple:
    point = row.extra.get("point") or {}
    grid = row.extra.get("grid_shape") or {}
    return (row.name, row.shape, str(point.get("value", "")), tuple(grid.get(k) for k in "MNK") if grid else ())


def label(k: tuple) -> str:
    name, shape, value, _ = k
    return f"{name} {'x'.join(map(str, shape))}" + (f" @{value}" if value else "")


def compare(folder: Path) -> dict:
    files = {m.groups(): p for p in folder.glob("*.json")
             if (m := re.fullmatch(r"([a-z0-9]+)_(old|new)_(\d+)\.json", p.name))}
    out: dict = {}
    for what in sorted({w for w, _, _ in files}):
        pairs = defaultdict(dict)
        for rnd in sorted({r for w, _, r in files if w == what}):
            old_p, new_p = files.get((what, "old", rnd)), files.get((what, "new", rnd))
            if not (old_p and new_p):
                continue
            old = {key(r): r for r in load_record(json.loads(old_p.read_text()), str(old_p)).rows}
            new = {key(r): r for r in load_record(json.loads(new_p.read_text()), str(new_p)).rows}
            if set(old) != set(new):
                raise SystemExit(f"{what} round {rnd}: the two runs measured different rows: "
                                 f"{sorted(map(label, set(old) ^ set(new)))}")
            for k in old:
                e = effect(old[k].measurement, new[k].measurement)
                pairs[k][rnd] = {"old_ms": old[k].median_s * 1e3, "new_ms": new[k].median_s * 1e3,
                                 "new_over_old": new[k].median_s / old[k].median_s, "effect": e.verdict,
                                 "old_correct": old[k].correct, "new_correct": new[k].correct}
        rows = [{"row": label(k), "rounds": v} for k, v in pairs.items()]
        verdicts = Counter(r["effect"] for x in rows for r in x["rounds"].values())
        ratios = [r["new_over_old"] for x in rows for r in x["rounds"].values()]
        both_ways = [x["row"] for x in rows if {"faster", "slower"} & {r["effect"] for r in x["rounds"].values()}
                     and len({r["effect"] for r in x["rounds"].values()}) > 1]
        out[what] = {"rows": rows, "verdicts": dict(verdicts), "median_new_over_old": statistics.median(ratios),
                     "min_new_over_old": min(ratios), "max_new_over_old": max(ratios),
                     "changed_in_one_round_only": both_ways,
                     "checks_agree": all(r["old_correct"] == r["new_correct"] for x in rows for r in x["rounds"].values())}
    return out


def markdown(result: dict) -> str:
    lines = []
    for what, r in result.items():
        lines += [f"## {what}", "",
                  f"{sum(r['verdicts'].values())} row pairs: " + ", ".join(f"{v} {k}" for k, v in sorted(r["verdicts"].items()))
                  + f"; new/old median {r['median_new_over_old']:.4f} (range {r['min_new_over_old']:.4f}–"
                  f"{r['max_new_over_old']:.4f}); checks agree: {r['checks_agree']}", "",
                  "| row | round | old (ms) | new (ms) | new/old | effect |", "| --- | --- | ---: | ---: | ---: | --- |"]
        for x in r["rows"]:
            for rnd, v in sorted(x["rounds"].items()):
                lines.append(f"| {x['row']} | {rnd} | {v['old_ms']:.4f} | {v['new_ms']:.4f} | {v['new_over_old']:.4f} | "
                             f"{v['effect']} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--md", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    result = compare(args.folder)
    text = markdown(result)
    if args.md:
        args.md.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    sys.stdout.write(text if not args.md else "".join(
        f"{w}: {r['verdicts']}, new/old median {r['median_new_over_old']:.4f}, one-round changes "
        f"{r['changed_in_one_round_only']}\n" for w, r in result.items()))


if __name__ == "__main__":
    main()
