"""Score diagnoses against a labelled corpus: accuracy, a confusion table and calibration by confidence.

A corpus entry's ``truth`` lists every defensible category (the likeliest first); a primary is correct
when it is one of them. Entries marked ``excluded`` (no single clear limit) are not scored. Pure
functions on diagnoses and truth entries: loading the captures is the caller's business.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from gemmlab.analysis.evidence import Diagnosis


@dataclass(frozen=True)
class Scored:
    case: str
    kernel: str
    truth: tuple[str, ...]
    primary: str
    confidence: str

    @property
    def correct(self) -> bool:
        return self.primary in self.truth


@dataclass(frozen=True)
class Score:
    items: tuple[Scored, ...]

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def correct(self) -> int:
        return sum(s.correct for s in self.items)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0

    def by_confidence(self) -> dict[str, tuple[int, int]]:
        """confidence → (correct, answered)."""
        out: dict[str, tuple[int, int]] = {}
        for level in ("high", "medium", "low"):
            xs = [s for s in self.items if s.confidence == level]
            out[level] = (sum(s.correct for s in xs), len(xs))
        return out

    def confusion(self) -> Counter:
        """(expected, answered) → count, the expected being the truth's first category (or the answer
        itself when the answer is another accepted one)."""
        return Counter((s.primary if s.correct else s.truth[0], s.primary) for s in self.items)

    def wrong(self) -> list[Scored]:
        return [s for s in self.items if not s.correct]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scored": self.total, "correct": self.correct, "accuracy": self.accuracy,
            "by_confidence": {k: {"correct": c, "answered": n} for k, (c, n) in self.by_confidence().items()},
            "wrong": [{"case": s.case, "kernel": s.kernel, "truth": list(s.truth), "primary": s.primary,
                       "confidence": s.confidence} for s in self.wrong()],
        }


def score(diagnoses: Sequence[Diagnosis], entries: Sequence[dict]) -> Score:
    """Pair diagnoses with truth entries in order (one entry per profiled launch, as the capture's
    index lists them) and score the entries that have a truth."""
    if len(diagnoses) != len(entries):
        raise ValueError(f"{len(diagnoses)} diagnoses for {len(entries)} corpus entries: the capture and "
                         f"its truth do not describe the same launches")
    items = []
    for d, e in zip(diagnoses, entries):
        if "truth" not in e:
            continue
        items.append(Scored(e["case"], e.get("kernel", d.name), tuple(e["truth"]), d.primary.category.value,
                            d.primary.confidence.value))
    return Score(tuple(items))
