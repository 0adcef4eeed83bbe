"""Wall time, CPU time and peak memory of whole ``gemmlab analyze`` commands on large exports (CPU).

    PYTHONPATH=src python benchmarks/load_scale.py --tree before=/tmp/before_src --tree after=src \\
        --case raw-json:/tmp/big_raw_10000.csv:--json --case rep-json:/tmp/corpus_full_a.ncu-rep:--json \\
        --runs 3 --out docs/results/load-scale-2026-11-25/load_scale.json

Each run is a fresh ``python -m gemmlab analyze FILE ARGS > /dev/null`` under ``/usr/bin/time -v``
with ``PYTHONPATH`` set to the tree (a ``src`` folder: gemmlab as it was, and as it is), so the
numbers are the whole command's: imports, reading, diagnosis, output. An ``.ncu-rep`` is read cold:
each run gets an empty cache folder (``GEMMLAB_CACHE_DIR``). Trees and cases alternate run by run,
and the 1-minute load average is recorded with each run: the machine may be shared. Big inputs are
made by ``benchmarks/make_big_raw_csv.py``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def _time_v(stderr: str, label: str) -> str:
    m = re.search(rf"^\s*{re.escape(label)}: (.*)$", stderr, re.MULTILINE)
    return m.group(1).strip() if m else ""


def _seconds(clock: str) -> float:
    parts = [float(p) for p in clock.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def run_once(tree: Path, path: Path, args: list[str]) -> dict:
    cache = Path(tempfile.mkdtemp(prefix="gemmlab-bench-cache-"))
    env = dict(os.environ, PYTHONPATH=str(tree), GEMMLAB_CACHE_DIR=str(cache))
    env.pop("GEMMLAB_NCU_REP_CACHE", None)
    load_before = os.getloadavg()[0]
    try:
        p = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-m", "gemmlab", "analyze", str(path), *args],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, check=False)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    err = p.stderr
    return {
        "rc": p.returncode,
        "wall_s": _seconds(_time_v(err, "Elapsed (wall clock) time (h:mm:ss or m:ss)")),
        "user_s": float(_time_v(err, "User time (seconds)") or "nan"),
        "sys_s": float(_time_v(err, "System time (seconds)") or "nan"),
        "max_rss_mb": int(_time_v(err, "Maximum resident set size (kbytes)") or 0) / 1024,
        "load_avg_1min": load_before,
        "error": "" if p.returncode == 0 else err.strip().splitlines()[-1] if err.strip() else "",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", action="append", required=True, help="LABEL=PATH of a folder holding gemmlab/")
    ap.add_argument("--case", action="append", required=True, help="NAME:FILE[:ARG,ARG...]")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    trees = dict(t.split("=", 1) for t in a.tree)
    cases = []
    for c in a.case:
        name, file, *rest = c.split(":")
        cases.append((name, Path(file), [x for x in ",".join(rest).split(",") if x]))
    results = []
    for i in range(a.runs):
        for name, path, args in cases:
            for label, tree in trees.items():
                r = run_once(Path(tree), path, args)
                r.update(tree=label, case=name, file=str(path), bytes=path.stat().st_size, args=args, run=i)
                results.append(r)
                print(f"{name:14} {label:7} run {i}: {r['wall_s']:7.2f} s wall, {r['user_s'] + r['sys_s']:7.2f} s CPU, "
                      f"{r['max_rss_mb']:7.0f} MB peak RSS, load {r['load_avg_1min']:.1f}"
                      + (f"  rc={r['rc']} {r['error']}" if r["rc"] else ""), flush=True)
    if a.out:
        record = {
            "benchmark": "load_scale",
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "trees": trees,
            "results": results,
        }
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
