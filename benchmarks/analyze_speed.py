"""How long `gemmlab analyze` takes on a 20-kernel `--set full` export, raw CSV (target: under 1 s
on a CPU) and .ncu-rep (target: under 1.5 s as a whole command).

Raw CSV: builds the export from the real H100 capture's five kernel rows (repeated with new IDs,
≈2,200 metrics each) in a temporary directory, then times load → analyze → JSON render end to end,
several times, and reports the median with each stage's median, then the real command.

.ncu-rep: splices the five single-kernel `--set full` H100 reports in tests/fixtures/ncu/h100 into
one report of N launches (`rep_strip.splice`: their result blocks, cycled; ncu_report reads it as
one range of N actions) — or takes `--rep FILE`, a real multi-kernel report — and times the real
command in a fresh process: with the cache of decoded records off (every run decodes), and with it
on and filled (a repeat run on the same report). The CPU time of each command (its process and
children) is recorded beside the wall time: the machine may be shared.

`--src DIR` times the command of another source tree (e.g. `git archive REV src | tar -x -C DIR`)
for a before/after comparison on the same input.

    python benchmarks/analyze_speed.py [--kernels 20] [--repeat 7] [--rep FILE] [--src DIR] [--out result.json]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import resource
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
REPORTS = sorted((ROOT / "tests" / "fixtures" / "ncu" / "h100").glob("*.ncu-rep"))
TARGET_S = 1.0
TARGET_REP_S = 1.5


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


def run_cli(path: Path, fmt: list[str], src: Path = ROOT / "src", env: dict | None = None) -> float:
    """Wall time of the real command in a fresh interpreter (startup, imports, rendering included)."""
    return run_cli_cpu(path, fmt, src, env)[0]


def run_cli_cpu(path: Path, fmt: list[str], src: Path = ROOT / "src",
                env: dict | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of the real command in a fresh interpreter; CPU counts its children."""
    full_env = dict(os.environ, PYTHONPATH=str(src), COLUMNS="120", **(env or {}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gemmlab", "analyze", str(path), *fmt], check=True, env=full_env,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def build_report(n_kernels: int, dest: Path) -> int:
    """Write an n-launch .ncu-rep spliced from the fixture reports; returns the launch count."""
    from gemmlab.profile.rep_strip import splice

    dest.write_bytes(splice([p.read_bytes() for p in REPORTS], n_kernels))
    return n_kernels


def time_report(path: Path, repeat: int, src: Path, cache_dir: Path) -> dict:
    """Median wall and CPU seconds of `gemmlab analyze REPORT [--json]`: cache off, then cache warm."""
    out: dict = {}
    cases = [("cold_json", ["--json"], {"GEMMLAB_NCU_REP_CACHE": "0"}),
             ("cold_text", [], {"GEMMLAB_NCU_REP_CACHE": "0"}),
             ("cached_json", ["--json"], {"GEMMLAB_NCU_REP_CACHE": "1", "GEMMLAB_CACHE_DIR": str(cache_dir)}),
             ("cached_text", [], {"GEMMLAB_NCU_REP_CACHE": "1", "GEMMLAB_CACHE_DIR": str(cache_dir)})]
    run_cli_cpu(path, ["--json"], src, cases[2][2])  # warm-up: file cache, .pyc, and the cache entry
    for name, fmt, env in cases:
        runs = [run_cli_cpu(path, fmt, src, env) for _ in range(repeat)]
        out[name] = {"median_wall_s": statistics.median(w for w, _ in runs),
                     "min_wall_s": min(w for w, _ in runs), "max_wall_s": max(w for w, _ in runs),
                     "median_cpu_s": statistics.median(c for _, c in runs),
                     "wall_s": [w for w, _ in runs]}
    return out


def report_stages(path: Path, repeat: int) -> dict[str, float]:
    """In-process medians for the report, cache off: read (hash, lean copy, child decode, records),
    analyze, JSON."""
    os.environ["GEMMLAB_NCU_REP_CACHE"] = "0"
    try:
        samples = [run_once(path) for _ in range(repeat)]
    finally:
        del os.environ["GEMMLAB_NCU_REP_CACHE"]
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


def time_csv(tmp: Path, kernels: int, repeat: int) -> dict:
    path = tmp / f"ladder_{kernels}k_raw.csv"
    n, n_metrics = build_export(kernels, path)
    size = path.stat().st_size
    run_once(path)  # warm-up: imports, file cache
    samples = [run_once(path) for _ in range(repeat)]
    cli = {name: statistics.median(run_cli(path, fmt) for _ in range(repeat))
           for name, fmt in (("text", []), ("json", ["--json"]))}
    med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
    result = {
        "kernels": n, "metric_columns": n_metrics, "file_bytes": size, "repeat": repeat,
        "median_s": med, "min_total_s": min(s["total_s"] for s in samples),
        "max_total_s": max(s["total_s"] for s in samples), "samples": samples,
        "cli_median_s": cli,
        "target_s": TARGET_S, "meets_target": max(med["total_s"], *cli.values()) < TARGET_S,
    }
    print(f"raw CSV: gemmlab analyze: {n} kernels × {n_metrics} metric columns ({size / 1e6:.1f} MB), "
          f"{repeat} runs after one warm-up")
    print(f"{'stage':<10}{'median (ms)':>14}")
    for k in ("load_s", "analyze_s", "json_s", "total_s"):
        print(f"{k[:-2]:<10}{1e3 * med[k]:>14.1f}")
    print(f"total range {1e3 * result['min_total_s']:.1f}–{1e3 * result['max_total_s']:.1f} ms")
    for name, t in cli.items():
        print(f"`gemmlab analyze FILE{' --json' if name == 'json' else ''}` in a fresh process: "
              f"median {1e3 * t:.0f} ms")
    print(f"target < {TARGET_S:.0f} s: {'met' if result['meets_target'] else 'NOT met'}\n")
    return result


def time_rep(path: Path, repeat: int, src: Path, cache_dir: Path, spliced: bool) -> dict:
    size = path.stat().st_size
    own_src = src.resolve() == (ROOT / "src").resolve()
    stages = report_stages(path, repeat) if own_src else None
    cli = time_report(path, repeat, src, cache_dir)
    n = len(_launch_names(path)) if own_src else None
    result = {
        "report": "spliced from tests/fixtures/ncu/h100/*.ncu-rep" if spliced else str(path),
        "launches": n, "file_bytes": size, "repeat": repeat, "src": str(src),
        "in_process_median_s": stages, "cli": cli,
        "target_s": TARGET_REP_S,
        "meets_target": max(cli["cold_json"]["median_wall_s"], cli["cold_text"]["median_wall_s"]) < TARGET_REP_S,
    }
    print(f".ncu-rep: gemmlab analyze: {n if n is not None else '?'} launches ({size / 1e6:.1f} MB), "
          f"{repeat} runs of each after one warm-up; source tree {src}")
    if stages:
        print("in process, cache off: " + ", ".join(f"{k[:-2]} {1e3 * v:.0f} ms" for k, v in stages.items()))
    for name, c in cli.items():
        print(f"{name:<12} wall median {1e3 * c['median_wall_s']:5.0f} ms "
              f"(range {1e3 * c['min_wall_s']:.0f}–{1e3 * c['max_wall_s']:.0f}), "
              f"CPU median {1e3 * c['median_cpu_s']:.0f} ms")
    print(f"target < {TARGET_REP_S} s without the cache: {'met' if result['meets_target'] else 'NOT met'}")
    return result


def _launch_names(path: Path) -> list[str]:
    os.environ["GEMMLAB_NCU_REP_CACHE"] = "0"
    try:
        return [k.name for k in load(path)]
    finally:
        del os.environ["GEMMLAB_NCU_REP_CACHE"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rep", type=Path, help="time this .ncu-rep instead of one spliced from the fixtures")
    ap.add_argument("--src", type=Path, default=ROOT / "src",
                    help="source tree whose command is timed on the .ncu-rep (default: this one)")
    ap.add_argument("--skip-csv", action="store_true", help="time the .ncu-rep only")
    ap.add_argument("--out", type=Path, help="write the result as JSON here")
    args = ap.parse_args(argv)
    if args.kernels < 1 or args.repeat < 1:
        ap.error("--kernels and --repeat must be ≥ 1")
    machine = {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
               "cpus": os.cpu_count(), "python": platform.python_version(),
               "load_average_at_start": os.getloadavg()}
    result: dict = {
        "benchmark": "analyze_speed",
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "python benchmarks/analyze_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine,
    }
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_csv:
            result["raw_csv"] = time_csv(Path(tmp), args.kernels, args.repeat)
        rep = args.rep or Path(tmp) / f"ladder_{args.kernels}k_full.ncu-rep"
        if args.rep is None:
            build_report(args.kernels, rep)
        result["ncu_rep"] = time_rep(rep, args.repeat, args.src, Path(tmp) / "cache", spliced=args.rep is None)
    machine["load_average_at_end"] = os.getloadavg()
    meets = [result["ncu_rep"]["meets_target"]] + ([result["raw_csv"]["meets_target"]] if not args.skip_csv else [])
    result["meets_targets"] = all(meets)
    if args.out:
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
