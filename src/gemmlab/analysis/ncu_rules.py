"""Nsight Compute's own rule messages, read back into numbers.

The details page and ``ncu --csv`` output have no sector or stall counters, but they carry the
messages of NVIDIA's rules (``UncoalescedGlobalAccess``, ``SharedMemoryConflicts``, ``CPIStall``,
``TheoreticalOccupancy`` ...) whose text quotes the numbers the rule computed. Parsing them lets a
details export reach the same diagnosis as a raw export, at lower confidence (the numbers are
rounded, and some mix loads with stores). The message formats follow the rule files that ship with
Nsight Compute 2025.x (``<ncu>/sections/*.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from gemmlab.profile.records import RuleResult

_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"

# CPIStall describes each stall reason with NVIDIA's fixed text; these phrases identify it.
_STALL_PHRASES = (
    ("barrier", "waiting for sibling warps at a CTA barrier"),
    ("branch_resolving", "waiting for a branch target to be computed"),
    ("dispatch_stall", "waiting on a dispatch stall"),
    ("drain", "after EXIT waiting for all outstanding memory operations"),
    ("imc_miss", "immediate constant cache (IMC) miss"),
    ("lg_throttle", "L1 instruction queue for local and global (LG) memory operations"),
    ("long_scoreboard", "scoreboard dependency on a L1TEX"),
    ("math_pipe_throttle", "waiting for the execution pipe to be available"),
    ("membar", "waiting on a memory barrier"),
    ("mio_throttle", "MIO (memory input/output) instruction queue to be not full"),
    ("misc", "miscellaneous hardware reason"),
    ("no_instruction", "waiting to be selected to fetch an instruction"),
    ("not_selected", "waiting for the micro scheduler to select the warp"),
    ("short_scoreboard", "scoreboard dependency on a MIO"),
    ("sleeping", "being in the blocked, yielded, or sleep state"),
    ("tex_throttle", "L1 instruction queue for texture operations"),
    ("wait", "fixed latency execution dependency"),
    ("gmma", "WARPGROUP.ARRIVES"),
)

_OCC_LIMITERS = (
    ("registers", "the number of required registers"),
    ("shared_mem", "the required amount of shared memory"),
    ("warps", "the number of warps within each block"),
    ("blocks", "the number of blocks that can fit on the SM"),
)


# HighPipeUtilization's pipe names → gemmlab's short metric names (sm__pipe_*_cycles_active / inst_executed)
RULE_PIPES = {"Tensor": "pipe_tensor_pct", "FMA": "pipe_fma_pct", "ALU": "pipe_alu_pct", "FP64": "pipe_fp64_pct",
              "XU": "pipe_xu_pct", "LSU": "pipe_lsu_pct"}


def _f(text: str) -> float:
    return float(text.replace(",", ""))


def plain(message: str) -> str:
    """Rule text without ncu's link markup (``@section:Id:Label@`` → ``Label``)."""
    return re.sub(r"@(?:section|url):[^:@]*:([^@]*)@", r"\1", message).strip()


@dataclass(frozen=True)
class RuleNumber:
    """A number quoted by an ncu rule, with the rule's own speedup estimate."""

    value: float
    rule: str
    text: str
    estimated_speedup: Optional[float]


@dataclass
class RuleFacts:
    """What the ncu rule messages of one kernel say, in numbers."""

    # (space, op) → bytes used per 32-byte sector, e.g. ("global", "load") → 4.0
    bytes_per_sector: dict[tuple[str, str], RuleNumber] = field(default_factory=dict)
    access_pattern_rule_seen: bool = False  # MemoryCacheAccessPattern fired for some space/op
    global_excess_sectors: Optional[RuleNumber] = None  # value = excess fraction (0..1)
    global_excess_count: Optional[float] = None
    global_total_sectors: Optional[float] = None
    shared_conflicts: dict[str, RuleNumber] = field(default_factory=dict)  # op → conflict fraction
    shared_nway: dict[str, float] = field(default_factory=dict)
    shared_wavefronts: dict[str, float] = field(default_factory=dict)  # op → the rule's total wavefronts
    shared_excess_wavefronts: Optional[RuleNumber] = None  # value = excess fraction (0..1)
    stalls: dict[str, RuleNumber] = field(default_factory=dict)  # reason → cycles per instruction
    stall_cpi: Optional[float] = None
    occupancy_limiters: list[str] = field(default_factory=list)
    theoretical_occupancy: Optional[RuleNumber] = None  # percent
    small_grid: Optional[RuleNumber] = None  # value = blocks in the grid
    tail: Optional[RuleNumber] = None  # value = full waves
    divergence: Optional[RuleNumber] = None
    issue_every: Optional[RuleNumber] = None  # cycles between issued instructions per scheduler
    # HighPipeUtilization: the busiest pipe over elapsed cycles, as gemmlab's short metric name
    highest_pipe: Optional[tuple[str, RuleNumber]] = None
    # ... and the busiest pipe by executed instructions ("the highest utilized pipeline (X%) is LSU")
    highest_pipe_inst: Optional[tuple[str, RuleNumber]] = None
    messages: list[tuple[str, str]] = field(default_factory=list)  # (rule, plain text)

    @property
    def empty(self) -> bool:
        return not self.messages


