"""Per-source-line counters of an ``.ncu-rep``: where a kernel's warp samples, instructions, excess
global sectors and excess shared wavefronts are, line by line.

Nsight Compute's SourceCounters section (``--set full``, or ``--section SourceCounters``) stores
per-instruction metrics: each is an instanced metric whose instances are keyed by the instruction's
address (its correlation ids). The warp-state sampler counts, at every PC, how often a warp stood
there and in which state (``smsp__pcsamp_warps_issue_stalled_<reason>``: why it was not issuing, or
``selected`` when it issued); ``inst_executed`` counts the warp instructions;
``memory_l2_theoretical_sectors_global[_ideal]`` and ``memory_l1_wavefronts_shared[_ideal]`` count
what each memory instruction moved against what a perfect access pattern would move (their
difference is ncu's ``derived__..._excessive``: uncoalesced accesses, bank conflicts). When the
kernel was compiled with ``-lineinfo``, ``IAction.source_info(pc)`` names each PC's file and line;
``--import-source yes`` also embeds the files' text (``IAction.source_files()``), otherwise the text
is read from the file on disk when it is there. Nothing here depends on who compiled the kernel.

This module sums the instructions into lines (``read_lines``); ranking them is
``gemmlab.analysis.hot_lines``. Speed and safety, as for ``ncu_rep``: ncu_report is imported the way
``ncu_rep.ncu_report_module`` does it and runs in child processes (``source_lines_child``; a crash
there is a one-line error naming the report, not a dead command), and what the children decode is
kept in the cache of decoded reports (``rep_cache``) by the report's content. The first source
lookup of a launch costs ~80 ms (ncu_report reads its module), the first SASS text of a process
~0.35 s, then ~0.1 ms an instruction: 0.5–1 s a launch on the H100 fixtures, ~0.1 s a launch without
line information (measured 2026-11, this repository's fixtures and corpus).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import ModuleType
from typing import Any, Iterable, Mapping, Optional, Sequence

from gemmlab.errors import InputError, ToolMissing, UserError
from gemmlab.profile import ncu_rep, ncu_rep_isolated, rep_cache
from gemmlab.profile.metrics import METRICS, PCSAMP_NAME, PCSAMP_REASONS
from gemmlab.profile.records import bare_name

PAYLOAD_FORMAT = "gemmlab-source-lines/1"
CACHE_SELECTION = "source-lines"  # the rep_cache entry of a report's lines, beside its records
CHILD_MODULE = "gemmlab.profile.source_lines_child"

# The sampler's per-reason metrics, from gemmlab's one table of metric names; a reason a newer ncu adds
# is found by the prefix they share. Each sample has exactly one reason (``selected`` when the warp
# issued), so a PC's samples are the sum of its reasons: ``smsp__pcsamp_sample_count``, to the sample
# (checked at every instruction of the fixtures, tests/test_source_lines.py).
STALL_METRICS = tuple(METRICS[f"pcsamp_{r}"].names[0] for r in PCSAMP_REASONS)
STALL_PREFIX = os.path.commonprefix(STALL_METRICS)  # noqa: RUF071 - a prefix of names, by character
NOT_ISSUED = "_not_issued"  # the subset of a reason's samples in cycles where no warp issued: not a reason
EXECUTED = "inst_executed"  # warp instructions, per PC
THREAD_EXECUTED = "thread_inst_executed"  # active threads, summed over the warp instructions
# Per-instruction access counts: as the access pattern needs them, and as a perfect pattern would (ncu's
# derived__..._excessive is their difference, computed here).
GLOBAL = ("memory_l2_theoretical_sectors_global", "memory_l2_theoretical_sectors_global_ideal")
SHARED = ("memory_l1_wavefronts_shared", "memory_l1_wavefronts_shared_ideal")
_REASON = {v: k for k, v in PCSAMP_NAME.items()}  # the sampler's "no_instructions" is gemmlab's "no_instruction"

SOURCE_MAX_BYTES = 4 << 20  # a source file read from disk; a larger "source" is not a kernel's text
LAUNCHES_PER_CHILD = 8  # a child costs ~0.25 s to start; 8 launches keep it busy 1–4 s
TIMEOUT_S = 600.0

NO_LINE_INFO = ("no source-line information in this report: compile the kernel with -lineinfo "
                "(nvcc -lineinfo) and profile with ncu --import-source yes to embed its source text")
NO_SAMPLES = ("no per-instruction samples in this report: profile with ncu --section SourceCounters "
              "(or --set full)")


@dataclass
class Counters:
    """What the SourceCounters metrics count at one instruction, or summed over a line's."""

    samples: int = 0  # warp-state samples (every reason, ``selected`` included)
    stalls: dict[str, int] = field(default_factory=dict)  # samples per reason (gemmlab's names), non-zero only
    executed: int = 0  # warp instructions executed
    thread_executed: int = 0  # active threads over those instructions (32 per instruction without divergence)
    global_sectors: int = 0  # L2 sectors global accesses request, as the access pattern needs
    global_ideal: int = 0  # ... and as a fully coalesced pattern would need
    global_excess: int = 0  # the difference: uncoalesced accesses
    shared_wavefronts: int = 0  # shared-memory wavefronts
    shared_ideal: int = 0
    shared_excess: int = 0  # the difference: bank conflicts

    def add(self, other: Counters) -> None:
        for f in _COUNTS:
            setattr(self, f, getattr(self, f) + getattr(other, f))
        for r, n in other.stalls.items():
            self.stalls[r] = self.stalls.get(r, 0) + n

    def counters_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {f: getattr(self, f) for f in _COUNTS if getattr(self, f)}
        if self.stalls:
            d["stalls"] = dict(self.stalls)
        return d

    @staticmethod
    def counters_from(d: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {f: int(d.get(f, 0)) for f in _COUNTS}
        out["stalls"] = {str(k): int(v) for k, v in (d.get("stalls") or {}).items()}
        return out


_COUNTS = tuple(f.name for f in fields(Counters) if f.name != "stalls")


@dataclass
class Instruction(Counters):
    """One SASS instruction: its address (as ncu reports it), its text, and its counters."""

    pc: int = 0
    sass: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"pc": self.pc, "sass": self.sass, **self.counters_dict()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Instruction:
        return cls(pc=int(d["pc"]), sass=str(d.get("sass", "")), **Counters.counters_from(d))

    @property
    def opcode(self) -> str:
        """``LDG.E.128`` of ``@!P1 LDG.E.128 R4, desc[UR8][R2.64]``: the mnemonic without predicate."""
        words = self.sass.split()
        if words and words[0].startswith("@"):
            words = words[1:]
        return words[0].rstrip(";") if words else ""


@dataclass
class SourceLine(Counters):
    """One line of a source file: the sum of the instructions compiled from it, and those instructions."""

    file: str = ""
    line: int = 0
    text: Optional[str] = None  # the line as written (no newline); None when the file's text is unknown
    instructions: list[Instruction] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "text": self.text, **self.counters_dict(),
                "instructions": [i.to_dict() for i in self.instructions]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SourceLine:
        return cls(file=str(d["file"]), line=int(d["line"]), text=d.get("text"),
                   instructions=[Instruction.from_dict(i) for i in d.get("instructions") or ()],
                   **Counters.counters_from(d))


@dataclass
class LaunchLines:
    """One profiled launch's per-line counters (``read_lines``), in the report's launch order.

    ``id`` is the launch's index over the report's ranges and actions, the ``id`` of the same launch in
    ``ncu_rep.read_rep`` (so in ``gemmlab analyze``). ``lines`` are in file and line order;
    ``unattributed`` holds the instructions no line claims (none of a launch without line info, whose
    ``total`` still counts them). ``sources`` maps each file with lines to its text, when known;
    ``source_origin`` says where the text came from: ``"embedded"`` (``--import-source yes``),
    ``"given"`` (by ``read_lines``' caller) or ``"disk"`` (read at the path the report names: it may
    have changed since the profile).
    """

    id: int
    name: str  # the bare function name, as ``KernelLaunch.name``
    function: str  # ncu's function name
    mangled: str
    demangled: str
    has_line_info: bool
    has_samples: bool  # the report has warp-state samples for this launch
    has_memory: bool  # ... and per-instruction global-sector / shared-wavefront counts
    total: Counters = field(default_factory=Counters)  # over every instruction, with a line or not
    lines: list[SourceLine] = field(default_factory=list)
    unattributed: list[Instruction] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)
    source_origin: dict[str, str] = field(default_factory=dict)

    @property
    def note(self) -> str:
        """Why the launch has no lines to rank ("" when it has): one line, with how to get them."""
        if not self.has_samples and not self.total.executed:
            return NO_SAMPLES
        if not self.has_line_info:
            return NO_LINE_INFO
        return ""

    def files(self) -> list[str]:
        """The files the lines come from, the one with most samples (then instructions) first."""
        weight: dict[str, tuple[int, int]] = {}
        for ln in self.lines:
            s, e = weight.get(ln.file, (0, 0))
            weight[ln.file] = (s + ln.samples, e + ln.executed)
        return sorted(weight, key=lambda f: (-weight[f][0], -weight[f][1], f))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "name": self.name, "function": self.function, "mangled": self.mangled,
            "demangled": self.demangled, "has_line_info": self.has_line_info, "has_samples": self.has_samples,
            "has_memory": self.has_memory, "total": self.total.counters_dict(),
            "lines": [ln.to_dict() for ln in self.lines],
            "unattributed": [i.to_dict() for i in self.unattributed],
            "sources": dict(self.sources), "source_origin": dict(self.source_origin),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LaunchLines:
        return cls(
            id=int(d["id"]), name=str(d.get("name", "")), function=str(d.get("function", "")),
            mangled=str(d.get("mangled", "")), demangled=str(d.get("demangled", "")),
            has_line_info=bool(d.get("has_line_info")), has_samples=bool(d.get("has_samples")),
            has_memory=bool(d.get("has_memory")), total=Counters(**Counters.counters_from(d.get("total") or {})),
            lines=[SourceLine.from_dict(x) for x in d.get("lines") or ()],
            unattributed=[Instruction.from_dict(x) for x in d.get("unattributed") or ()],
            sources={str(k): str(v) for k, v in (d.get("sources") or {}).items()},
            source_origin={str(k): str(v) for k, v in (d.get("source_origin") or {}).items()},
        )


