"""How long gemmlab.profile.load takes on a 20-kernel --set full capture, per export format.

Builds, in a temporary directory, a 20-kernel raw page (~2,200 metrics per kernel) and a
20-kernel details page by replicating the rows of the real H100 captures in
tests/fixtures/ncu/h100/ under new launch IDs, then times load() on each (and on the real
.ncu-rep, one kernel, when ncu_report is installed): median, min and max of --runs runs, and the
peak of the memory Python allocated while reading (one more run, under tracemalloc).
``--metrics needed|all`` picks the raw page's columns (default: as load() picks them by size).

    PYTHONPATH=src python benchmarks/load_speed.py --runs 7 --out docs/results/load_speed_cpu.json

Whole commands on 10,000-launch pages and a 90-launch report: benchmarks/load_scale.py.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from gemmlab.errors import ToolMissing
from gemmlab.output import print_table
from gemmlab.profile.load import load

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "ncu" / "h100"


def _write(rows: list[list[str]], path: Path) -> None:
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    path.write_text(out.getvalue())


def build_raw(n: int, path: Path) -> None:
    """Header and units row of the capture, then ``n`` kernel rows cycled from its 5, IDs 0..n-1."""
    rows = list(csv.reader(io.StringIO((FIXTURES / "gemm_ladder_raw.csv").read_text())))
    header, units, data = rows[0], rows[1], rows[2:]
    kernels = []
    for i in range(n):
        row = list(data[i % len(data)])
        row[0] = str(i)
        kernels.append(row)
    _write([header, units, *kernels], path)


def build_details(n: int, path: Path) -> None:
    """The capture's rows for each launch, repeated for ``n`` launches under IDs 0..n-1."""
    rows = list(csv.reader(io.StringIO((FIXTURES / "gemm_ladder_details.csv").read_text())))
    header, data = rows[0], rows[1:]
    by_id: dict[str, list[list[str]]] = {}
    for r in data:
        by_id.setdefault(r[0], []).append(r)
    groups = list(by_id.values())
    out = [header]
    for i in range(n):
        for r in groups[i % len(groups)]:
            out.append([str(i), *r[1:]])
    _write(out, path)


def time_load(path: Path, runs: int, metrics: str | None = None) -> dict:
    load(path, metrics=metrics)  # warm: imports, ncu_report's library, the file in the page cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        launches = load(path, metrics=metrics)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    try:
        load(path, metrics=metrics)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return {
        "file": path.name,
        "bytes": path.stat().st_size,
        "kernels": len(launches),
        "metrics_per_kernel": round(statistics.mean(len(k.metrics) for k in launches)),
        "format": launches[0].format,
        "runs": runs,
        "seconds": times,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "peak_traced_mb": peak / 2**20,
    }


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=20, help="kernel launches in the built files (default 20)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs per file (default 7)")
    ap.add_argument("--metrics", choices=("needed", "all"), help="the raw page's metric columns (default: by size)")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    args = ap.parse_args(argv)
    if args.kernels < 1 or args.runs < 1:
        ap.error(f"--kernels and --runs must be >= 1 (got {args.kernels}, {args.runs})")

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / f"full_{args.kernels}k_raw.csv"
        details = Path(tmp) / f"full_{args.kernels}k_details.csv"
        build_raw(args.kernels, raw)
        build_details(args.kernels, details)
        results.append(time_load(raw, args.runs, args.metrics))
        results.append(time_load(details, args.runs, args.metrics))
    try:
        results.append(time_load(FIXTURES / "gemm_tiled16.ncu-rep", args.runs))
    except ToolMissing as e:
        print(f"skipping .ncu-rep: {e}", file=sys.stderr)

    print_table(
        ["file", "format", "kernels", "metrics/kernel", "MB", "median ms", "min ms", "max ms", "peak MB"],
        [(r["file"], r["format"], r["kernels"], r["metrics_per_kernel"], f"{r['bytes'] / 1e6:.2f}",
          f"{r['median_s'] * 1e3:.1f}", f"{r['min_s'] * 1e3:.1f}", f"{r['max_s'] * 1e3:.1f}",
          f"{r['peak_traced_mb']:.1f}") for r in results],
        title=f"gemmlab.profile.load, {args.runs} runs each",
    )
    if args.out:
        record = {
            "benchmark": "load_speed",
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
            "device": {"cpu": cpu_name(), "cores": os.cpu_count(), "python": platform.python_version(),
                       "platform": platform.platform()},
            "results": results,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
