"""The overview of a whole-program capture: launches grouped, ranked by GPU time, and where the time goes.

A model step profiled end to end gives hundreds of launches, many of them the same kernel with the same
launch shape. ``build(launches, diagnoses)`` groups them without averaging anything:

* a **group** is every launch of one kernel with one grid and one block, the kernel named by its short
  identity (``kernel_names.identity``: the op or functor, ``elementwise: add``), so two functors of one
  template never share a group and one functor with one launch shape always does;
* each launch keeps its own diagnosis; the group's card is that of its **longest launch** (the
  representative), and the group says how many of its launches agree on that primary category;
* groups are ranked by **total GPU time** (the sum of ``gpu__time_duration.sum`` over their launches);
* **a fix could win** = the sum over the group's launches of each launch's time × its *own* primary
  finding's ``impact`` (the estimated fraction of that launch's time recoverable); launches without an
  estimate add nothing and the group says how many had one (``None`` when none had);
* the **category breakdown** sums each launch's time under its own primary category, split by whether
  that finding is at the unit's limit.

Pure: no I/O, linear in the number of launches (one dict pass, then a sort of the groups).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from gemmlab.analysis.evidence import Diagnosis, Finding, _num
from gemmlab.analysis.kernel_names import identity
from gemmlab.profile import command as cmd
from gemmlab.profile import evidence_command
from gemmlab.profile import metrics as M
from gemmlab.profile.ncu_rep import split_ncu_command
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
    name: str  # bare function name (the representative's)
    demangled: str  # the representative's demangled signature
    grid: Dim3
    block: Dim3
    launch_ids: tuple[int, ...]  # file order
    time_ns: Optional[float]  # sum over the launches that have a duration; None when none has
    representative: Diagnosis  # the longest launch's diagnosis (the first launch when none is timed)
    agree: int  # launches whose primary category is the representative's
    categories: tuple[tuple[str, int], ...]  # (primary category, launches), most launches first
    share: Optional[float]  # of the program's GPU time
    fix_ns: Optional[float]  # Σ over the launches of its time × its own primary's impact (None: no estimate)
    fix_share: Optional[float]  # fix_ns as a share of the program's GPU time
    identity: str = ""  # the short identity the group is keyed by (kernel_names.identity)
    estimated: int = 0  # launches whose time and primary impact are both known (they make fix_ns)
    variants: int = 1  # distinct demangled signatures among the launches

    @property
    def launches(self) -> int:
        return len(self.launch_ids)

    @property
    def label(self) -> str:
        """What tables and cards call the kernel: its short identity."""
        return self.identity or self.name or self.demangled

    @property
    def disagree(self) -> bool:
        return self.agree < self.launches

    def fix_basis(self) -> str:
        """How "a fix could win" was summed, when not every launch gave an estimate ("" otherwise)."""
        if self.fix_ns is None or self.estimated >= self.launches:
            return ""
        return (f"the sum over the {self.estimated} of {self.launches} launches whose primary has an "
                "estimate; the others add nothing")

    @property
    def primary(self) -> Finding:
        return self.representative.primary

    def agreement(self) -> str:
        """``"4 of 4 launches: dram_bound"``; the other categories follow when the launches disagree."""
        cat = self.primary.category.value
        text = f"{self.agree} of {self.launches} launch{'es' if self.launches > 1 else ''}: {cat}"
        others = [f"{n} {c}" for c, n in self.categories if c != cat]
        return text + (f" ({', '.join(others)})" if others else "")

    def disagreement(self) -> str:
        """``"its launches disagree on the primary: 3 dram_bound, 1 l2_bound"`` ("" when they agree)."""
        if not self.disagree:
            return ""
        return "its launches disagree on the primary: " + ", ".join(f"{n} {c}" for c, n in self.categories)

    def to_dict(self) -> dict[str, Any]:
        p = self.primary
        return {
            "rank": self.rank,
            "identity": self.label,
            "name": self.name,
            "demangled": self.demangled,
            "demangled_variants": self.variants,
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
            "fix_estimated_launches": self.estimated,
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


NVTX_COLUMN = "thread Domain:Push/Pop_Range"  # how ncu's CSV pages head the launching thread's NVTX state
_QUOTED = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class Capture:
    """What the capture covered: the NVTX range it was filtered to, and who launched the kernels.

    ``nvtx_include``: the ``--nvtx-include`` filters of the recorded ncu command (an .ncu-rep's, e.g.
    from ``gemmlab profile --range step``). ``threads``: the host threads that launched the kernels,
    from the thread id ncu writes before each launch's NVTX state in its CSV pages (the raw page keeps
    it; captures without ``--nvtx``, and .ncu-rep files read through ncu_report, have none: None).
    ``ranges``: the outermost push/pop range each launch ran in, where the export says."""

    launches: int
    nvtx_include: tuple[str, ...] = ()
    nvtx_scope: Optional[str] = None
    threads: Optional[tuple[int, ...]] = None
    processes: tuple[str, ...] = ()
    ranges: tuple[str, ...] = ()  # distinct outermost ranges, first seen first
    common_range: Optional[str] = None  # the outermost range every launch ran in, if one
    nvtx: bool = False  # the capture recorded NVTX state (ncu --nvtx)

    @property
    def known(self) -> bool:
        return bool(self.nvtx or self.nvtx_include or self.threads is not None or self.common_range)

    def line(self) -> str:
        """One sentence: the range, the launches in it, the threads that launched them ("" when the export
        says nothing about ranges or threads)."""
        if not self.known:
            return ""
        n = f"{self.launches} launch{'es' if self.launches != 1 else ''}"
        if self.nvtx_include:
            names = ", ".join(r[:-1] if r.endswith("/") else r for r in self.nvtx_include)
            scope = f", {self.nvtx_scope} scope" if self.nvtx_scope else ""
            head = f"NVTX range {names} (ncu --nvtx-include {' '.join(self.nvtx_include)}{scope}): {n} in it"
        elif self.common_range:
            head = f"NVTX range {self.common_range}: all {n} ran inside it"
        else:
            head = f"{n} captured"
        procs = f" of process {', '.join(self.processes)}" if self.processes else ""
        if self.nvtx_scope == "process":
            # with process-scoped ranges ncu writes the process's id where it writes a thread's otherwise,
            # and the range holds the launches of every thread (autograd's backward thread among them)
            who = (f"; the range is process-wide (--nvtx-push-pop-scope process): it holds the launches of every "
                   f"thread{procs}, and the export does not say which thread launched each")
        elif self.threads is None:
            unknown = ("the launching host threads are not known (only ncu's raw CSV page of a capture made with "
                       "--nvtx names them)")
            who = f", launched by{procs[3:]}; {unknown}" if procs else f"; {unknown}"
        else:
            t = len(self.threads)
            ids = ", ".join(str(i) for i in self.threads[:8]) + (" …" if t > 8 else "")
            who = f", under the NVTX stack of {t} host thread{'s' if t != 1 else ''} (TID{'s' if t != 1 else ''} {ids}){procs}"
            if t == 1:
                # the scope is not in a CSV page: with process scope this id is the process's, and the range
                # covers every thread; with thread scope only this thread's launches are in it
                who += (" (if the capture used --nvtx-push-pop-scope process, that id is the process's and the "
                        "range covers all its threads)")
        return head + who + "."

    def to_dict(self) -> dict[str, Any]:
        return {"launches": self.launches, "nvtx_include": list(self.nvtx_include), "nvtx_scope": self.nvtx_scope,
                "nvtx_range": self.common_range, "threads": None if self.threads is None else len(self.threads),
                "thread_ids": None if self.threads is None else list(self.threads), "processes": list(self.processes),
                "summary": self.line() or None}


def _nvtx_state(launch: KernelLaunch) -> Optional[tuple[Optional[int], list[str]]]:
    """(thread id, push/pop ranges outermost first) from a CSV page's NVTX column; None without one."""
    m = next((v for key, v in launch.metrics.items() if key.startswith(NVTX_COLUMN)), None)
    if m is None:
        return None
    text = str(m.value).strip()
    tid = re.match(r"(\d+)\b", text)
    ranges = []
    for q in _QUOTED.findall(text):
        fields = q.split(":")
        if len(fields) >= 8:  # Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg
            ranges.append(":".join(fields[1:len(fields) - 6]))
    return (int(tid.group(1)) if tid else None), ranges


