"""Building Nsight Compute command lines: a pure function from options to an argv list.

``gemmlab analyze`` prints these to say how to collect missing evidence; ``gemmlab profile`` runs
them. Nothing here runs ncu or touches files.

    >>> render(ncu_command(["./ladder"], kernel_name="gemm_tiled16", sections=["WarpStateStats"],
    ...                    launch_skip=1, launch_count=1, output="gemm_tiled16_evidence"))
    "ncu --section WarpStateStats -k 'regex:^gemm_tiled16$' --launch-skip 1 --launch-count 1 --clock-control none -o gemm_tiled16_evidence ./ladder"
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from typing import Optional, Sequence

from gemmlab.errors import UserError

CLOCK_CONTROL = ("base", "none")
CACHE_CONTROL = ("all", "none")
REPLAY_MODES = ("kernel", "application", "range", "app-range")
TARGET_PROCESSES = ("all", "application-only")
NAME_BASES = ("function", "demangled", "mangled")  # ncu --kernel-name-base
_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")  # section and set identifiers
_METRIC = re.compile(r"^[^\s,]+$")  # one metric name (or regex:/group:/breakdown: form), no commas


@functools.lru_cache(maxsize=8192)
def _metric_name(m: str) -> bool:
    """Whether ``m`` is one metric name (cached: a capture's diagnoses build commands from the same few
    hundred names thousands of times)."""
    return bool(_METRIC.match(m))

# The order ncu lists its sections in (SpeedOfLight first); commands list sections in this order.
SECTION_ORDER = (
    "SpeedOfLight", "SpeedOfLight_RooflineChart", "LaunchStats", "Occupancy", "ComputeWorkloadAnalysis",
    "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Chart", "MemoryWorkloadAnalysis_Tables",
    "SchedulerStats", "WarpStateStats", "InstructionStats", "SourceCounters", "WorkloadDistribution",
)


def _bad(option: str, value: object, allowed: str) -> UserError:
    return UserError(f"ncu option {option}={value!r}: expected {allowed}")


@dataclass(frozen=True)
class NcuOptions:
    """Everything that shapes one ncu invocation; validated at construction."""

    kernel_name: Optional[str] = None  # exact function name → -k regex:^NAME$
    kernel_regex: Optional[str] = None  # a regex of your own → -k regex:EXPR
    # what -k matches: ncu's default "function" (the bare name), or "demangled" / "mangled"
    kernel_name_base: Optional[str] = None
    sections: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    set_name: Optional[str] = None
    launch_skip: Optional[int] = None
    launch_count: Optional[int] = None
    output: Optional[str] = None  # -o NAME (ncu appends .ncu-rep)
    clock_control: str = "none"  # measure at the clocks a user gets, not ncu's locked base clock
    cache_control: Optional[str] = None
    replay_mode: Optional[str] = None
    target_processes: Optional[str] = None
    import_source: bool = False
    force_overwrite: bool = False  # -f: only when the caller asked to overwrite
    nvtx_include: tuple[str, ...] = ()
    # "process": an NVTX push/pop range opened on one thread covers the launches of every thread of
    # the process. PyTorch's autograd runs the backward pass on a thread of its own, so with ncu's
    # default (per-thread ranges) `--range step` sees the forward and the optimizer, not the backward.
    nvtx_scope: Optional[str] = None
    extra: tuple[str, ...] = ()
    ncu: str = "ncu"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sections", tuple(self.sections))
        object.__setattr__(self, "metrics", tuple(self.metrics))
        object.__setattr__(self, "nvtx_include", tuple(self.nvtx_include))
        object.__setattr__(self, "extra", tuple(self.extra))
        if self.kernel_name is not None and self.kernel_regex is not None:
            raise UserError("ncu options kernel_name and kernel_regex: give one of them, not both")
        if self.kernel_name is not None and not self.kernel_name.strip():
            raise _bad("kernel_name", self.kernel_name, "a non-empty kernel function name")
        if self.kernel_regex is not None:
            try:
                re.compile(self.kernel_regex)
            except re.error as e:
                raise _bad("kernel_regex", self.kernel_regex, f"a valid regular expression ({e})") from None
        for s in self.sections:
            if not _IDENT.match(s):
                raise _bad("section", s, "a section identifier such as WarpStateStats")
        if len(set(self.sections)) != len(self.sections):
            raise _bad("sections", list(self.sections), "each section once")
        if self.kernel_name_base not in (None,) + NAME_BASES:
            raise _bad("kernel_name_base", self.kernel_name_base, " or ".join(NAME_BASES))
        if self.nvtx_scope not in (None, "thread", "process"):
            raise _bad("nvtx_scope", self.nvtx_scope, "'thread' or 'process'")
        for m in self.metrics:
            if not _metric_name(m):
                raise _bad("metric", m, "one metric name without spaces or commas")
        if self.set_name is not None and not _IDENT.match(self.set_name):
            raise _bad("set_name", self.set_name, "a set identifier such as full or detailed")
        for name in ("launch_skip", "launch_count"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < (0 if name == "launch_skip" else 1)):
                raise _bad(name, v, "an integer ≥ 0" if name == "launch_skip" else "an integer ≥ 1")
        if self.clock_control not in CLOCK_CONTROL:
            raise _bad("clock_control", self.clock_control, " or ".join(CLOCK_CONTROL))
        if self.cache_control is not None and self.cache_control not in CACHE_CONTROL:
            raise _bad("cache_control", self.cache_control, " or ".join(CACHE_CONTROL))
        if self.replay_mode is not None and self.replay_mode not in REPLAY_MODES:
            raise _bad("replay_mode", self.replay_mode, ", ".join(REPLAY_MODES))
        if self.target_processes is not None and self.target_processes not in TARGET_PROCESSES:
            raise _bad("target_processes", self.target_processes, " or ".join(TARGET_PROCESSES))
        if self.output is not None and (not self.output.strip() or self.output.startswith("-")):
            raise _bad("output", self.output, "a report file name (ncu appends .ncu-rep)")
        if not self.ncu.strip():
            raise _bad("ncu", self.ncu, "the ncu executable")


def kernel_filter(opts: NcuOptions) -> Optional[str]:
    if opts.kernel_name is not None:
        return "regex:^" + re.escape(opts.kernel_name) + "$"
    if opts.kernel_regex is not None:
        return "regex:" + opts.kernel_regex
    return None


def ncu_argv(app_argv: Sequence[str], opts: NcuOptions) -> list[str]:
    """The full argv: ``ncu [options] APP [APP ARGS]``."""
    if not app_argv or not str(app_argv[0]).strip():
        raise _bad("app_argv", list(app_argv), "the program to profile and its arguments")
    argv = [opts.ncu]
    if opts.set_name:
        argv += ["--set", opts.set_name]
    for s in sort_sections(opts.sections):
        argv += ["--section", s]
    if opts.metrics:
        argv += ["--metrics", ",".join(opts.metrics)]
    if opts.nvtx_include:
        argv.append("--nvtx")
        for r in opts.nvtx_include:
            argv += ["--nvtx-include", r]
        if opts.nvtx_scope:
            argv += ["--nvtx-push-pop-scope", opts.nvtx_scope]
    k = kernel_filter(opts)
    if k is not None:
        if opts.kernel_name_base and opts.kernel_name_base != "function":
            argv += ["--kernel-name-base", opts.kernel_name_base]
        argv += ["-k", k]
    if opts.launch_skip is not None:
        argv += ["--launch-skip", str(opts.launch_skip)]
    if opts.launch_count is not None:
        argv += ["--launch-count", str(opts.launch_count)]
    argv += ["--clock-control", opts.clock_control]
    if opts.cache_control:
        argv += ["--cache-control", opts.cache_control]
    if opts.replay_mode:
        argv += ["--replay-mode", opts.replay_mode]
    if opts.target_processes:
        argv += ["--target-processes", opts.target_processes]
    if opts.import_source:
        argv += ["--import-source", "yes"]
    if opts.force_overwrite:
        argv.append("-f")
    if opts.output:
        argv += ["-o", opts.output]
    argv += list(opts.extra)
    argv += [str(a) for a in app_argv]
    return argv


def ncu_command(app_argv: Sequence[str], kernel_regex: Optional[str] = None, *, kernel_name: Optional[str] = None,
                sections: Sequence[str] = (), metrics: Sequence[str] = (), launch_skip: Optional[int] = None,
                launch_count: Optional[int] = None, output: Optional[str] = None, clock_control: str = "none",
                extra: Sequence[str] = (), **options) -> list[str]:
    """Convenience form of ``ncu_argv(app_argv, NcuOptions(...))``."""
    opts = NcuOptions(kernel_name=kernel_name, kernel_regex=kernel_regex, sections=tuple(sections),
                      metrics=tuple(metrics), launch_skip=launch_skip, launch_count=launch_count, output=output,
                      clock_control=clock_control, extra=tuple(extra), **options)
    return ncu_argv(app_argv, opts)


def sort_sections(sections: Sequence[str]) -> list[str]:
    order = {s: i for i, s in enumerate(SECTION_ORDER)}
    return sorted(dict.fromkeys(sections), key=lambda s: (order.get(s, len(order)), s))


def render(argv: Sequence[str]) -> str:
    """One shell line, quoted so it runs as printed."""
    return shlex.join([str(a) for a in argv])
