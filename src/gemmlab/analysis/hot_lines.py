"""Hot source lines: which lines of a kernel hold its warp samples, and the evidence of its diagnosis.

``gemmlab.profile.source_lines`` sums an ``.ncu-rep``'s per-instruction counters into source lines;
this ranks them. A line's share is its part of the kernel's warp-state samples (the sampler records
a warp's PC and state at a fixed interval of cycles, so samples are proportional to where warps spend
their time),
with its top stall reasons (share of that line's samples) and its busiest SASS instructions. Beside
the ranking, a *hotspot* per measure names the line holding most of it: excess global sectors
(uncoalesced accesses), excess shared wavefronts (bank conflicts), barrier samples... and
``finding_line`` turns the hotspot that carries a diagnosis category's evidence into a sentence:
"94% of the excess global sectors come from line 23, ``B[k * N + col]``".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from gemmlab.analysis.evidence import Diagnosis, Finding
from gemmlab.analysis.rules.stalls import ELIGIBLE_REASONS, LATENCY_REASONS
from gemmlab.analysis.vocabulary import Category as C
from gemmlab.profile.source_lines import Instruction, LaunchLines, SourceLine

DEFAULT_TOP = 5
TOP_STALLS = 3
TOP_SASS = 3

# A line is named as *the* source of a measure only when it holds at least a fifth of it: below that
# the measure is spread over five or more lines and no single line is where the fix goes (the table
# lists them all).
MIN_SHARE = 0.2
# Sample-based shares are estimates: the sampler takes one warp per SM sub-partition per interval, so
# a line's share from n samples is uncertain by about 1/√n of itself; below 50 samples (±14%) a
# sentence would name noise.
MIN_SAMPLES = 50

# Readable names of the sampler's reasons (ncu's Source page calls them "Stall <Name>"); what each
# waits on is in ``rules.stalls.LATENCY_REASONS`` (``meaning``).
STALL_LABELS = {
    "barrier": "barrier",
    "branch_resolving": "branch resolving",
    "dispatch_stall": "dispatch stall",
    "drain": "drain",
    "gmma": "GMMA",
    "imc_miss": "constant-cache miss",
    "lg_throttle": "LG throttle",
    "long_scoreboard": "long scoreboard",
    "math_pipe_throttle": "math pipe throttle",
    "membar": "memory barrier",
    "mio_throttle": "MIO throttle",
    "misc": "misc",
    "no_instruction": "no instruction",
    "not_selected": "not selected",
    "selected": "selected",
    "short_scoreboard": "short scoreboard",
    "sleeping": "sleeping",
    "tex_throttle": "TEX throttle",
    "wait": "wait",
    "warpgroup_arrive": "warpgroup arrive",
}
MEANINGS = {
    **LATENCY_REASONS,
    "barrier": "waiting at a barrier for the other warps (__syncthreads(), bar.sync)",
    "selected": "issuing: the warp was picked this cycle (not a stall)",
    "not_selected": "ready, but another warp issued (not a stall)",
    "warpgroup_arrive": "waiting for warpgroup MMA (wgmma) results",
    "gmma": "waiting for warpgroup MMA (wgmma) results",
    "misc": "miscellaneous hardware reasons",
}


# ncu samples a warp in wgmma.wait_group (SASS WARPGROUP.DEPBAR) with the barrier reason, though it
# waits for its own warpgroup's MMAs, not for other warps
WGMMA_WAIT_MEANING = "waiting in wgmma.wait_group for its warpgroup's own MMAs (not for other warps)"


def stall_label(reason: str) -> str:
    return STALL_LABELS.get(reason, reason.replace("_", " "))


def _is_load(i: Instruction) -> bool:
    return i.opcode.startswith("LD")


def _is_store(i: Instruction) -> bool:
    return i.opcode.startswith("ST")


def _is_local(i: Instruction) -> bool:
    return i.opcode.startswith(("LDL", "STL"))


def _is_atomic(i: Instruction) -> bool:
    return i.opcode.startswith(("ATOM", "RED"))


def _is_wgmma_wait(i: Instruction) -> bool:
    return i.opcode.startswith("WARPGROUP.DEPBAR")


def _of(pick: Callable[[Instruction], bool], value: Callable[[Instruction], int]) -> Callable[[SourceLine], int]:
    return lambda ln: sum(value(i) for i in ln.instructions if pick(i))


@dataclass(frozen=True)
class Measure:
    """Something a hotspot can be named for: what it counts (for a sentence), its amount on a line."""

    what: str
    value: Callable[[SourceLine], int]
    sampled: bool = False  # a sampled estimate: MIN_SAMPLES applies
    verb: str = "are on"  # "94% of <what> <verb> line 23"


MEASURES: dict[str, Measure] = {
    "samples": Measure("the warp samples", lambda ln: ln.samples, sampled=True),
    "executed": Measure("the executed instructions", lambda ln: ln.executed),
    "global_sectors": Measure("the global-memory sectors", lambda ln: ln.global_sectors, verb="come from"),
    "global_excess": Measure("the excess global sectors", lambda ln: ln.global_excess, verb="come from"),
    "global_excess_loads": Measure("the excess global sectors of loads", _of(_is_load, lambda i: i.global_excess),
                                   verb="come from"),
    "global_excess_stores": Measure("the excess global sectors of stores",
                                    _of(_is_store, lambda i: i.global_excess), verb="come from"),
    "shared_wavefronts": Measure("the shared-memory wavefronts", lambda ln: ln.shared_wavefronts, verb="come from"),
    "shared_excess": Measure("the excess shared wavefronts", lambda ln: ln.shared_excess, verb="come from"),
    "idle_lanes": Measure("the idle thread slots (32 per instruction less its active threads)",
                          lambda ln: max(0, 32 * ln.executed - ln.thread_executed) if ln.thread_executed else 0),
    "barrier": Measure("the barrier stall samples", lambda ln: ln.stalls.get("barrier", 0), sampled=True),
    # wgmma.wait_group (SASS WARPGROUP.DEPBAR): a warp waiting for its own warpgroup MMAs is sampled
    # with the barrier reason too, though no other warp is involved
    "wgmma_wait": Measure("the barrier stall samples on wgmma.wait_group (WARPGROUP.DEPBAR)",
                          _of(_is_wgmma_wait, lambda i: i.stalls.get("barrier", 0)), sampled=True),
    "local": Measure("the local-memory instructions' samples", _of(_is_local, lambda i: i.samples), sampled=True),
    "atomic": Measure("the atomic instructions' samples", _of(_is_atomic, lambda i: i.samples), sampled=True),
}

# Which measure carries each category's evidence (categories about the launch's shape, occupancy or
# missing data have no line).
CATEGORY_MEASURE: dict[C, str] = {
    C.UNCOALESCED_GLOBAL_LOADS: "global_excess_loads",
    C.UNCOALESCED_GLOBAL_STORES: "global_excess_stores",
    C.SHARED_BANK_CONFLICTS: "shared_excess",
    C.SHARED_MEMORY_THROUGHPUT: "shared_wavefronts",
    C.L1_LSU_BOUND: "global_sectors",
    C.L2_BOUND: "global_sectors",
    C.DRAM_BOUND: "global_sectors",
    C.LOCAL_MEMORY: "local",
    C.ATOMIC_CONTENTION: "atomic",
    C.WARP_DIVERGENCE: "idle_lanes",
    C.BARRIER_STALLS: "barrier",
    C.LATENCY_BOUND: "samples",
    C.TENSOR_BOUND: "samples",
    C.COMPUTE_BOUND: "executed",
    C.INSTRUCTION_OVERHEAD: "executed",
}


@dataclass
class StallShare:
    reason: str  # ncu's name, as gemmlab spells it (``long_scoreboard``)
    samples: int
    share: float  # of the line's samples
    wgmma_wait: bool = False  # barrier samples mostly on WARPGROUP.DEPBAR (``WGMMA_WAIT_MEANING``)

    @property
    def label(self) -> str:
        return stall_label(self.reason) + (" (wgmma wait)" if self.reason == "barrier" and self.wgmma_wait else "")

    @property
    def meaning(self) -> str:
        if self.reason == "barrier" and self.wgmma_wait:
            return WGMMA_WAIT_MEANING
        return MEANINGS.get(self.reason, "")

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "label": self.label, "meaning": self.meaning,
                "samples": self.samples, "share": self.share}


@dataclass
class HotInstruction:
    pc: int
    sass: str
    samples: int
    share: float  # of the line's samples
    executed: int
    top_stall: Optional[StallShare]  # its largest reason, share of its own samples

    def to_dict(self) -> dict[str, Any]:
        return {"pc": self.pc, "pc_hex": f"0x{self.pc:x}", "sass": self.sass, "samples": self.samples,
                "share": self.share, "executed": self.executed,
                "top_stall": self.top_stall.to_dict() if self.top_stall else None}


@dataclass
class HotLine:
    rank: int
    file: str
    line: int
    text: Optional[str]
    samples: int
    share: float  # of the kernel's samples (of its instructions when ranked by executed)
    executed: int
    stalls: list[StallShare]  # every reason on the line, largest first
    instructions: list[HotInstruction]  # its busiest SASS instructions, most samples first
    global_excess: int
    shared_excess: int

    @property
    def top_stalls(self) -> list[StallShare]:
        return self.stalls[:TOP_STALLS]

    def top_stall(self, ineligible: bool = False) -> Optional[StallShare]:
        """The largest reason; with ``ineligible``, the largest that is a stall (not selected/not_selected)."""
        for s in self.stalls:
            if not ineligible or s.reason not in ELIGIBLE_REASONS:
                return s
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"rank": self.rank, "file": self.file, "line": self.line, "text": self.text,
                "source": " ".join((self.text or "").split()), "samples": self.samples, "share": self.share,
                "executed": self.executed,
                "top_stalls": [s.to_dict() for s in self.top_stalls],
                "sass": [i.to_dict() for i in self.instructions],
                "global_excess_sectors": self.global_excess, "shared_excess_wavefronts": self.shared_excess}


@dataclass
class Hotspot:
    """The line holding most of one measure, and its share of the launch's total."""

    measure: str  # a MEASURES key
    file: str
    line: int
    text: Optional[str]
    amount: int
    total: int
    share: float
    sampled: bool  # a sampled estimate (MIN_SAMPLES applies)
    second: Optional[tuple[str, int, int]] = None  # the runner-up line: (file, line, amount)

    @property
    def what(self) -> str:
        return MEASURES[self.measure].what

    @property
    def second_share(self) -> float:
        return self.second[2] / self.total if self.second is not None else 0.0

    def worth_naming(self, amount: int, share: float) -> bool:
        """Whether a line holding ``amount`` (``share``) of this measure is worth a sentence."""
        return share >= MIN_SHARE and (not self.sampled or amount >= MIN_SAMPLES)

    def to_dict(self) -> dict[str, Any]:
        second = None if self.second is None else {"file": self.second[0], "line": self.second[1],
                                                   "amount": self.second[2], "share": self.second_share}
        return {"measure": self.measure, "what": self.what, "file": self.file, "line": self.line,
                "text": self.text, "amount": self.amount, "total": self.total, "share": self.share,
                "second": second}