def capture(launches: Sequence[KernelLaunch]) -> Capture:
    """What ``launches`` (one capture, every launch of it) say about their range and threads."""
    nvtx: tuple[str, ...] = ()
    scope = None
    nvtx_on = False
    line = next((k.command_line for k in launches if k.command_line), "")
    if line:
        words, _ = split_ncu_command(line)
        nvtx = tuple(evidence_command.option_values(words, "--nvtx-include"))
        scope = next(iter(evidence_command.option_values(words, "--nvtx-push-pop-scope")), None)
        nvtx_on = "--nvtx" in words or bool(nvtx)
    states = [_nvtx_state(k) for k in launches]
    threads: Optional[tuple[int, ...]] = None
    firsts: list[str] = []
    common = None
    if launches and all(s is not None for s in states):
        tids = [s[0] for s in states]  # type: ignore[index]
        if all(t is not None for t in tids):
            threads = tuple(dict.fromkeys(sorted(tids)))  # type: ignore[arg-type]
        outer = [s[1][0] if s[1] else "" for s in states]  # type: ignore[index]
        firsts = list(dict.fromkeys(o for o in outer if o))
        common = outer[0] if outer and outer[0] and all(o == outer[0] for o in outer) else None
    procs = tuple(dict.fromkeys(k.process for k in launches if k.process))
    return Capture(len(launches), nvtx, scope, threads, procs, tuple(firsts), common,
                   nvtx_on or any(s is not None for s in states))


