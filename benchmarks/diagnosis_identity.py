"""Check that a change to the readers leaves every diagnosis as it was (CPU).

    PYTHONPATH=/tmp/before/src python benchmarks/diagnosis_identity.py dump /tmp/before.json
    PYTHONPATH=src python benchmarks/diagnosis_identity.py dump /tmp/after.json [--metrics needed]
    python benchmarks/diagnosis_identity.py compare /tmp/before.json /tmp/after.json [--diagnoses-only]

``dump`` loads every capture of the corpus in every export format (raw, details, .ncu-rep, and the
raw page in base units) and the H100 ladder CSVs, and writes, per file, ``diagnose_all``'s whole
verdict for each launch (primary, confidence, evidence, secondary findings, missing evidence,
recommendations: ``Diagnosis.to_dict()``) and a digest of each launch (identity, rules, and a hash
of all its metrics). ``.ncu-rep`` files are unpacked once to --unpack and read with the cache of
decoded reports off. ``compare`` says whether two dumps agree; ``--diagnoses-only`` leaves out the
metric digests (for ``--metrics needed``, which keeps fewer metrics by design).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _launch_digest(k) -> dict:
    metrics = {n: [repr(m.value), m.unit] for n, m in sorted(k.metrics.items())}
    return {"id": k.id, "name": k.name, "demangled": k.demangled, "block": k.block, "grid": k.grid,
            "device": k.device, "cc": k.cc, "format": k.format, "process": k.process, "notes": k.notes,
            "command_line": k.command_line, "rules": [r.__dict__ for r in k.rules], "n_metrics": len(metrics),
            "metrics_sha256": hashlib.sha256(json.dumps(metrics, sort_keys=True).encode()).hexdigest()}


def dump(corpus: Path, ncu: Path, unpack: Path, metrics: str | None) -> dict:
    os.environ["GEMMLAB_NCU_REP_CACHE"] = "0"
    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.corpus import files
    from gemmlab.profile.load import load

    unpack.mkdir(parents=True, exist_ok=True)
    paths = []
    for coll in files.COLLECTIONS:
        for cap in files.captures(corpus, coll):
            paths += [(f"{cap.stem}/{fmt}", cap.path(fmt, unpack)) for fmt in files.FORMATS]
            paths.append((f"{cap.stem}/raw_base", corpus / f"{cap.stem}_raw_base.csv"))
    paths += [(f"ncu_h100/{p.name}", p) for p in sorted(ncu.glob("*.csv"))]
    out = {}
    for label, path in paths:
        launches = load(path, metrics=metrics)
        out[label] = {"diagnoses": [d.to_dict() for d in diagnose_all(launches)],
                      "launches": [_launch_digest(k) for k in launches]}
        print(f"{label}: {len(launches)} launches", file=sys.stderr)
    return out


def compare(a: dict, b: dict, diagnoses_only: bool) -> list[str]:
    problems = [f"only in one dump: {label}" for label in sorted(a.keys() ^ b.keys())]
    for label in sorted(a.keys() & b.keys()):
        if a[label]["diagnoses"] != b[label]["diagnoses"]:
            problems.append(f"{label}: diagnoses differ")
        la, lb = a[label]["launches"], b[label]["launches"]
        if diagnoses_only:
            drop = ("metrics_sha256", "n_metrics")
            la = [{k: v for k, v in d.items() if k not in drop} for d in la]
            lb = [{k: v for k, v in d.items() if k not in drop} for d in lb]
        if la != lb:
            problems.append(f"{label}: launches differ")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out", type=Path)
    d.add_argument("--corpus", type=Path, default=ROOT / "tests" / "fixtures" / "corpus" / "h100")
    d.add_argument("--ncu", type=Path, default=ROOT / "tests" / "fixtures" / "ncu" / "h100")
    d.add_argument("--unpack", type=Path, default=Path("/tmp/gemmlab-identity-unpack"))
    d.add_argument("--metrics", choices=("needed", "all"))
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--diagnoses-only", action="store_true")
    args = ap.parse_args(argv)
    if args.what == "dump":
        args.out.write_text(json.dumps(dump(args.corpus, args.ncu, args.unpack, args.metrics),
                                       indent=0, sort_keys=True, default=str))
        return 0
    a, b = json.loads(args.a.read_text()), json.loads(args.b.read_text())
    problems = compare(a, b, args.diagnoses_only)
    n = sum(len(v["diagnoses"]) for v in a.values())
    print(f"{len(a)} files, {n} diagnoses: " + ("identical" if not problems else "; ".join(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
