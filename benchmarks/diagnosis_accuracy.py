"""Score the analyzer on the labelled diagnosis corpus, per collection and export format.

    PYTHONPATH=src python benchmarks/diagnosis_accuracy.py [--corpus DIR] [--formats raw,details,ncu-rep]
        [--json OUT.json] [--md OUT.md]

Prints, for each collection (--set full, gemmlab's targeted metrics) and each export format: the share of
primaries that are one of the truth's categories, a calibration table (accuracy per confidence level) and
every wrong answer; the confusion table (expected → answered) over all formats. The truth
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
from gemmlab.corpus.score import score
from gemmlab.profile.load import load

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "corpus" / "h100"


def run(corpus: Path, formats: list[str], unpack: Path) -> dict:
    results = {}
    for coll in files.COLLECTIONS:
        for fmt in formats:
            diags, entries = [], []
            t0 = time.perf_counter()
            for cap, ents in files.entries_for(corpus, coll):
                launches = load(cap.path(fmt, unpack))
                diags += diagnose_all(launches)
                entries += ents
            s = score(diags, entries)
            results[(coll, fmt)] = (s, time.perf_counter() - t0)
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT)
    p.add_argument("--formats", default=",".join(files.FORMATS))
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--md", type=Path, default=None)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        res = run(a.corpus, a.formats.split(","), Path(tmp))
    lines = ["| collection | format | correct | accuracy | high: correct/answered | medium | low |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    confusion: Counter = Counter()
    for (coll, fmt), (s, secs) in res.items():
        bc = s.by_confidence()
        cell = lambda lv: f"{bc[lv][0]}/{bc[lv][1]}" + (f" ({100 * bc[lv][0] / bc[lv][1]:.0f}%)" if bc[lv][1] else "")  # noqa: E731
        lines.append(f"| {coll} | {fmt} | {s.correct}/{s.total} | {100 * s.accuracy:.1f}% | {cell('high')} | "
                     f"{cell('medium')} | {cell('low')} |")
        confusion.update(s.confusion())
    print("\n".join(lines))
    for (coll, fmt), (s, _) in res.items():
        for w in s.wrong():
            print(f"WRONG {coll:8} {fmt:8} {w.case:34} {w.kernel[-40:]:40} truth={'/'.join(w.truth)} "
                  f"got={w.primary} ({w.confidence})")
    conf_lines = ["| expected | answered | count |", "| --- | --- | --- |"]
    for (exp, got), n in sorted(confusion.items(), key=lambda kv: (kv[0][0], -kv[1])):
        conf_lines.append(f"| {exp} | {got}{'' if exp == got else ' ✗'} | {n} |")
    print("\n".join(conf_lines))
    if a.json:
        a.json.write_text(json.dumps({f"{c}/{f}": {**s.to_dict(), "seconds": secs} for (c, f), (s, secs) in res.items()},
                                     indent=1))
    if a.md:
        wrong = ["| collection | format | case | kernel | truth | answered |", "| --- | --- | --- | --- | --- | --- |"]
        for (coll, fmt), (s, _) in res.items():
            wrong += [f"| {coll} | {fmt} | {w.case} | `{w.kernel[-48:]}` | {' / '.join(w.truth)} | "
                      f"{w.primary} ({w.confidence}) |" for w in s.wrong()]
        a.md.write_text("## Accuracy per collection and export format\n\n" + "\n".join(lines)
                        + "\n\n## Every wrong answer\n\n" + "\n".join(wrong)
                        + "\n\n## Confusion (all collections and formats)\n\n" + "\n".join(conf_lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
