"""How long `gemmlab analyze` takes on a 20-kernel `--set full` raw export (target: under 1 s on a CPU).

Builds the export from the real H100 capture's five kernel rows (repeated with new IDs, ≈2,200
metrics each) in a temporary directory, then times load → analyze → JSON render end to end,
several times, and reports the median with each stage's median.

    python benchmarks/analyze_speed.py [--kernels 20] [--repeat 7] [--out result.json]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from gemmlab.analysis.diagnose import diagnose_all  # noqa: E402
from gemmlab.analysis.evidence import report_dict  # noqa: E402
from gemmlab.output import dumps  # noqa: E402
from gemmlab.profile.load import load  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "ncu" / "h100" / "gemm_ladder_raw.csv"
TARGET_S = 1.0


def build_export(n_kernels: int, dest: Path) -> tuple[int, int]:
    """Write an n-kernel raw CSV from the fixture's rows; returns (kernels, metric columns)."""
    with open(FIXTURE, newline="") as fh:
        rows = list(csv.reader(fh))
    header, units, data = rows[0], rows[1], rows[2:]
    id_col = header.index("ID")
    with open(dest, "w", newline="") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_ALL)
        w.writerow(header)
        w.writerow(units)
        for i in range(n_kernels):
            row = list(data[i % len(data)])
            row[id_col] = str(i)
            w.writerow(row)
    return n_kernels, len(header) - 11


def run_once(path: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    launches = load(path)
    t1 = time.perf_counter()
    diagnoses = diagnose_all(launches)
    t2 = time.perf_counter()
    text = dumps(report_dict(str(path), diagnoses))
    t3 = time.perf_counter()
    assert len(diagnoses) == len(launches) and text
    return {"load_s": t1 - t0, "analyze_s": t2 - t1, "json_s": t3 - t2, "total_s": t3 - t0}


def run_cli(path: Path, fmt: list[str]) -> float:
    """Wall time of the real command in a fresh interpreter (startup, imports, rendering included)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), COLUMNS="120")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gemmlab", "analyze", str(path), *fmt], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--out", type=Path, help="write the result as JSON here")
    args = ap.parse_args(argv)
    if args.kernels < 1 or args.repeat < 1:
        ap.error("--kernels and --repeat must be ≥ 1")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"ladder_{args.kernels}k_raw.csv"
        n, n_metrics = build_export(args.kernels, path)
        size = path.stat().st_size
        run_once(path)  # warm-up: imports, file cache
        samples = [run_once(path) for _ in range(args.repeat)]
        cli = {name: statistics.median(run_cli(path, fmt) for _ in range(args.repeat))
               for name, fmt in (("text", []), ("json", ["--json"]))}
    med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    result = {
        "benchmark": "analyze_speed",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "python benchmarks/analyze_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpus": os.cpu_count(), "python": platform.python_version()},
        "kernels": n, "metric_columns": n_metrics, "file_bytes": size, "repeat": args.repeat,
        "median_s": med, "min_total_s": min(s["total_s"] for s in samples),
        "max_total_s": max(s["total_s"] for s in samples), "samples": samples,
        "cli_median_s": cli,
        "target_s": TARGET_S, "meets_target": max(med["total_s"], *cli.values()) < TARGET_S,
    }
    print(f"gemmlab analyze: {n} kernels × {n_metrics} metric columns ({size / 1e6:.1f} MB), "
          f"{args.repeat} runs after one warm-up")
    print(f"{'stage':<10}{'median (ms)':>14}")
    for k in ("load_s", "analyze_s", "json_s", "total_s"):
        print(f"{k[:-2]:<10}{1e3 * med[k]:>14.1f}")
    print(f"total range {1e3 * result['min_total_s']:.1f}–{1e3 * result['max_total_s']:.1f} ms")
    for name, t in cli.items():
        print(f"`gemmlab analyze FILE{' --json' if name == 'json' else ''}` in a fresh process: "
              f"median {1e3 * t:.0f} ms")
    print(f"target < {TARGET_S:.0f} s: {'met' if result['meets_target'] else 'NOT met'}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
