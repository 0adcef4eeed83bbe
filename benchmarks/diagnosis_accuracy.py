"""Score the analyzer on the labelled diagnosis corpus, per collection and export format.

    PYTHONPATH=src python benchmarks/diagnosis_accuracy.py [--corpus DIR ...] [--formats raw,details,ncu-rep]
        [--no-held-out] [--json OUT.json] [--md OUT.md]

Prints, for each collection (--set full, gemmlab's targeted metrics) and each export format: the share of
primaries that are one of the truth's categories, a calibration table (accuracy per confidence level) and
every wrong answer; the confusion table (expected → answered) over all formats. The grown corpus
(tests/fixtures/corpus/h100_grown) is scored in two parts: the cases used while the rules were changed,
and the cases kept out of all tuning (``gemmlab.corpus.files.held_out``), which is what a fresh kernel gets;
``--no-held-out`` leaves the latter unscored while tuning. The truth
(tests/fixtures/corpus/h100/truth.json) was set from first principles, never from the rules.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from gemmlab.analysis.diagnose import diagnose_all
from gemmlab.corpus import files
from gemmlab.corpus.score import Score, score
from gemmlab.profile.load import load

CORPORA = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "corpus"
DEFAULT = CORPORA / "h100"
GROWN = CORPORA / "h100_grown"
CLUSTERS = CORPORA / "h200_clusters"


def run(corpus: Path, formats: list[str], unpack: Path) -> dict:
    """(collection, format) → (diagnoses, truth entries, seconds) for every launch of the corpus."""
    results = {}
    for coll in files.COLLECTIONS:
        for fmt in formats:
            diags, entries = [], []
            t0 = time.perf_counter()
            for cap, ents in files.entries_for(corpus, coll):
                launches = load(cap.path(fmt, unpack))
                diags += diagnose_all(launches)
                entries += ents
            results[(coll, fmt)] = (diags, entries, time.perf_counter() - t0)
    return results


def part(diags, entries, keep) -> Score:
    pairs = [(d, e) for d, e in zip(diags, entries) if keep(e)]
    return score([d for d, _ in pairs], [e for _, e in pairs])


def table(scores: dict) -> list[str]:
    lines = ["| collection | format | correct | accuracy | high: correct/answered | medium | low |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    def cell(bc: dict, lv: str) -> str:
        return f"{bc[lv][0]}/{bc[lv][1]}" + (f" ({100 * bc[lv][0] / bc[lv][1]:.0f}%)" if bc[lv][1] else "")

    for (coll, fmt), s in scores.items():
        bc = s.by_confidence()
        lines.append(f"| {coll} | {fmt} | {s.correct}/{s.total} | {100 * s.accuracy:.1f}% | {cell(bc, 'high')} | "
                     f"{cell(bc, 'medium')} | {cell(bc, 'low')} |")
    return lines


def calibration(scores: dict) -> list[str]:
    """Accuracy per confidence level over every collection and format of one part."""
    lines = ["| confidence | correct / answered | accuracy |", "| --- | --- | --- |"]
    for lv in ("high", "medium", "low"):
        c = sum(s.by_confidence()[lv][0] for s in scores.values())
        n = sum(s.by_confidence()[lv][1] for s in scores.values())
        lines.append(f"| {lv} | {c}/{n} | {100 * c / n:.1f}% |" if n else f"| {lv} | 0/0 | — |")
    return lines


def wrong_rows(scores: dict) -> list[str]:
    rows = ["| collection | format | case | kernel | truth | answered |", "| --- | --- | --- | --- | --- | --- |"]
    for (coll, fmt), s in scores.items():
        rows += [f"| {coll} | {fmt} | {w.case} | `{w.kernel[-48:]}` | {' / '.join(w.truth)} | "
                 f"{w.primary} ({w.confidence}) |" for w in s.wrong()]
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, action="append", default=None,
                   help="a corpus directory (repeatable; default: the first corpus, the grown one and the "
                        "cluster one)")
    p.add_argument("--formats", default=",".join(files.FORMATS))
    p.add_argument("--no-held-out", action="store_true",
                   help="tuning: leave the held-out part of the grown corpus unscored (never printed)")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--md", type=Path, default=None)
    a = p.parse_args(argv)
    corpora = a.corpus or [DEFAULT, GROWN, CLUSTERS]
    parts: dict[str, dict] = {}
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in corpora:
            res = run(corpus, a.formats.split(","), Path(tmp))
            grown = any("held_out" in e for _, (_, ents, _) in res.items() for e in ents)
            for key, (diags, ents, secs) in res.items():
                seconds[f"{corpus.name}/{key[0]}/{key[1]}"] = secs
                if not grown:
                    parts.setdefault(corpus.name, {})[key] = part(diags, ents, lambda e: True)
                    continue
                parts.setdefault(f"{corpus.name} (tuning part)", {})[key] = part(
                    diags, ents, lambda e: not e.get("held_out"))
                if not a.no_held_out:
                    parts.setdefault(f"{corpus.name} (held out of all tuning)", {})[key] = part(
                        diags, ents, lambda e: bool(e.get("held_out")))
    md: list[str] = []
    confusion: Counter = Counter()
    for name, scores in parts.items():
        md += [f"## {name}", "", *table(scores), "", "Calibration (all collections and formats):", "",
               *calibration(scores), "", "Every wrong answer:", "", *wrong_rows(scores), ""]
        for s in scores.values():
            confusion.update(s.confusion())
    md += ["## Confusion (every part, collection and format)", "", "| expected | answered | count |",
           "| --- | --- | --- |"]
    md += [f"| {exp} | {got}{'' if exp == got else ' ✗'} | {n} |"
           for (exp, got), n in sorted(confusion.items(), key=lambda kv: (kv[0][0], -kv[1]))]
    print("\n".join(md))
    if a.json:
        a.json.write_text(json.dumps({name: {f"{c}/{f}": s.to_dict() for (c, f), s in scores.items()}
                                      for name, scores in parts.items()} | {"seconds": seconds}, indent=1))
    if a.md:
        a.md.write_text("\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
