"""The overview of a whole-program capture: launches grouped, ranked by GPU time, and where the time goes.

A model step profiled end to end gives hundreds of launches, many of them the same kernel with the same
launch shape. ``build(launches, diagnoses)`` groups them without averaging anything:

* a **group** is every launch of one kernel (demangled name, else bare name) with one grid and one block;
* each launch keeps its own diagnosis; the group's diagnosis is that of its **longest launch** (the
  representative), and the group says how many of its launches agree on that primary category;
* groups are ranked by **total GPU time** (the sum of ``gpu__time_duration.sum`` over their launches);
* **a fix could win** = the group's time × the representative primary finding's ``impact`` (the estimated
  fraction of the kernel's time recoverable; ``None`` when the analyzer did not estimate it);
* the **category breakdown** sums each launch's time under its own primary category, split by whether
  that finding is at the unit's limit.

Pure: no I/O, linear in the number of launches (one dict pass, then a sort of the groups).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from gemmlab.analysis.evidence import Diagnosis, Finding, _num
from gemmlab.profile import metrics as M
from gemmlab.profile.records import KernelLaunch

DEFAULT_TOP = 10  # groups that get a full diagnosis card unless --top says otherwise

Dim3 = Optional[tuple[int, int, int]]


def impact_estimated(f: Finding) -> bool:
    """False when the analyzer gave no estimate (an inconclusive verdict's impact of 0 means "unknown")."""
    return not (f.impact <= 0 and "not estimated" in f.impact_basis)


def _share(part: Optional[float], whole: float) -> Optional[float]:
    return part / whole if part is not None and whole > 0 else None


@dataclass(frozen=True)
class Group:
    """Every launch of one kernel with one launch shape."""

    rank: int  # 1 = most GPU time
    name: str  # bare name (for the table)
    demangled: str
    grid: Dim3
    block: Dim3
    launch_ids: tuple[int, ...]  # file order
    time_ns: Optional[float]  # sum over the launches that have a duration; None when none has
    representative: Diagnosis  # the longest launch's diagnosis (the first launch when none is timed)
    agree: int  # launches whose primary category is the representative's
    categories: tuple[tuple[str, int], ...]  # (primary category, launches), most launches first
    share: Optional[float]  # of the program's GPU time
    fix_ns: Optional[float]  # time_ns × the representative's primary impact
    fix_share: Optional[float]  # fix_ns as a share of the program's GPU time

    @property
    def launches(self) -> int:
        return len(self.launch_ids)

    @property
    def primary(self) -> Finding:
        return self.representative.primary

    def agreement(self) -> str:
        """``"4 of 4 launches: dram_bound"``; the other categories follow when the launches disagree."""
        cat = self.primary.category.value
        text = f"{self.agree} of {self.launches} launch{'es' if self.launches > 1 else ''}: {cat}"
        others = [f"{n} {c}" for c, n in self.categories if c != cat]
        return text + (f" ({', '.join(others)})" if others else "")

    def to_dict(self) -> dict[str, Any]:
        p = self.primary
        return {
            "rank": self.rank,
            "name": self.name,
            "demangled": self.demangled,
            "grid": list(self.grid) if self.grid else None,
            "block": list(self.block) if self.block else None,
            "launches": self.launches,
            "launch_ids": list(self.launch_ids),
            "representative_id": self.representative.kernel_id,
            "time_ns": _num(self.time_ns),
            "share": _num(self.share),
            "primary_category": p.category.value,
            "confidence": p.confidence.value,
            "at_limit": p.at_limit,
            "impact": _num(round(p.impact, 4)) if impact_estimated(p) else None,
            "agree": self.agree,
            "categories": {c: n for c, n in self.categories},
            "fix_could_win_ns": _num(self.fix_ns),
            "fix_could_win_share": _num(self.fix_share),
        }


@dataclass(frozen=True)
class CategoryTime:
    """The GPU time of the launches whose primary finding has one category (at its limit or not)."""

    category: str
    at_limit: bool
    launches: int
    time_ns: float
    share: Optional[float]

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "at_limit": self.at_limit, "launches": self.launches,
                "time_ns": _num(self.time_ns), "share": _num(self.share)}