@dataclass
class HotLines:
    """The ranked lines of one launch (``hot_lines``)."""

    launch_id: int
    name: str
    demangled: str
    has_line_info: bool
    ranked_by: str  # "samples", or "executed" when the report has line info but no samples
    total_samples: int
    total_executed: int
    lines: list[HotLine] = field(default_factory=list)
    hotspots: dict[str, Hotspot] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # the launch's source files, most samples first
    source_origin: dict[str, str] = field(default_factory=dict)
    no_line_info: Optional[str] = None  # one line: why there are no lines and how to get them

    @property
    def global_excess(self) -> Optional[Hotspot]:
        """The line with most excess global sectors (uncoalesced accesses), if any has some."""
        return self.hotspots.get("global_excess")

    @property
    def shared_excess(self) -> Optional[Hotspot]:
        """The line with most excess shared wavefronts (bank conflicts), if any has some."""
        return self.hotspots.get("shared_excess")

    def to_dict(self) -> dict[str, Any]:
        return {
            "launch_id": self.launch_id, "name": self.name, "has_line_info": self.has_line_info,
            "ranked_by": self.ranked_by, "total_samples": self.total_samples, "total_executed": self.total_executed,
            "lines": [ln.to_dict() for ln in self.lines],
            "global_excess": self.global_excess.to_dict() if self.global_excess else None,
            "shared_excess": self.shared_excess.to_dict() if self.shared_excess else None,
            "hotspots": {k: h.to_dict() for k, h in self.hotspots.items()},
            "files": list(self.files), "source_origin": dict(self.source_origin),
            "no_line_info": self.no_line_info,
        }


