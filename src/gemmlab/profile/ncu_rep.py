"""Reader for ``.ncu-rep`` reports through NVIDIA's ``ncu_report`` module.

The module that ships with Nsight Compute (``<ncu>/extras/python/ncu_report.py``) is preferred,
since it matches the ncu that wrote the report; without ncu, the PyPI package ``ncu-report``
reads reports on a machine with no GPU. Every range's every action (profiled launch) becomes one
KernelLaunch: the metrics gemmlab reads (``needed``; all metrics with a value with
``metrics="all"``; instanced metrics keep their aggregate, as the raw page does), launch geometry
from ``launch__block_dim_*``/``launch__grid_dim_*``, the compute capability from
``device__attribute_compute_capability_*``, and ncu's rule results with their message markup
turned into the plain text the CSV pages show.

Speed (a 20-launch ``--set full`` report: docs/results/analyze_speed.md; 90 launches:
docs/results/load-scale-2026-11-25/): the report is hashed and looked up in the cache of decoded
records (``rep_cache``); on a miss, a lean temporary copy without the GUI's section bodies, the
kernels' sources and the metrics gemmlab does not read (``rep_strip``; made while the report is
hashed when the cache surely misses) is decoded by child processes (``ncu_rep_isolated``), which
print the records as JSON (``decode`` → ``to_launches``).
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from typing import Optional, Sequence

from gemmlab.errors import InputError, ToolMissing, UserError
from gemmlab.profile import needed, protobuf
from gemmlab.profile.protobuf import varint_of
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


def read_rep(path: Path, metrics: Optional[str] = None) -> list[KernelLaunch]:
    """Every profiled launch in the report at ``path``.

    ``metrics``: ``"needed"`` (the default, or ``GEMMLAB_NCU_REP_METRICS``) keeps the metrics gemmlab
    reads (``gemmlab.profile.needed``), ``"all"`` every metric with a value. The decoded records are
    cached by the report's content (``rep_cache``); on a miss the report is read in fresh child
    processes, one per share of its launches on a large report (``ncu_rep_isolated``: the crash this
    avoids), unless GEMMLAB_NCU_REP_ISOLATE=0.
    """
    from gemmlab.profile import rep_cache, rep_strip

    path = Path(path)
    sel = needed.selection(metrics)
    check_head(path)
    data = path.read_bytes() if path.stat().st_size <= _READ_WHOLE else None  # hashed and stripped
    keep = None if sel == needed.ALL else needed.is_needed
    key, pieces = _key_and_pieces(path, sel, data, keep)
    payload = rep_cache.get(key)
    if payload is not None:
        try:
            if payload.get("format") == PAYLOAD_FORMAT:
                return to_launches(payload, str(path), session_command(path))
        except (KeyError, TypeError, ValueError, IndexError) as e:  # an entry from another gemmlab
            log.debug("%s: cached records unusable (%r); decoding the report", path, e)
        payload = None
    if payload is None:
        lean_copy = (rep_strip.lean_copy(path, data, keep, pieces) if data is not None
                     else contextlib.nullcontext(path))
        with lean_copy as lean:  # the same values, decoded ~15x faster
            try:
                payload = _decode_all(lean, sel, str(path))
            except ToolMissing:
                raise
            except UserError:
                if lean == path:
                    raise
                # the lean copy is gemmlab's: read the report as written before blaming it
                log.info("%s: reading its lean copy failed; reading the report as written", path)
                payload = _decode_all(path, sel, str(path))
        rep_cache.put(key, payload)
    del data, pieces
    return to_launches(payload, str(path), session_command(path))


def _key_and_pieces(path: Path, sel: str, data: Optional[bytes], keep) -> tuple:
    """(the report's cache key, its lean copy's pieces or ``rep_strip.NOT_STRIPPED``). When the cache
    surely misses (no entry of the report's size: ``rep_cache.may_hold``), the report is stripped
    while it is hashed: hashlib lets go of the interpreter lock, and both take ~0.2 s on a 300 MB
    report (on one free CPU they take turns: nothing is lost)."""
    from concurrent.futures import ThreadPoolExecutor

    from gemmlab.profile import rep_cache, rep_strip

    if (data is None or not rep_strip.enabled() or not rep_cache.enabled()
            or rep_cache.may_hold(len(data), sel)):
        return rep_cache.key(path, sel, data), rep_strip.NOT_STRIPPED
    with ThreadPoolExecutor(1) as pool:
        hashing = pool.submit(rep_cache.key, path, sel, data)
        pieces = rep_strip.lean_pieces(data, keep)
        return hashing.result(), pieces


def _decode_all(path: Path, sel: str, source: str) -> dict:
    from gemmlab.profile import ncu_rep_isolated

    if ncu_rep_isolated.isolate():
        return ncu_rep_isolated.read_in_children(path, sel, source=source)
    return decode(path, sel, source=source)


_READ_WHOLE = 2 << 30  # reports up to 2 GiB are read into memory once (hash, lean copy)


def check_head(path: Path) -> bool:
    """Whether the file starts with the report header; an InputError for a text file."""
    with open(path, "rb") as f:
        head = f.read(4096)
    has_magic = head.startswith(MAGIC)
    if not has_magic and _is_text(head):
        raise InputError(f"{path}: is text, not an Nsight Compute report; expected a .ncu-rep written by ncu -o")
    return has_magic


PAYLOAD_FORMAT = "gemmlab-ncu-rep-records/1"


def decode(path: Path, sel: str = needed.NEEDED, shard: int = 0, shards: int = 1,
           source: Optional[str] = None) -> dict:
    """The launches of the report whose index is ``shard`` modulo ``shards``, decoded through
    ncu_report, as a JSON-able payload (``to_launches`` makes records of it).

    Each launch: ``{"id", "function", "demangled", "metrics": [names, values, units], "rules": [...]}``;
    ``"total"`` is the number of launches in the whole report. ``source`` names the report in
    errors (the user's file when ``path`` is its lean copy).
    """
    lean = source is not None and source != str(path)  # a lean copy may keep no metric of a launch
    source = source or str(path)
    has_magic = check_head(path)
    mod = ncu_report_module()
    try:
        ctx = mod.load_report(str(path))
    except (FileNotFoundError, RuntimeError, OSError) as e:
        raise InputError(f"{source}: ncu_report cannot load it ({e}); expected a .ncu-rep written by ncu -o") from None
    n_ranges = ctx.num_ranges() if ctx is not None else None
    if not n_ranges:  # ncu_report answers None, not an exception, for a file it cannot parse
        if has_magic:
            raise InputError(f"{source}: damaged or truncated Nsight Compute report (ncu_report finds no results in it)")
        raise InputError(f"{source}: not an Nsight Compute report (binary data without the NVR header); "
                         "expected a .ncu-rep written by ncu -o")
    keep = None if sel == needed.ALL else needed.is_needed
    units: dict[str, str] = {}  # IMetric.unit() is slow the first time per name; one name has one unit
    launches = []
    index = 0
    for r in range(n_ranges):
        rng = ctx.range_by_idx(r)
        for j in range(rng.num_actions() or 0):
            if index % shards == shard:
                launches.append(_action(mod, rng.action_by_idx(j), index, source, keep, units, lean))
            index += 1
    return {"format": PAYLOAD_FORMAT, "selection": sel, "total": index, "launches": launches}


def to_launches(payload: dict, source: str, command_line: str = "") -> list[KernelLaunch]:
    """Records from a ``decode`` payload (merged over shards, or from the cache)."""
    launches = []
    for d in payload["launches"]:
        names, values, units = d["metrics"]
        metrics = dict(zip(names, map(Metric, values, units)))
        demangled, function = d["demangled"], d["function"]
        launches.append(KernelLaunch(
            id=d["id"],
            name=(bare_name(demangled) if demangled else "") or function,
            demangled=demangled,
            block=_dim3(metrics, "launch__block_dim"),
            grid=_dim3(metrics, "launch__grid_dim"),
            device=_int_text(metrics, "launch__device_id"),
            cc=_cc(metrics),
            metrics=metrics,
            rules=[RuleResult(*r) for r in d["rules"]],
            source=source,
            format="ncu-rep",
            command_line=command_line,
        ))
    if not launches:
        raise InputError(f"{source}: the report holds no profiled kernel launches")
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
    ncu, app = _split_cached(command)
    return list(ncu), list(app)


@functools.lru_cache(maxsize=256)
def _split_cached(command: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # every launch of a report records the same command line: split it once (a whole-program
    # overview asks once per launch). ncu records its argv joined by single spaces, unquoted
    # (`--policy {"config":"x"}` for the argument '{"config":"x"}'), so splitting at whitespace
    # gives back every argument that held none; shlex.split would drop its quote characters.
    ncu, app = split_ncu_words(command.split())
    return tuple(ncu), tuple(app)


def split_ncu_words(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """An argv already split into words → (ncu's argv, the program's argv); ([], []) when not ncu's."""
    words = list(words)
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
    """The ``ncu ...`` command line recorded in an .ncu-rep, or "" when none is found.

    The report is a file header and blocks, each a length-prefixed (protobuf) header followed by its
    payload (the results); the session info sits in a block header, so only the headers are searched,
    walked by their lengths (a few KB read for a report of any size). A file whose blocks do not walk
    is scanned whole, up to 64 MiB.
    """
    headers = _block_headers(path)
    if headers is not None:
        for header in headers:
            command = _find_command(header)
            if command:
                return command
        return ""
    with open(path, "rb") as f:
        return _find_command(f.read(_SCAN_BYTES))


_NCU_AT = re.compile(rb"ncu(?:\.exe)? -[\x20-\x7e]+")
_PATH_BYTES = frozenset(range(0x21, 0x7F))


def _find_command(data: bytes) -> str:
    for m in _NCU_AT.finditer(data):
        start = m.start()
        if start > 0 and data[start - 1] == 0x2F:  # a path before it: from its first "/" on
            i = start - 1
            first = i
            while i - 1 >= 0 and data[i - 1] in _PATH_BYTES:
                i -= 1
                if data[i] == 0x2F:
                    first = i
            start = first
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
        if length <= m.end() - start and len(text) == length:
            return text.decode("ascii").strip()
    return ""


def _block_headers(path: Path) -> Optional[list[bytes]]:
    """The block headers of a report, or None when the file does not walk as one."""
    headers = []
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(8)
            if len(head) < 8 or not head.startswith(MAGIC):
                return None
            pos = 8 + int.from_bytes(head[4:8], "little")
            while pos < size:
                f.seek(pos)
                n = int.from_bytes(f.read(4), "little")
                header = f.read(n)
                if len(header) != n:
                    return None
                payload = varint_of(protobuf.fields(header), 5)  # BlockHeader.PayloadSize
                headers.append(header)
                pos += 4 + n + payload
            return headers if pos == size else None
    except (OSError, ValueError, IndexError):
        return None


def _action(mod: ModuleType, action, launch_id: int, source: str, keep, units: dict[str, str],
            lean: bool = False) -> dict:
    name = action.name()
    names = action.metric_names() if name else ()
    if not name or (not names and not lean):
        raise InputError(
            f"{source}: damaged or truncated Nsight Compute report (result {launch_id} has no "
            "kernel name or no metrics)"
        )
    demangled = action.name(mod.IAction.NameBase_DEMANGLED) or name
    if keep is not None:
        names = [n for n in names if keep(n)]
    IMetric = mod.IMetric
    by_name, has_value, kind_of = mod.IAction.metric_by_name, IMetric.has_value, IMetric.kind
    as_string, as_uint64, as_double, unit_of = IMetric.as_string, IMetric.as_uint64, IMetric.as_double, IMetric.unit
    kind_string = IMetric.ValueKind_STRING
    kinds_int = (IMetric.ValueKind_UINT32, IMetric.ValueKind_UINT64)
    out_names, out_values, out_units = [], [], []
    for n in names:
        m = by_name(action, n)
        if m is None or not has_value(m):
            continue
        kind = kind_of(m)
        if kind == kind_string:
            value = as_string(m)
        elif kind in kinds_int:
            value = float(as_uint64(m))
        else:
            value = as_double(m)
        unit = units.get(n)
        if unit is None:
            unit = units[n] = unit_of(m) or ""
        out_names.append(n)
        out_values.append(value)
        out_units.append(unit)
    rules = [_fields(_rule(d)) for d in action.rule_results_as_dicts() if d.get("rule_message")]
    return {"id": launch_id, "function": name, "demangled": demangled,
            "metrics": [out_names, out_values, out_units], "rules": rules}


_RULE_FIELDS = tuple(f.name for f in dataclasses.fields(RuleResult))


def _fields(rule: RuleResult) -> tuple:
    """``dataclasses.astuple`` of a rule (its fields are str, float or None), without its deep copy."""
    return tuple(getattr(rule, name) for name in _RULE_FIELDS)


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