# --- reading a report (parent side) ---------------------------------------------------------------------


def read_lines(path: str | Path, launches: Optional[Iterable[int]] = None,
               sources: Optional[Mapping[str, str]] = None, timeout_s: float = TIMEOUT_S) -> list[LaunchLines]:
    """The per-line counters of every profiled launch of the ``.ncu-rep`` at ``path`` (or of the
    launches whose ``id`` is in ``launches``), in report order.

    ``sources``: the text of source files the caller knows (a file it compiled), by the path the
    report names or by the file's name; used where the report embeds no text, before the disk.
    A launch without line information, or without samples, comes back with no lines and a ``note``
    saying how to get them. Raises InputError for a missing file, a text file, an unreadable report
    or a launch id the report does not hold; UserError when a child fails or runs past ``timeout_s``.
    """
    path = Path(path)
    _check_file(path)
    wanted = None if launches is None else sorted({int(i) for i in launches})
    key = rep_cache.key(path, CACHE_SELECTION)
    payload = rep_cache.get(key)
    if payload is not None and payload.get("format") != PAYLOAD_FORMAT:
        payload = None
    have = {int(d["id"]): d for d in payload["launches"]} if payload is not None else {}
    total = payload.get("total") if payload is not None else None
    if wanted is not None and total is not None:
        _check_ids(wanted, total, str(path))
    if total is None:  # nothing cached: decode what is asked for (None: every launch)
        todo = wanted
    else:
        todo = [i for i in (wanted if wanted is not None else range(total)) if i not in have]
    if total is None or todo:
        fresh = _decode(path, todo, timeout_s)
        total = fresh["total"]
        have.update({int(d["id"]): d for d in fresh["launches"]})
        rep_cache.put(key, {"format": PAYLOAD_FORMAT, "total": total,
                            "launches": [have[i] for i in sorted(have)]})
    ids = wanted if wanted is not None else range(total)
    return [attach_sources(LaunchLines.from_dict(have[i]), sources or {}) for i in ids]