def parse(rules: list[RuleResult]) -> RuleFacts:
    """Extract the numbers gemmlab uses from one kernel's rule results."""
    facts = RuleFacts()
    for r in rules:
        text = plain(r.description or "")
        name = r.name
        facts.messages.append((name, text))
        sp = r.estimated_speedup
        if name == "MemoryCacheAccessPattern":
            m = re.search(r"memory access pattern for (global|local) (loads|stores) .*?only "
                          + _NUM + r" of the " + _NUM + " bytes", text)
            if m:
                facts.access_pattern_rule_seen = True
                key = (m.group(1), "load" if m.group(2) == "loads" else "store")
                prev = facts.bytes_per_sector.get(key)
                num = RuleNumber(_f(m.group(3)), name, text, sp)
                # the rule reports one cache level per space/op; keep the first (L1TEX)
                if prev is None:
                    facts.bytes_per_sector[key] = num
        elif name == "UncoalescedGlobalAccess":
            m = re.search(r"total of " + _NUM + r" excessive sectors \(" + _NUM
                          + r"% of the total " + _NUM + " sectors", text)
            if m:
                excess, total = _f(m.group(1)), _f(m.group(3))
                if total > 0:
                    facts.global_excess_sectors = RuleNumber(excess / total, name, text, sp)
                    facts.global_excess_count = excess
                    facts.global_total_sectors = total
        elif name == "SharedMemoryConflicts":
            m = re.search(r"pattern for shared (loads|stores).*?average a " + _NUM
                          + r" - way bank conflict.*?represent " + _NUM + "%", text)
            if m:
                op = "load" if m.group(1) == "loads" else "store"
                facts.shared_conflicts[op] = RuleNumber(_f(m.group(3)) / 100.0, name, text, sp)
                facts.shared_nway[op] = _f(m.group(2))
                w = re.search(r"overall " + _NUM + " wavefronts", text)
                if w:
                    facts.shared_wavefronts[op] = _f(w.group(1))
        elif name == "UncoalescedSharedAccess":
            m = re.search(r"total of " + _NUM + r" excessive wavefronts \(" + _NUM
                          + r"% of the total " + _NUM + " wavefronts", text)
            if m and _f(m.group(3)) > 0:
                facts.shared_excess_wavefronts = RuleNumber(
                    _f(m.group(1)) / _f(m.group(3)), name, text, sp)
        elif name == "CPIStall":
            m = re.search(r"spends " + _NUM + r" cycles being stalled (.*)", text)
            if m:
                for reason, phrase in _STALL_PHRASES:
                    if phrase in m.group(2):
                        facts.stalls[reason] = RuleNumber(_f(m.group(1)), name, text, sp)
                        break
            c = re.search(r"total average of " + _NUM + " cycles", text)
            if c:
                facts.stall_cpi = _f(c.group(1))
        elif name == "HighPipeUtilization":
            m = re.search(r"^(\w+) is the highest-utilized pipeline \(" + _NUM + r"%\) based on elapsed", text)
            if m:
                pipe = m.group(1)
                sub = re.search(r"dominated by its (\w+)", text)
                if pipe == "Shared" and sub and sub.group(1) == "Tensor":
                    pipe = "Tensor"  # the FP64+tensor shared pipe, busy with its tensor sub-pipeline
                short = RULE_PIPES.get(pipe)
                if short is not None:
                    facts.highest_pipe = (short, RuleNumber(_f(m.group(2)), name, text, sp))
            i = re.search(r"number of executed instructions, the highest utilized pipeline \(" + _NUM
                          + r"%\) is (\w+)", text)
            if i and RULE_PIPES.get(i.group(2)) is not None:
                facts.highest_pipe_inst = (RULE_PIPES[i.group(2)], RuleNumber(_f(i.group(1)), name, text, sp))
        elif name == "TheoreticalOccupancy":
            m = re.search(r"theoretical occupancy \(" + _NUM + r"%\) is limited by (.*)", text)
            if m:
                facts.theoretical_occupancy = RuleNumber(_f(m.group(1)), name, text, sp)
                facts.occupancy_limiters = [k for k, phrase in _OCC_LIMITERS if phrase in m.group(2)]
        elif name == "LaunchConfiguration":
            g = re.search(r"configured to execute only " + _NUM + r" block", text)
            if g:
                facts.small_grid = RuleNumber(_f(g.group(1)), name, text, sp)
            t = re.search(r"results in " + _NUM + r" full waves and a partial wave", text)
            if t:
                facts.tail = RuleNumber(_f(t.group(1)), name, text, sp)
        elif name == "ThreadDivergence":
            d = re.search(r"average of " + _NUM + r" threads", text)
            if d:
                facts.divergence = RuleNumber(_f(d.group(1)), name, text, sp)
        elif name == "IssueSlotUtilization":
            i = re.search(r"issues an instruction every " + _NUM + " cycles", text)
            if i:
                facts.issue_every = RuleNumber(_f(i.group(1)), name, text, sp)
    return facts