NO_LINES = "the report names no source line with samples or executed instructions for this launch"


def hot_lines(launch_lines: LaunchLines, top: int = DEFAULT_TOP) -> HotLines:
    """The ``top`` lines of the launch with most samples (``top <= 0``: every line with any), each with its
    share, top stall reasons and SASS; the hotspot of every measure present; or the one-line note
    when the launch has no lines to rank."""
    ll = launch_lines
    note = ll.note or None
    ranked_by = "samples" if ll.total.samples else "executed"
    out = HotLines(launch_id=ll.id, name=ll.name, demangled=ll.demangled, has_line_info=ll.has_line_info,
                   ranked_by=ranked_by, total_samples=ll.total.samples, total_executed=ll.total.executed,
                   files=ll.files(), source_origin=dict(ll.source_origin), no_line_info=note)
    if note or not ll.lines:
        out.no_line_info = note or NO_LINES
        return out
    weight = (lambda ln: ln.samples) if ranked_by == "samples" else (lambda ln: ln.executed)
    whole = ll.total.samples if ranked_by == "samples" else ll.total.executed
    ranked = sorted((ln for ln in ll.lines if weight(ln) > 0),
                    key=lambda ln: (-weight(ln), -ln.executed, ln.file, ln.line))
    if top > 0:
        ranked = ranked[:top]
    out.lines = [_hot_line(i, ln, weight(ln) / whole if whole else 0.0) for i, ln in enumerate(ranked, 1)]
    for key in MEASURES:
        h = _hotspot(ll, key)
        if h is not None:
            out.hotspots[key] = h
    return out