def _check_file(path: Path) -> None:
    expected = "expected a .ncu-rep written by ncu -o"
    if not path.exists():
        raise InputError(f"{path}: no such file; {expected}")
    if not path.is_file():
        raise InputError(f"{path}: not a regular file; {expected}")
    ncu_rep.check_head(path)  # a text file (a CSV export) is named as such


def _check_ids(ids: Sequence[int], total: int, source: str) -> None:
    bad = [i for i in ids if not 0 <= i < total]
    if bad:
        raise InputError(f"{source}: no launch {bad[0]} in the report; it holds launches 0–{total - 1}")


def _decode(path: Path, ids: Optional[list[int]], timeout_s: float) -> dict:
    if not ncu_rep_isolated.isolate():
        return decode_lines(path, ids)
    k = _child_count(path, ids)
    shards = [f"{i}/{k}" for i in range(k)]
    env = dict(os.environ, GEMMLAB_NCU_REP_ISOLATE="0")
    argv = [sys.executable, "-m", CHILD_MODULE, str(path)]
    if ids is not None:
        argv += ["--launches", ",".join(map(str, ids))]
    children = [subprocess.Popen([*argv, "--shard", s], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
                for s in shards]
    results = []
    deadline = time.monotonic() + timeout_s
    try:
        for p in children:
            out, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
            results.append((p.returncode, out, err))
    except subprocess.TimeoutExpired:
        raise UserError(f"{path}: reading its source lines took more than {timeout_s:g} s") from None
    finally:
        for p in children:
            if p.poll() is None:
                p.kill()
                p.wait()
    for code, _, err in results:
        if code != 0:
            raise _child_error(path, code, err.decode("utf-8", "replace"))
    try:
        payloads = [json.loads(out) for _, out, _ in results]
    except ValueError as e:
        raise UserError(f"{path}: reading its source lines in a child process failed (bad output: {e})") from None
    return {"format": PAYLOAD_FORMAT, "total": payloads[0]["total"],
            "launches": sorted((d for p in payloads for d in p["launches"]), key=lambda d: d["id"])}


def _child_count(path: Path, ids: Optional[list[int]]) -> int:
    """Children to read ``ids`` in: for the whole report (None), as ``ncu_rep_isolated`` counts them
    (by its size); for a known list, one per LAUNCHES_PER_CHILD launches, at most the idle CPUs and
    MAX_PROCS (``GEMMLAB_NCU_REP_PROCS`` overrides either way)."""
    if ids is None:
        return ncu_rep_isolated.child_count(path)
    env = os.environ.get("GEMMLAB_NCU_REP_PROCS", "").strip()
    if env.isdigit() and int(env) >= 1:
        return max(1, min(int(env), len(ids)))
    return max(1, min(ncu_rep_isolated.MAX_PROCS, ncu_rep_isolated.idle_cpus(),
                      math.ceil(len(ids) / LAUNCHES_PER_CHILD)))


def _child_error(path: Path, code: int, stderr: str) -> UserError:
    """The child's one-line error (``gemmlab: error: ...`` on its stderr) as the same error here."""
    message = (stderr.strip().splitlines() or [f"exit code {code}"])[-1].removeprefix("gemmlab: error: ")
    if code == 2:
        return InputError(message)
    if code == 3:
        return ToolMissing(message)
    return UserError(f"{path}: reading its source lines in a child process failed ({message})")


def attach_sources(launch: LaunchLines, given: Optional[Mapping[str, str]] = None) -> LaunchLines:
    """Fill in (in place; returned) the text of the launch's files the report did not embed: from
    ``given`` (by the path the report names, then by file name), else from disk where the file still
    is; and each line's ``text`` from it."""
    given = given or {}
    by_name = {Path(k).name: v for k, v in given.items()}
    for f in sorted({ln.file for ln in launch.lines} - set(launch.sources)):
        text = given.get(f, by_name.get(Path(f).name))
        origin = "given"
        if text is None:
            text, origin = _read_source(f), "disk"
        if text is not None:
            launch.sources[f] = text
            launch.source_origin[f] = origin
    for ln in launch.lines:
        if ln.text is None and ln.file in launch.sources:
            ln.text = line_of(launch.sources[ln.file], ln.line)
    return launch


def _read_source(name: str) -> Optional[str]:
    try:
        p = Path(name)
        if not p.is_file() or p.stat().st_size > SOURCE_MAX_BYTES:
            return None
        return p.read_bytes().decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


def line_of(text: str, line: int) -> Optional[str]:
    """Line ``line`` (1-based) of ``text``, without its newline; None past the end."""
    lines = text.splitlines()
    return lines[line - 1].rstrip() if 1 <= line <= len(lines) else None


# --- decoding through ncu_report (child side) -------------------------------------------------------------


def decode_lines(path: Path, ids: Optional[Sequence[int]] = None, shard: int = 0, shards: int = 1,
                 source: Optional[str] = None) -> dict:
    """The per-line payload of the launches in ``ids`` (None: all) whose position in that list is
    ``shard`` modulo ``shards``, read in this process through ncu_report. ``source`` names the
    report in errors."""
    source = source or str(path)
    has_magic = ncu_rep.check_head(path)
    mod = ncu_rep.ncu_report_module()
    try:
        ctx = mod.load_report(str(path))
    except (FileNotFoundError, RuntimeError, OSError) as e:
        raise InputError(f"{source}: ncu_report cannot load it ({e}); expected a .ncu-rep written by ncu -o") from None
    n_ranges = ctx.num_ranges() if ctx is not None else None
    if not n_ranges:
        what = "damaged or truncated Nsight Compute report (ncu_report finds no results in it)" if has_magic \
            else "not an Nsight Compute report (binary data without the NVR header)"
        raise InputError(f"{source}: {what}")
    where = [(r, j) for r in range(n_ranges) for j in range(ctx.range_by_idx(r).num_actions() or 0)]
    chosen = list(range(len(where))) if ids is None else list(ids)
    _check_ids(chosen, len(where), source)
    launches = []
    for pos, i in enumerate(chosen):
        if pos % shards == shard:
            r, j = where[i]
            launches.append(_launch(mod, ctx.range_by_idx(r).action_by_idx(j), i, source))
    return {"format": PAYLOAD_FORMAT, "total": len(where), "launches": launches}


def _per_pc(mod: ModuleType, action, name: str) -> Optional[dict[int, int]]:
    """{pc: value} of an instanced per-instruction metric; None when the launch lacks it."""
    m = action.metric_by_name(name)
    if m is None or not m.has_correlation_ids():
        return None
    ids = m.correlation_ids()
    n = m.num_instances()
    if m.kind() in (mod.IMetric.ValueKind_DOUBLE, mod.IMetric.ValueKind_FLOAT):
        return {ids.as_uint64(i): round(m.as_double(i)) for i in range(n)}
    return {ids.as_uint64(i): m.as_uint64(i) for i in range(n)}


def _launch(mod: ModuleType, action, launch_id: int, source: str) -> dict:
    function = action.name() or ""
    if not function:
        raise InputError(f"{source}: damaged or truncated Nsight Compute report "
                         f"(result {launch_id} has no kernel name)")
    demangled = action.name(mod.IAction.NameBase_DEMANGLED) or function
    mangled = action.name(mod.IAction.NameBase_MANGLED) or function
    stalls = {}
    for n in action.metric_names():
        if n.startswith(STALL_PREFIX) and not n.endswith(NOT_ISSUED):
            v = _per_pc(mod, action, n)
            if v:
                reason = n[len(STALL_PREFIX):]
                stalls[_REASON.get(reason, reason)] = v
    samples: dict[int, int] = {}
    for v in stalls.values():
        for pc, n in v.items():
            samples[pc] = samples.get(pc, 0) + n
    executed = _per_pc(mod, action, EXECUTED) or {}
    threads = _per_pc(mod, action, THREAD_EXECUTED) or {}
    glob = [_per_pc(mod, action, n) for n in GLOBAL]
    shared = [_per_pc(mod, action, n) for n in SHARED]
    pcs = sorted(set(samples) | set(executed) | set().union(*(d or {} for d in glob + shared)))
    out: dict[str, Any] = {
        "id": launch_id, "name": bare_name(demangled) or function, "function": function, "mangled": mangled,
        "demangled": demangled, "has_samples": bool(samples), "has_memory": any(glob) or any(shared),
    }
    where = {}
    for pc in pcs:
        si = action.source_info(pc)
        f = si.file_name() if si is not None else ""
        if f:
            where[pc] = (f, int(si.line()))
    out["has_line_info"] = bool(where)
    total = Counters()
    instructions = []
    for pc in pcs:
        ins = Instruction(pc=pc, samples=samples.get(pc, 0), executed=executed.get(pc, 0),
                          thread_executed=threads.get(pc, 0),
                          stalls={r: v[pc] for r, v in stalls.items() if v.get(pc)})
        ins.global_sectors, ins.global_ideal, ins.global_excess = _access(glob, pc)
        ins.shared_wavefronts, ins.shared_ideal, ins.shared_excess = _access(shared, pc)
        total.add(ins)
        instructions.append(ins)
    out["total"] = total.counters_dict()
    if not where:  # nothing to attribute: the totals say what was measured, the note how to get lines
        return out
    lines: dict[tuple[str, int], SourceLine] = {}
    unattributed = []
    for ins in instructions:
        ins.sass = " ".join((action.sass_by_pc(ins.pc) or "").split())
        key = where.get(ins.pc)
        if key is None:
            unattributed.append(ins)
            continue
        ln = lines.get(key)
        if ln is None:
            ln = lines[key] = SourceLine(file=key[0], line=key[1])
        ln.add(ins)
        ln.instructions.append(ins)
    embedded = _embedded(action, {f for f, _ in lines})
    for ln in lines.values():
        if ln.file in embedded:
            ln.text = line_of(embedded[ln.file], ln.line)
    out["lines"] = [lines[k].to_dict() for k in sorted(lines)]
    out["unattributed"] = [i.to_dict() for i in unattributed]
    out["sources"] = embedded
    out["source_origin"] = dict.fromkeys(embedded, "embedded")
    return out


def _access(values: list, pc: int) -> tuple[int, int, int]:
    """(count, ideal count, excess) of one instruction's accesses; 0s for one that makes none."""
    t, i = ((d or {}).get(pc) for d in values)
    if t is None or i is None:
        return t or 0, i or 0, 0
    return t, i, max(0, t - i)


def _embedded(action, files: set[str]) -> dict[str, str]:
    """The text ``--import-source yes`` embedded of each of ``files``."""
    try:
        found = action.source_files()
        names = list(found.keys()) if found is not None else []
    except (RuntimeError, AttributeError):
        return {}
    return {f: str(found[f]) for f in names if f in files and found[f]}
