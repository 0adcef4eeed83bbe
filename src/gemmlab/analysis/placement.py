"""Where a user's kernel sits on gemmlab's ladder, and what the next rung changes.

The comparison is by % of cuBLAS measured at the same shape, dtype and GPU (each run times cuBLAS
in its own process, so the ratio cancels most of the clock and power state a bare time would
carry). Between two rungs means faster than the one and slower than the other; a rung within noise
of the kernel (``bench.stats.effect`` on the two runs' samples scaled by their own cuBLAS median is
not available across runs, so the ratios are compared with ``SAME_BAND``) is named as level with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from gemmlab.bench.stats import MIN_EFFECT

# Two runs' % of cuBLAS that differ by less than the project's minimum effect are level: clock and
# thermal drift between processes moves a ratio by 1-2% (bench.stats.MIN_EFFECT says why 3%).
SAME_BAND = MIN_EFFECT


@dataclass(frozen=True)
class Rung:
    name: str
    pct: float  # % of cuBLAS at the shape
    summary: str = ""


@dataclass(frozen=True)
class Placement:
    pct: float
    below: Optional[Rung]  # the fastest rung slower than the kernel
    above: Optional[Rung]  # the slowest rung faster than the kernel
    level: tuple[Rung, ...]  # rungs within SAME_BAND of it
    source: str  # where the ladder's numbers came from

    @property
    def text(self) -> str:
        nxt = self.above  # the next rung is the slowest one faster than the kernel
        tail = f"; the next rung, {nxt.name}, changes: {nxt.summary}" if nxt is not None and nxt.summary else ""
        return f"{self.pct:.0f}% of cuBLAS: {self.where}{tail}"

    @property
    def where(self) -> str:
        """Where it sits, in a few words (``between tiled (14%) and vectorized (48%)``)."""
        if self.level:
            where = "level with " + " and ".join(f"{r.name} ({r.pct:.0f}%)" for r in self.level)
        elif self.below and self.above:
            where = f"between {self.below.name} ({self.below.pct:.0f}%) and {self.above.name} ({self.above.pct:.0f}%)"
        elif self.above:
            where = f"below the first rung, {self.above.name} ({self.above.pct:.0f}%)"
        elif self.below:
            where = f"above every rung; the best, {self.below.name}, is at {self.below.pct:.0f}%"
        else:
            where = "no rung to compare with"
        return where

    def to_dict(self) -> dict:
        def r(x: Optional[Rung]) -> Optional[dict]:
            return None if x is None else {"name": x.name, "pct_of_cublas": x.pct, "summary": x.summary}

        return {"pct_of_cublas": self.pct, "below": r(self.below), "above": r(self.above),
                "level": [r(x) for x in self.level], "source": self.source, "where": self.where, "text": self.text}


def place(pct: float, rungs: Sequence[Rung], source: str) -> Placement:
    """The kernel at ``pct`` % of cuBLAS among ``rungs`` (ladder order does not matter: by speed)."""
    level = tuple(r for r in rungs if abs(r.pct - pct) <= SAME_BAND * max(r.pct, pct))
    slower = [r for r in rungs if r.pct < pct and r not in level]
    faster = [r for r in rungs if r.pct > pct and r not in level]
    below = max(slower, key=lambda r: r.pct) if slower else None
    above = min(faster, key=lambda r: r.pct) if faster else None
    return Placement(pct, below, above, level, source)


def rungs_of(ladder: Any) -> list[Rung]:
    """The rungs of a ladder ``RunRecord`` with their % of cuBLAS (rows that failed their check or
    have no cuBLAS to compare with are left out)."""
    out = []
    for row in ladder.rows:
        if row.reference or row.correct is False:
            continue
        pct = ladder.pct_of_reference(row)
        if pct is not None:
            out.append(Rung(row.name, pct, str(row.info.get("summary") or "")))
    return out
