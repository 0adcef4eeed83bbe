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


@dataclass(frozen=True, slots=True)
class Metric:
    """One metric value in base units. ``value`` is a float for numbers, str for text metrics.
    (Slots: a long raw page holds millions of these, ~50 bytes each instead of ~90.)"""

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
        if m is None:
            return None
        v = m.value  # the analysis reads metrics this way a few hundred times a launch: kept lean
        return v if isinstance(v, float) else None

    @property
    def arch(self) -> Optional[str]:
        """``sm_90`` style architecture from the compute capability, when known."""
        if not self.cc:
            return None
        m = re.fullmatch(r"(\d+)\.(\d+)", self.cc.strip())
        return f"sm_{m.group(1)}{m.group(2)}" if m else None


# Pseudo-namespaces demanglers print for anonymous namespaces: ncu/cu++filt, Itanium c++filt, MSVC.
_ANONYMOUS = ("<unnamed>", "(anonymous namespace)", "{anonymous}", "`anonymous namespace'")
_ANON = "\x01"  # stands in for one while the brackets are matched
_OPERATOR = re.compile(r"\boperator\s*(\(\s*\)|\[\s*\]|->\*?|<<=?|>>=?|<=>|[-+*/%^&|~!=<>,]=?|&&|\|\||\+\+|--"
                       r"|new(?:\s*\[\s*\])?|delete(?:\s*\[\s*\])?|\s+[A-Za-z_][\w:]*)")
_OPEN, _CLOSE = "(<[{", ")>]}"


def bare_name(demangled: str) -> str:
    """Function name without return type, namespaces, template arguments or parameters.

    ``void ns::gemm<128>(const float *, ...)`` → ``gemm``; ``gemm_tiled16`` stays as it is;
    ``void at::native::<unnamed>::cunn_SoftMaxForward<4, float, ...>(T4 *, const T2 *, int)`` →
    ``cunn_SoftMaxForward`` (anonymous namespaces as ``<unnamed>``, ``(anonymous namespace)`` or
    ``{anonymous}``); template arguments holding ``<``/``>``, parentheses, lambdas
    (``[lambda() (instance 1)]``) or function types are skipped whole; a member operator keeps its
    class: ``Functor::operator()``. A name cut short inside its template arguments still gives the
    function's name.
    """
    s = demangled.strip()
    if not s:
        return s
    for anon in _ANONYMOUS:
        s = s.replace(anon, _ANON)
    ops: list[str] = []  # operator names, replaced by a placeholder so their brackets do not count

    def hide(m: re.Match) -> str:
        ops.append("operator" + re.sub(r"\s+", "" if m.group(1).strip()[:1] in "([" else " ", m.group(1)).rstrip())
        return f"\x02{len(ops) - 1}\x02"

    s = _OPERATOR.sub(hide, s)
    decl = _declarator(s)
    parts = [p for p in _split_top(decl, "::") if p.strip() and p.strip() != _ANON]
    if not parts:
        return demangled.strip()
    name = _strip_templates(parts[-1]).strip()
    if "\x02" in name and len(parts) > 1:  # a member operator: keep the class
        name = _strip_templates(parts[-2]).strip() + "::" + name
    name = re.sub("\x02(\\d+)\x02", lambda m: ops[int(m.group(1))], name).replace(_ANON, "")
    return name or demangled.strip()


def _declarator(s: str) -> str:
    """The qualified name of a declaration: without the parameter list (the last bracket group at
    depth 0 that opens with ``(``, and what follows it) and without the return type (everything up
    to the last space at depth 0)."""
    stack: list[str] = []
    params = None
    spaces = []
    for i, ch in enumerate(s):
        if ch in _OPEN:
            if ch == "(" and not stack:
                params = i
            if ch != "<" or not stack or stack[-1] != "(":  # a '<' inside parentheses is a comparison
                stack.append(ch)
        elif ch in _CLOSE:
            opener = _OPEN[_CLOSE.index(ch)]
            if ch == ">" and (not stack or stack[-1] != "<"):
                continue  # a '>' that closes nothing (a comparison, '->')
            while stack and stack[-1] != opener:
                stack.pop()  # unmatched '<' inside the group being closed
            if stack:
                stack.pop()
        elif ch == " " and not stack:
            spaces.append(i)
    if params is not None and params > 0:
        head = s[:params].rstrip()
    else:
        head = s  # no parameter list (a plain name), or cut short before it
    cut = [i for i in spaces if i < len(head)]
    return head[cut[-1] + 1:] if cut else head


def _split_top(s: str, sep: str) -> list[str]:
    """``s`` split at ``sep`` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth = max(0, depth - 1)
        elif depth == 0 and s.startswith(sep, i):
            parts.append(s[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(s[start:])
    return parts


def _strip_templates(part: str) -> str:
    """A name component without its template arguments (from its first ``<`` on)."""
    i = part.find("<")
    return part[:i] if i > 0 else part


def parse_dim3(text: str) -> Optional[tuple[int, int, int]]:
    """``"(32, 8, 1)"`` → (32, 8, 1); None when it is not a dim3."""
    nums = re.findall(r"\d+", text.replace(",", " ") if text else "")
    if text and text.strip().startswith("(") and len(nums) == 3:
        return int(nums[0]), int(nums[1]), int(nums[2])
    return None
