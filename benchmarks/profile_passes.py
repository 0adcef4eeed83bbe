"""Replay passes, wall time and primary diagnosis: gemmlab's default collection vs ``--set full``.

Run on a GPU machine with Nsight Compute (from the repository root):

    PYTHONPATH=src python3 benchmarks/profile_passes.py --shape 2048,2048,2048 --out profile_passes.json \
        --md profile_passes.md [--rungs coalesced,smem_tiled] [--per-group coalesced]

For every ladder rung (or those in --rungs) it runs ``gemmlab profile RUNG`` twice — the default
metric collection and ``--full`` — and records the replay passes ncu reported, ncu's wall time
(program included) and the analyzer's primary category for each. The issue's targets: the default
takes at most 12 passes per kernel, and gives the same primary diagnosis as --set full on every rung.

``--per-group RUNG`` also profiles RUNG once per metric group alone, to show what each group costs.
Before profiling, the default collection's metric names are checked against ``ncu --query-metrics``.
A rung that fails is recorded with its one-line error; the others go on. Reports go to a fresh
folder under --reports (never overwriting). The JSON holds the device, ncu version, date, command
and every raw number; --md writes the side-by-side table for docs/results/.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

from gemmlab.errors import UserError
from gemmlab.profile import collect, targets
from gemmlab.profile.runner import find_ncu
from gemmlab.workflows import ladder_profile, profile_run

TARGET_PASSES = 12  # the target for the default collection on the H100 (--set full: 38)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def device_info() -> dict:
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        return {"nvidia_smi": q.stdout.strip()}
    except (OSError, subprocess.SubprocessError) as e:
        return {"nvidia_smi": f"unavailable ({e})"}


def ncu_version(ncu: str) -> str:
    p = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60)
    return " ".join(p.stdout.split()[-3:]) if p.returncode == 0 else f"unknown (rc {p.returncode})"


def check_metric_names(ncu: str) -> list[str]:
    """Default-collection base names that ``ncu --query-metrics`` does not list (should be none)."""
    p = subprocess.run([ncu, "--query-metrics"], capture_output=True, text=True, timeout=300)
    listed = set(p.stdout.split())
    wanted = sorted({collect.base_name(m) for m in collect.default_collection().metrics})
    return [b for b in wanted if b not in listed]


def one(rung: str, shape, coll: collect.Collection, ncu: str, out_dir: Path, timeout: float) -> dict:
    t0 = time.perf_counter()
    rec: dict[str, Any] = {"rung": rung, "collection": coll.name}
    try:
        target = targets.rung_target(rung, shape)
        path = targets.report_path(None, target.label + ("" if coll.name in ("default", "full") else
                                                         "_" + coll.name.replace(":", "_").replace(",", "-")),
                                   coll.set_name == "full", out_dir)
        res = profile_run.run_profile(target, coll, ncu=ncu, output=path, overwrite=False, timeout_s=timeout)
        prim = [profile_run.primary_category(d) for d in res.diagnoses]
        rec.update(passes=res.passes, wall_s=res.wall_s, primary=prim[-1] if prim else None,
                   kernels=[k.__dict__ for k in res.kernels], report=str(res.report), command=res.argv,
                   label=ladder_profile.primary_label(res.diagnoses[-1]) if res.diagnoses else None)
    except UserError as e:
        rec["error"] = e.message
    except Exception as e:  # a benchmark sweep records any failure and goes on with the next rung
        rec["error"] = f"{type(e).__name__}: {e}"
    rec["total_s"] = time.perf_counter() - t0
    log(f"  {rung:22s} {coll.name:10s} passes={rec.get('passes')} wall={rec.get('wall_s', 0):.1f}s "
        f"primary={rec.get('primary')} {('ERROR ' + rec['error']) if 'error' in rec else ''}")
    return rec


def table(rows: list[dict]) -> str:
    by = {(r["rung"], r["collection"]): r for r in rows}
    rungs = list(dict.fromkeys(r["rung"] for r in rows))
    lines = ["| Rung | Passes (default) | Passes (full) | Wall s (default) | Wall s (full) | Primary (default) | "
             "Primary (full) | Same? |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for rung in rungs:
        d, f = by.get((rung, "default"), {}), by.get((rung, "full"), {})

        def cell(r, k, fmt="{}"):
            if "error" in r:
                return "error"
            v = r.get(k)
            return "–" if v is None else fmt.format(v)

        same = "–" if "error" in d or "error" in f or not d or not f else ("yes" if d["primary"] == f["primary"] else "NO")
        lines.append(f"| {rung} | {cell(d, 'passes')} | {cell(f, 'passes')} | {cell(d, 'wall_s', '{:.1f}')} | "
                     f"{cell(f, 'wall_s', '{:.1f}')} | {cell(d, 'primary')} | {cell(f, 'primary')} | {same} |")
    errors = [f"- {r['rung']} ({r['collection']}): {r['error']}" for r in rows if "error" in r]
    return "\n".join(lines + ([""] + errors if errors else [])) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="2048,2048,2048", help="M,N,K")
    p.add_argument("--rungs", default=None, help="comma list (default: every ladder rung)")
    p.add_argument("--per-group", default=None, metavar="RUNG", help="also profile RUNG once per metric group")
    p.add_argument("--no-full", action="store_true", help="skip the --set full runs")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--reports", default="gemmlab-profiles", help="parent folder for the reports")
    p.add_argument("--out", required=True, help="JSON results")
    p.add_argument("--md", default=None, help="also write the markdown table here")
    args = p.parse_args(argv)

    from gemmlab.kernels import registry
    from gemmlab.problem import parse_shape

    shape = parse_shape(args.shape)
    rungs = args.rungs.split(",") if args.rungs else [r.name for r in registry.ladder()]
    ncu = find_ncu(None)
    out_dir = ladder_profile.fresh_dir(Path(args.reports))
    meta = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "command": " ".join([sys.executable, *sys.argv]), "host": platform.node(), "ncu": ncu,
            "ncu_version": ncu_version(ncu), **device_info(), "shape": shape,
            "default_metrics": list(collect.default_collection().metrics)}
    log(f"ncu {meta['ncu_version']} at {ncu}; {meta.get('nvidia_smi')}; reports in {out_dir}")
    missing = check_metric_names(ncu)
    meta["metrics_not_in_query_metrics"] = missing
    log("metric names: all listed by --query-metrics" if not missing else f"metric names NOT listed: {missing}")

    rows = []
    for rung in rungs:
        rows.append(one(rung, shape, collect.default_collection(), ncu, out_dir, args.timeout))
        if not args.no_full:
            rows.append(one(rung, shape, collect.full_collection(), ncu, out_dir, args.timeout))
    groups = []
    if args.per_group:
        for g in collect.GROUP_NAMES:
            groups.append(one(args.per_group, shape, collect.default_collection([g]), ncu, out_dir, args.timeout))

    ok = [r for r in rows if r["collection"] == "default" and "error" not in r]
    summary = {
        "target_passes": TARGET_PASSES,
        "max_default_passes": max((r["passes"] for r in ok if r.get("passes") is not None), default=None),
        "all_same_primary": all(
            any(f["rung"] == d["rung"] and f["collection"] == "full" and f.get("primary") == d.get("primary")
                and "error" not in f for f in rows) for d in ok) if not args.no_full else None,
        "errors": sum("error" in r for r in rows + groups),
    }
    Path(args.out).write_text(json.dumps({"meta": meta, "summary": summary, "runs": rows, "per_group": groups},
                                         indent=2, default=str))
    md = table(rows)
    if groups:
        md += "\n| Group alone | Passes | Wall s |\n| --- | --- | --- |\n" + "".join(
            f"| {g['collection']} | {g.get('passes', 'error')} | {g.get('wall_s', 0):.1f} |\n" for g in groups)
    print(md)
    print(json.dumps(summary))
    if args.md:
        Path(args.md).write_text(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