@dataclass(frozen=True)
class Overview:
    groups: tuple[Group, ...]  # ranked by total GPU time, most first
    categories: tuple[CategoryTime, ...]  # ranked by time
    launches: int
    timed: int  # launches with a duration
    total_ns: float  # the program's GPU time: the sum over the timed launches

    def top(self, n: int) -> tuple[Group, ...]:
        """The first ``n`` groups; ``n <= 0`` means all of them."""
        return self.groups if n <= 0 else self.groups[:n]

    def headline(self) -> str:
        """One sentence on what was captured."""
        g = len(self.groups)
        s = (f"{self.launches} launch{'es' if self.launches != 1 else ''} in {g} group{'s' if g != 1 else ''} "
             "(same kernel, grid and block)")
        if self.timed == 0:
            return s + "; no launch has a duration (gpu__time_duration.sum), so groups keep file order."
        s += f", {fmt_time(self.total_ns)} of GPU time"
        if self.timed < self.launches:
            s += f" ({self.launches - self.timed} launch(es) without a duration are not counted)"
        return s + "."

    def where_time_goes(self, n: int = 2) -> str:
        """``"61% of GPU time is dram_bound work at its limit; 22% is tensor_bound."``"""
        parts = []
        for c in self.categories[:n]:
            if c.share is None:
                continue
            of = "of GPU time " if not parts else ""
            if c.category == "inconclusive":
                parts.append(f"{pct(c.share)} {of}is in launches with an inconclusive diagnosis")
                continue
            limit = " at its limit" if c.at_limit else " below its limit" if _both(self.categories, c.category) else ""
            parts.append(f"{pct(c.share)} {of}is {c.category} work{limit}")
        return ("; ".join(parts) + ".") if parts else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "launches": self.launches,
            "timed_launches": self.timed,
            "groups": len(self.groups),
            "total_time_ns": _num(self.total_ns),
            "grouped_by": ["kernel", "grid", "block"],
            "ranked_by": "total_time_ns",
            "summary": " ".join(s for s in (self.headline(), self.where_time_goes()) if s),
            "by_category": [c.to_dict() for c in self.categories],
            "kernel_groups": [g.to_dict() for g in self.groups],
        }


def _both(cats: Sequence[CategoryTime], category: str) -> bool:
    return sum(1 for c in cats if c.category == category) > 1


def pct(share: Optional[float]) -> str:
    return "–" if share is None else f"{100 * share:.1f}%"


def fmt_time(ns: Optional[float]) -> str:
    """Three significant digits: ``1234567`` → ``1.23 ms``, ``177e6`` → ``177 ms``; None → ``–``."""
    if ns is None:
        return "–"
    for scale, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(ns) >= scale:
            return f"{ns / scale:.3g} {unit}" if ns / scale < 100 else f"{ns / scale:.0f} {unit}"
    return f"{ns:.0f} ns"


def group_key(launch: KernelLaunch) -> tuple[str, Dim3, Dim3]:
    return (launch.demangled or launch.name, launch.grid, launch.block)


def build(launches: Sequence[KernelLaunch], diagnoses: Sequence[Diagnosis]) -> Overview:
    """Group ``launches`` (with their diagnoses, in the same order) and rank the groups by GPU time."""
    if len(launches) != len(diagnoses):
        raise ValueError(f"{len(launches)} launches but {len(diagnoses)} diagnoses")
    members: dict[tuple, list[int]] = {}  # key → indices into launches, file order
    durations: list[Optional[float]] = []
    cat_time: dict[tuple[str, bool], list[float]] = {}  # (category, at_limit) → [launches, time]
    for i, (k, d) in enumerate(zip(launches, diagnoses)):
        if k.id != d.kernel_id:
            raise ValueError(f"launch #{k.id} is paired with the diagnosis of #{d.kernel_id}")
        members.setdefault(group_key(k), []).append(i)
        t = M.value(k, "duration")
        durations.append(t)
        acc = cat_time.setdefault((d.primary.category.value, d.primary.at_limit), [0, 0.0])
        acc[0] += 1
        acc[1] += t or 0.0
    timed = sum(1 for t in durations if t is not None)
    total = sum(t for t in durations if t is not None)

    raw = []
    for first, (key, idx) in enumerate(members.items()):
        times = [durations[i] for i in idx if durations[i] is not None]
        time_ns = sum(times) if times else None
        rep = max(idx, key=lambda i: (durations[i] if durations[i] is not None else -1.0, -i))
        counts: dict[str, int] = {}
        for i in idx:
            c = diagnoses[i].primary.category.value
            counts[c] = counts.get(c, 0) + 1
        raw.append((time_ns, first, key, idx, rep, counts))
    raw.sort(key=lambda r: (-(r[0] or 0.0), r[1]))  # most time first; ties (and untimed) in file order

    groups = []
    for rank, (time_ns, _, key, idx, rep, counts) in enumerate(raw, 1):
        d = diagnoses[rep]
        p = d.primary
        fix = time_ns * p.impact if time_ns is not None and impact_estimated(p) else None
        cat = p.category.value
        groups.append(Group(
            rank=rank, name=launches[rep].name or launches[rep].demangled, demangled=launches[rep].demangled,
            grid=key[1], block=key[2], launch_ids=tuple(launches[i].id for i in idx), time_ns=time_ns,
            representative=d, agree=counts[cat],
            categories=tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0] != cat, kv[0]))),
            share=_share(time_ns, total), fix_ns=fix, fix_share=_share(fix, total)))
    cats = [CategoryTime(c, lim, n, t, _share(t, total)) for (c, lim), (n, t) in cat_time.items()]
    cats.sort(key=lambda c: (-c.time_ns, -c.launches, c.category, c.at_limit))
    return Overview(tuple(groups), tuple(cats), len(launches), timed, total)


def dim3_text(d: Dim3) -> str:
    """``(256, 1, 1)`` → ``256``; ``(1, 528, 1)`` → ``1×528``; None → ``?``."""
    if d is None:
        return "?"
    x, y, z = d
    return f"{x}" if y == z == 1 else f"{x}×{y}" if z == 1 else f"{x}×{y}×{z}"