def _stalls(stalls: dict[str, int], samples: int, wgmma_wait: bool = False) -> list[StallShare]:
    denom = samples or sum(stalls.values())
    found = [StallShare(r, n, n / denom if denom else 0.0, wgmma_wait=wgmma_wait and r == "barrier")
             for r, n in stalls.items() if n > 0]
    return sorted(found, key=lambda s: (-s.samples, s.reason))


def _hot_line(rank: int, ln: SourceLine, share: float) -> HotLine:
    busiest = sorted(ln.instructions, key=lambda i: (-i.samples, -i.executed, i.pc))[:TOP_SASS]
    instructions = []
    for i in busiest:
        st = _stalls(i.stalls, i.samples, wgmma_wait=_is_wgmma_wait(i))
        instructions.append(HotInstruction(i.pc, i.sass, i.samples, i.samples / ln.samples if ln.samples else 0.0,
                                           i.executed, st[0] if st else None))
    # the line's barrier samples read as wgmma waits where most of them are on WARPGROUP.DEPBAR
    waits = MEASURES["wgmma_wait"].value(ln)
    return HotLine(rank=rank, file=ln.file, line=ln.line, text=ln.text, samples=ln.samples, share=share,
                   executed=ln.executed,
                   stalls=_stalls(ln.stalls, ln.samples, wgmma_wait=2 * waits > ln.stalls.get("barrier", 0)),
                   instructions=instructions, global_excess=ln.global_excess, shared_excess=ln.shared_excess)


