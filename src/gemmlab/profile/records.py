"""Parsed profiler data: one ``KernelLaunch`` per profiled kernel launch.

Every importer (raw CSV, details CSV, live ``--csv`` output, ``--metrics`` CSV, ``.ncu-rep``)
produces these records, so the analysis layer never sees a file. Metric values are stored in
base units (ns, byte, byte/s, %, counts) under their raw ncu metric names
(``gpu__time_duration.sum``), whatever the export used (``ms``, ``Kbyte``, a display label).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union

Value = Union[float, str]


@dataclass(frozen=True)
class Metric:
    """One metric value in base units. ``value`` is a float for numbers, str for text metrics."""

    value: Value
    unit: str = ""

    @property
    def is_number(self) -> bool:
        return isinstance(self.value, float)


@dataclass(frozen=True)
class RuleResult:
    """One of Nsight Compute's own rule messages (kept as evidence)."""

    name: str
    type: str  # OPT | INF | WRN | ERR
    description: str
    section: str = ""
    speedup_type: str = ""  # global | local
    estimated_speedup: Optional[float] = None  # percent


@dataclass
class KernelLaunch:
    """Everything one importer knows about one profiled kernel launch."""

    id: int
    name: str  # bare function name, e.g. "gemm_tiled16"
    demangled: str  # full signature as ncu printed it
    block: Optional[tuple[int, int, int]] = None
    grid: Optional[tuple[int, int, int]] = None
    device: Optional[str] = None  # device index or name as exported
    cc: Optional[str] = None  # compute capability, e.g. "9.0"
    metrics: dict[str, Metric] = field(default_factory=dict)
    rules: list[RuleResult] = field(default_factory=list)
    source: str = ""  # the file it came from
    format: str = ""  # raw-csv | live-raw-csv | details-csv | live-csv | metrics-csv | ncu-rep
    process: str = ""  # process name, where exported
    # ncu's own messages from the run that produced this launch (==PROF==, ==WARNING==, ==ERROR==
    # lines of live output: permission errors, replay pass counts); empty for exported files.
    notes: list[str] = field(default_factory=list)
    # the command line that produced the report (``ncu ... PROGRAM ARGS``), where the export records it
    # (an .ncu-rep's session info); "" when unknown
    command_line: str = ""

    def number(self, ncu_name: str) -> Optional[float]:
        """The numeric value of a raw ncu metric, or None if absent or not a number."""
        m = self.metrics.get(ncu_name)
        if m is None or not m.is_number:
            return None
        return m.value  # type: ignore[return-value]

    @property
    def arch(self) -> Optional[str]:
        """``sm_90`` style architecture from the compute capability, when known."""
        if not self.cc:
            return None
        m = re.fullmatch(r"(\d+)\.(\d+)", self.cc.strip())
        return f"sm_{m.group(1)}{m.group(2)}" if m else None


def bare_name(demangled: str) -> str:
    """Function name without template arguments, parameters or namespaces.

    ``void ns::gemm<128>(const float *, ...)`` → ``gemm``; ``gemm_tiled16`` stays as it is. An
    anonymous namespace (``ns::<unnamed>::k<...>``, ``(anonymous namespace)::k(...)``) is a namespace
    like any other, not a template argument or parameter list.
    """
    s = demangled.strip().replace("<unnamed>", "{unnamed}").replace("(anonymous namespace)", "{anonymous}")
    depth = 0
    cut = len(s)
    for i, ch in enumerate(s):  # cut at the first '(' or '<' outside brackets
        if ch in "(<" and depth == 0:
            cut = i
            break
    s = s[:cut].strip()
    s = s.split()[-1] if s.split() else s  # drop a return type like "void"
    return s.split("::")[-1]


def parse_dim3(text: str) -> Optional[tuple[int, int, int]]:
    """``"(32, 8, 1)"`` → (32, 8, 1); None when it is not a dim3."""
    nums = re.findall(r"\d+", text.replace(",", " ") if text else "")
    if text and text.strip().startswith("(") and len(nums) == 3:
        return int(nums[0]), int(nums[1]), int(nums[2])
    return None
