"""The corpus's files: which captures exist, in which export formats, and the truth for their launches.

Layout of a corpus directory (``tests/fixtures/corpus/h100``)::

    truth.json                         one entry per profiled launch, in capture order
    corpus_<collection>[_<part>]_{raw,details}.csv, corpus_<...>.ncu-rep.xz, corpus_<...>_index.json

A collection (``full``: ncu --set full; ``targeted``: gemmlab profile's default metrics) may be split
into parts (a long capture runs as several ncu commands); the parts in name order hold the launches in
truth order. ``.ncu-rep`` files are stored xz-compressed and unpacked to a temporary directory.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

FORMATS = ("raw", "details", "ncu-rep")
COLLECTIONS = ("full", "targeted")


@dataclass(frozen=True)
class Capture:
    collection: str
    part: str  # "" when the collection is one capture
    directory: Path

    @property
    def stem(self) -> str:
        return f"corpus_{self.collection}" + (f"_{self.part}" if self.part else "")

    def index(self) -> list[dict]:
        return json.loads((self.directory / f"{self.stem}_index.json").read_text())

    def path(self, fmt: str, unpack_dir: Path | None = None) -> Path:
        if fmt == "raw":
            return self.directory / f"{self.stem}_raw.csv"
        if fmt == "details":
            return self.directory / f"{self.stem}_details.csv"
        if fmt != "ncu-rep":
            raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
        packed = self.directory / f"{self.stem}.ncu-rep.xz"
        # one folder per corpus: every corpus has a corpus_targeted, and a stale unpacked file of another
        # corpus under the same name would be read instead
        folder = (unpack_dir or Path(tempfile.gettempdir())) / self.directory.name
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{self.stem}.ncu-rep"
        if not target.exists() or target.stat().st_mtime < packed.stat().st_mtime:
            tmp = target.with_suffix(".part")
            with lzma.open(packed) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            tmp.replace(target)
        return target


def held_out(case: str) -> bool:
    """Whether a case of the grown corpus is kept out of all tuning: one case in three, by a hash of its
    name, fixed before any of them was captured (so no choice of ours decides which kernels test us)."""
    return hashlib.sha256(case.encode()).digest()[0] % 3 == 0


def truth(directory: Path) -> list[dict]:
    return json.loads((directory / "truth.json").read_text())["kernels"]


def captures(directory: Path, collection: str) -> list[Capture]:
    parts = sorted(p.name[len(f"corpus_{collection}"):-len("_index.json")].lstrip("_")
                   for p in directory.glob(f"corpus_{collection}*_index.json"))
    return [Capture(collection, part, directory) for part in parts]


def entries_for(directory: Path, collection: str) -> Iterator[tuple[Capture, list[dict]]]:
    """Each capture of the collection with the truth entries of its launches (checked by case name)."""
    all_truth = truth(directory)
    at = 0
    for cap in captures(directory, collection):
        idx = cap.index()
        mine = all_truth[at:at + len(idx)]
        for i, (x, t) in enumerate(zip(idx, mine)):
            if x["case"] != t["case"]:
                raise ValueError(f"{cap.stem} launch {i}: case {x['case']!r} but truth has {t['case']!r}")
        at += len(idx)
        yield cap, mine
    if at != len(all_truth):
        raise ValueError(f"{collection}: {at} launches captured, truth has {len(all_truth)}")