@dataclass(frozen=True)
class Overview:
    groups: tuple[Group, ...]  # ranked by total GPU time, most first
    categories: tuple[CategoryTime, ...]  # ranked by time
    launches: int
    timed: int  # launches with a duration
    total_ns: float  # the program's GPU time: the sum over the timed launches
    capture: Optional[Capture] = None

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
            "capture": self.capture.to_dict() if self.capture is not None else None,
            "timed_launches": self.timed,
            "groups": len(self.groups),
            "total_time_ns": _num(self.total_ns),
            "grouped_by": ["identity", "grid", "block"],
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
    """(short identity, grid, block): two functors never share a group, one functor with one shape does."""
    return (identity(launch.demangled, launch.name), launch.grid, launch.block)


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
        # each launch's own estimate: its time × its own primary's impact (the representative's verdict
        # never stands in for the others')
        wins = [durations[i] * diagnoses[i].primary.impact for i in idx
                if durations[i] is not None and impact_estimated(diagnoses[i].primary)]
        fix = sum(wins) if wins else None
        cat = p.category.value
        groups.append(Group(
            rank=rank, name=launches[rep].name or launches[rep].demangled, demangled=launches[rep].demangled,
            grid=key[1], block=key[2], launch_ids=tuple(launches[i].id for i in idx), time_ns=time_ns,
            representative=d, agree=counts[cat],
            categories=tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0] != cat, kv[0]))),
            share=_share(time_ns, total), fix_ns=fix, fix_share=_share(fix, total), identity=key[0],
            estimated=len(wins), variants=len({launches[i].demangled for i in idx})))
    cats = [CategoryTime(c, lim, n, t, _share(t, total)) for (c, lim), (n, t) in cat_time.items()]
    cats.sort(key=lambda c: (-c.time_ns, -c.launches, c.category, c.at_limit))
    return Overview(tuple(groups), tuple(cats), len(launches), timed, total, capture(launches))


def exact_commands(launches: Sequence[KernelLaunch], diagnoses: Sequence[Diagnosis],
                   capture_launches: Optional[Sequence[KernelLaunch]] = None) -> list[Diagnosis]:
    """The diagnoses with collect commands that reach exactly their own launch: the kernel filter and the
    ``--launch-skip`` counted over ``capture_launches`` (every launch of the capture; ``launches`` when
    None) with that same filter (``evidence_command.selection``). Other fields are kept."""
    every = list(capture_launches) if capture_launches is not None else list(launches)
    every.sort(key=lambda k: k.id)
    where = {id(k): i for i, k in enumerate(every)}
    by_id = {k.id: i for i, k in enumerate(every)}
    sels = evidence_command.selections(every)
    out = []
    for k, d in zip(launches, diagnoses):
        i = where.get(id(k), by_id.get(k.id))
        if i is None:
            out.append(d)
            continue
        sel = sels[i]
        argv, line, note = evidence_command.retarget(d.collect_argv, d.collect_profile, d.collect_note, sel)
        out.append(dataclasses.replace(d, collect_argv=argv, collect_command=cmd.render(argv), collect_profile=line,
                                       collect_note=note))
    return out


def dim3_text(d: Dim3) -> str:
    """``(256, 1, 1)`` → ``256``; ``(1, 528, 1)`` → ``1×528``; None → ``?``."""
    if d is None:
        return "?"
    x, y, z = d
    return f"{x}" if y == z == 1 else f"{x}×{y}" if z == 1 else f"{x}×{y}×{z}"
