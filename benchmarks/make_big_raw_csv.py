"""Build a large Nsight Compute export from a real one: its launches repeated under fresh IDs.

    PYTHONPATH=src python benchmarks/make_big_raw_csv.py [--launches 10000] [--page raw|details]
        [--source tests/fixtures/corpus/h100/corpus_full_a_raw.csv] [--out /tmp/big_raw.csv]

The raw page (``ncu --set full --page raw --csv``: header, units row, one ~22 KB row per launch) keeps its
header and units row; launch rows are cycled in capture order, launch k getting ID k. The details page
(one row per metric or rule message) has each launch's block of rows repeated the same way. Every line is
copied byte for byte but for its ID cell, so the file is what ncu would have exported for a capture of
that many launches of the same kernels. The output is large (10,000 launches of the full_a capture:
205 MB raw, 492 MB details): write it outside the repository.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "corpus" / "h100"


_ROW = re.compile(r'^"([\d,]*)",')  # an ncu row starts with its quoted launch ID (empty in the units row)


def build(source: Path, out: Path, launches: int, page: str) -> dict:
    """Write ``out``: the header (and units row) of ``source``, then ``launches`` launches cycled from its
    own, each line byte for byte as ncu wrote it but for the launch ID."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    header, body = lines[0], lines[1:]
    preamble: list[str] = []
    groups: dict[object, list[str]] = {}  # one launch's lines (after the ID cell), in capture order
    for n, line in enumerate(body):
        m = _ROW.match(line)
        if m is None:
            if line.strip():
                raise SystemExit(f"{source}: a line that is not an ncu row: {line[:60]!r}")
        elif not m.group(1):  # the raw page's units row
            preamble.append(line)
        else:  # the raw page has one line a launch; the details page a block of lines per ID
            groups.setdefault(n if page == "raw" else m.group(1), []).append(line[m.end():])
    if not groups:
        raise SystemExit(f"{source}: no launch rows")
    blocks = list(groups.values())
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as f:
        f.write(header)
        f.writelines(preamble)
        for k in range(launches):
            cell = f'"{k}",'
            f.writelines(cell + rest for rest in blocks[k % len(blocks)])
    return {"source": str(source), "out": str(out), "page": page, "launches": launches,
            "source_launches": len(blocks), "columns": header.count('","') + 1, "bytes": out.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=10_000)
    ap.add_argument("--page", choices=("raw", "details"), default="raw")
    ap.add_argument("--source", type=Path, help="the real export to repeat (default: the corpus's full_a page)")
    ap.add_argument("--out", type=Path, help="default: /tmp/big_<page>_<launches>.csv")
    a = ap.parse_args(argv)
    if a.launches < 1:
        ap.error("--launches must be >= 1")
    source = a.source or CORPUS / f"corpus_full_a_{a.page}.csv"
    out = a.out or Path("/tmp") / f"big_{a.page}_{a.launches}.csv"
    info = build(source, out, a.launches, a.page)
    print(f"{info['out']}: {info['launches']} launches ({info['page']} page, {info['columns']} columns, "
          f"from {info['source_launches']} real ones), {info['bytes'] / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
