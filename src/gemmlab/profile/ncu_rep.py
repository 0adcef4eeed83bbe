"""Reader for ``.ncu-rep`` reports through NVIDIA's ``ncu_report`` module.

The module that ships with Nsight Compute (``<ncu>/extras/python/ncu_report.py``) is preferred,
since it matches the ncu that wrote the report; without ncu, the PyPI package ``ncu-report``
reads reports on a machine with no GPU. Every range's every action (profiled launch) becomes one
KernelLaunch: all metrics with a value (instanced metrics keep their aggregate, as the raw page
does), launch geometry from ``launch__block_dim_*``/``launch__grid_dim_*``, the compute capability
from ``device__attribute_compute_capability_*``, and ncu's rule results with their message markup
turned into the plain text the CSV pages show.
"""

from __future__ import annotations

import functools
import glob
import importlib
import logging
import os
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Optional

from gemmlab.errors import InputError, ToolMissing
from gemmlab.profile.records import KernelLaunch, Metric, RuleResult, bare_name

log = logging.getLogger(__name__)

REPORT_SUFFIXES = (".ncu-rep", ".ncu-repz")
MAGIC = b"NVR\x00"  # first bytes of the .ncu-rep files seen; used only to word the error

# ncu_report's MsgType values → the Rule Type the CSV pages print (OK is shown as INF).
_MSG_TYPE = {0: "", 1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
_SPEEDUP_TYPE = {0: "", 1: "local", 2: "global"}
_MARKUP = re.compile(r"@(\w+):([^@]*)@")


def module_dirs() -> list[Path]:
    """Where an Nsight Compute install keeps ncu_report.py, most specific first."""
    dirs = []
    env = os.environ.get("GEMMLAB_NCU_PYTHON")
    if env:
        dirs.append(Path(env))
    ncu = shutil.which("ncu")
    if ncu:
        dirs.append(Path(ncu).resolve().parent / "extras" / "python")
    for pattern in ("/opt/nvidia/nsight-compute/*/extras/python", "/usr/local/cuda*/nsight-compute*/extras/python"):
        dirs += [Path(p) for p in sorted(glob.glob(pattern), reverse=True)]  # newest version first
    return dirs


@functools.lru_cache(maxsize=1)
def ncu_report_module() -> ModuleType:
    """The ncu_report module: the one shipping with ncu if found, else the PyPI package."""
    for d in module_dirs():
        if not (d / "ncu_report.py").is_file():
            continue
        loaded = sys.modules.get("ncu_report")
        if loaded is not None:
            return loaded
        sys.path.insert(0, str(d))
        try:
            return importlib.import_module("ncu_report")
        except ImportError as e:  # e.g. its _ncu_report.so built for another Python
            log.warning("cannot import ncu_report from %s (%s); trying the PyPI package", d, e)
            sys.modules.pop("ncu_report", None)
        finally:
            sys.path.remove(str(d))
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        raise ToolMissing(
            "reading .ncu-rep needs NVIDIA's ncu_report module: `pip install ncu-report` "
            "(or install Nsight Compute, or set GEMMLAB_NCU_PYTHON to its extras/python)"
        ) from None


def read_rep(path: Path) -> list[KernelLaunch]:
    """Every profiled launch in the report at ``path`` (read in a fresh child process unless
    GEMMLAB_NCU_REP_ISOLATE=0: see ``ncu_rep_isolated`` for the crash this avoids)."""
    from gemmlab.profile import ncu_rep_isolated

    if ncu_rep_isolated.isolate():
        return ncu_rep_isolated.read_in_child(path)
    source = str(path)
    with open(path, "rb") as f:
        head = f.read(4096)
    has_magic = head.startswith(MAGIC)
    if not has_magic and _is_text(head):
        raise InputError(f"{source}: is text, not an Nsight Compute report; expected a .ncu-rep written by ncu -o")
    mod = ncu_report_module()
    try:
        ctx = mod.load_report(source)
    except (FileNotFoundError, RuntimeError, OSError) as e:
        raise InputError(f"{source}: ncu_report cannot load it ({e}); expected a .ncu-rep written by ncu -o") from None
    n_ranges = ctx.num_ranges() if ctx is not None else None
    if not n_ranges:  # ncu_report answers None, not an exception, for a file it cannot parse
        if has_magic:
            raise InputError(f"{source}: damaged or truncated Nsight Compute report (ncu_report finds no results in it)")
        raise InputError(f"{source}: not an Nsight Compute report (binary data without the NVR header); "
                         "expected a .ncu-rep written by ncu -o")
    launches: list[KernelLaunch] = []
    for r in range(n_ranges):
        rng = ctx.range_by_idx(r)
        for j in range(rng.num_actions() or 0):
            launches.append(_launch(mod, rng.action_by_idx(j), len(launches), source))
    if not launches:
        raise InputError(f"{source}: the report holds no profiled kernel launches")
    command = session_command(path)
    for k in launches:
        k.command_line = command
    return launches


# The report's session info keeps ncu's own command line ("/path/to/ncu --set full ... PROGRAM ARGS") as
# a length-prefixed (protobuf) string; ncu_report's Python API does not expose the session, so it is
# found in the bytes: printable text starting at an ncu executable, its length from the varint before it.
_NCU_CMD = re.compile(rb"(?:/[\x21-\x7e]*/)?ncu(?:\.exe)? -[\x20-\x7e]+")
_SCAN_BYTES = 64 << 20  # the session block sits after the results; reports above 64 MiB are not scanned


# ncu options that take no value (ncu --help); every other option consumes the next word unless written
# --option=value. The first word that is neither an option nor an option's value is the program.
_NCU_FLAGS = frozenset({
    "-f", "--force-overwrite", "--csv", "--quiet", "--nvtx", "--verbose", "--print-fp", "--print-rule-details",
    "--print-metric-attribution", "--open-in-ui", "--disable-extra-suffixes", "--call-stack", "--null-stdin",
    "--list-sets", "--list-sections", "--list-rules", "--list-chips", "--query-metrics", "--version", "-v",
    "--help", "-h", "--no-summary",
})


def split_ncu_command(command: str) -> tuple[list[str], list[str]]:
    """``ncu OPTIONS PROGRAM ARGS`` → (ncu's argv, the program's argv); ([], []) when it is not one."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return [], []
    if not words or os.path.basename(words[0]) not in ("ncu", "ncu.exe"):
        return [], []
    i = 1
    while i < len(words):
        w = words[i]
        if w == "--":
            i += 1
            break
        if not w.startswith("-"):
            break
        i += 1 if (w in _NCU_FLAGS or "=" in w) else 2
    return words[:i], words[i:]


def session_command(path: Path) -> str:
    """The ``ncu ...`` command line recorded in an .ncu-rep, or "" when none is found."""
    with open(path, "rb") as f:
        data = f.read(_SCAN_BYTES)
    for m in _NCU_CMD.finditer(data):
        start = m.start()
        # decode the varint length that precedes the string (its last byte < 0x80, earlier ones ≥ 0x80)
        i = start - 1
        if i < 0 or data[i] >= 0x80:
            continue
        j = i
        while j - 1 >= 0 and data[j - 1] >= 0x80 and i - j < 4:
            j -= 1
        length = 0
        for shift, b in enumerate(data[j:i + 1]):
            length |= (b & 0x7F) << (7 * shift)
        text = data[start:start + length]
        if length <= len(m.group(0)) and len(text) == length:
            return text.decode("ascii").strip()
    return ""


def _launch(mod: ModuleType, action, launch_id: int, source: str) -> KernelLaunch:
    name = action.name()
    names = action.metric_names() if name else ()
    if not name or not names:
        raise InputError(
            f"{source}: damaged or truncated Nsight Compute report (result {launch_id} has no "
            "kernel name or no metrics)"
        )
    demangled = action.name(mod.IAction.NameBase_DEMANGLED) or name
    metrics = {}
    kind_string = mod.IMetric.ValueKind_STRING
    kinds_int = (mod.IMetric.ValueKind_UINT32, mod.IMetric.ValueKind_UINT64)
    for n in names:
        m = action.metric_by_name(n)
        if m is None or not m.has_value():
            continue
        kind = m.kind()
        if kind == kind_string:
            value = m.as_string()
        elif kind in kinds_int:
            value = float(m.as_uint64())
        else:
            value = m.as_double()
        metrics[n] = Metric(value, m.unit() or "")
    launch = KernelLaunch(
        id=launch_id,
        name=bare_name(demangled) if demangled else name,
        demangled=demangled,
        block=_dim3(metrics, "launch__block_dim"),
        grid=_dim3(metrics, "launch__grid_dim"),
        device=_int_text(metrics, "launch__device_id"),
        cc=_cc(metrics),
        metrics=metrics,
        source=source,
        format="ncu-rep",
    )
    launch.rules = [_rule(d) for d in action.rule_results_as_dicts() if d.get("rule_message")]
    return launch


def _rule(d: dict) -> RuleResult:
    msg = d.get("rule_message") or {}
    speedup = d.get("speedup_estimation") or {}
    value = speedup.get("speedup")
    return RuleResult(
        name=d.get("rule_identifier", ""),
        type=_MSG_TYPE.get(msg.get("type"), str(msg.get("type", ""))),
        description=plain_text(msg.get("message", "")),
        section=d.get("section_identifier", ""),
        speedup_type=_SPEEDUP_TYPE.get(speedup.get("type"), "") if speedup else "",
        estimated_speedup=float(value) if value is not None else None,  # percent, as in the CSV
    )


def plain_text(message: str) -> str:
    """ncu rule markup as the CSV pages print it.

    ``@url:Profiling Guide:https://...@`` → ``Profiling Guide (https://...)``;
    ``@section:MemoryWorkloadAnalysis:Memory Workload Analysis@`` → ``Memory Workload Analysis``.
    """

    def sub(m: re.Match) -> str:
        kind, body = m.group(1), m.group(2)
        if kind == "url":
            text, _, url = body.partition(":")
            return f"{text} ({url})" if url else text
        return body.split(":", 1)[1] if ":" in body else body

    return _MARKUP.sub(sub, message)


def _dim3(metrics: dict[str, Metric], prefix: str) -> Optional[tuple[int, int, int]]:
    vals = [metrics.get(f"{prefix}_{c}") for c in "xyz"]
    if any(v is None or not v.is_number for v in vals):
        return None
    return tuple(int(v.value) for v in vals)  # type: ignore[return-value]


def _int_text(metrics: dict[str, Metric], name: str) -> Optional[str]:
    m = metrics.get(name)
    return str(int(m.value)) if m is not None and m.is_number else None


def _cc(metrics: dict[str, Metric]) -> Optional[str]:
    major = _int_text(metrics, "device__attribute_compute_capability_major")
    minor = _int_text(metrics, "device__attribute_compute_capability_minor")
    return f"{major}.{minor}" if major is not None and minor is not None else None


def _is_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start >= len(head) - 3  # only a multi-byte character cut at the end
    return True