def _hotspot(ll: LaunchLines, key: str) -> Optional[Hotspot]:
    m = MEASURES[key]
    amounts = [(m.value(ln), ln) for ln in ll.lines]
    total = sum(a for a, _ in amounts)
    if key in ("samples", "executed"):  # what no line claims still belongs to the kernel's total
        total += sum(getattr(i, key) for i in ll.unattributed)
    amounts.sort(key=lambda p: (-p[0], p[1].file, p[1].line))
    if not amounts or amounts[0][0] <= 0 or total <= 0:
        return None
    amount, ln = amounts[0]
    second = (amounts[1][1].file, amounts[1][1].line, amounts[1][0]) if len(amounts) > 1 and amounts[1][0] > 0 else None
    return Hotspot(key, ln.file, ln.line, ln.text, amount, total, amount / total, m.sampled, second)


def _category(what: Union[C, str, Diagnosis, Finding, None]) -> Optional[C]:
    if what is None:
        return None
    if isinstance(what, Diagnosis):
        what = what.primary.category
    elif isinstance(what, Finding):
        what = what.category
    try:
        return C(str(what))
    except ValueError:
        return None


SNIPPET_CHARS = 60  # a sentence quotes this much of a line; the table and HTML show it whole


def snippet(text: Optional[str], width: int = SNIPPET_CHARS) -> str:
    """The line's code, whitespace collapsed, shortened with "…" past ``width`` characters."""
    s = " ".join((text or "").split())
    return s if len(s) <= width else s[:width - 1].rstrip() + "…"


def where(file: str, line: int, text: Optional[str], files: list[str]) -> str:
    """``line 23, `B[k * N + col]``` ; ``line 23 of util.cuh, ...`` when the kernel spans several files
    or the line's text is unknown."""
    code = snippet(text)
    place = f"line {line}" if code and len(files) <= 1 else f"line {line} of {file.rsplit('/', 1)[-1]}"
    return f"{place}, `{code}`" if code else place


def finding_line(category_or_diagnosis: Union[C, str, Diagnosis, Finding, None], hot: HotLines) -> Optional[str]:
    """A sentence tying a category (a Category or its value; a Diagnosis' primary finding's; a
    Finding's) to the line that carries its evidence; None when the category has no line (occupancy,
    tail, grid size, inconclusive, None), the launch has no lines, or no line holds MIN_SHARE of it."""
    category = _category(category_or_diagnosis)
    key = CATEGORY_MEASURE.get(category) if category is not None else None
    if key is None or hot.no_line_info:
        return None
    h = hot.hotspots.get(key)
    if h is None or not h.worth_naming(h.amount, h.share):
        return None
    sentence = f"{h.share:.0%} of {h.what} {MEASURES[key].verb} {where(h.file, h.line, h.text, hot.files)}"
    if h.second is not None and h.worth_naming(h.second[2], h.second_share):  # two lines share it
        f2, n2, _ = h.second
        other = f"line {n2}" if f2 == h.file else f"line {n2} of {f2.rsplit('/', 1)[-1]}"
        sentence += f" ({other}: another {h.second_share:.0%})"
    waits = hot.hotspots.get("wgmma_wait")
    if category == C.BARRIER_STALLS and waits is not None and h.total:
        share = waits.total / h.total  # of every barrier stall sample, not only the hot line's
        if share >= MIN_SHARE and waits.total >= MIN_SAMPLES:
            sentence += (f"; {share:.0%} of them are on wgmma.wait_group (WARPGROUP.DEPBAR): warps "
                         "waiting for their own MMAs, not for other warps")
    if category == C.LATENCY_BOUND:
        line = next((ln for ln in hot.lines if ln.file == h.file and ln.line == h.line), None)
        stall = line.top_stall(ineligible=True) if line is not None else None
        if stall is not None:
            meaning = stall.meaning
            sentence += f"; its top stall is {stall.label} ({stall.share:.0%} of the line's samples)" \
                + (f": {meaning}" if meaning else "")
    return sentence + "."
