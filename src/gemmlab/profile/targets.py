"""What ``gemmlab profile`` runs under ncu, which launches it profiles, and where the report goes.

Three kinds of target:

- a ladder rung: ``python -m gemmlab.profile.target --rung R --shape M,N,K --warmup W`` launches the
  rung W times, then once more inside the NVTX range ``gemmlab``. ncu profiles that last launch:
  ``-k regex:^<kernel>$ --launch-skip W --launch-count 1`` when the kernel's symbol is known before
  the run, else ``--nvtx --nvtx-include gemmlab/`` (the autotuned rung picks its kernel at run time);
- ``--script FILE.py [ARGS]``: ``python FILE.py ARGS``, filtered by ``--range NAME`` (an NVTX
  push/pop range) or ``--kernel REGEX`` (one of the two is required: a script launches many kernels);
- ``-- CMD ARGS``: the command as given, optionally filtered the same way.

Every run uses ``--target-processes all`` (Python launches through child processes in some setups)
and ``--clock-control none`` (measure at the clocks a user gets, not ncu's locked base clock).

A report is never overwritten without asking: an existing ``-o`` path is refused unless ``--force``,
or unless the user says yes on a terminal.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from gemmlab.errors import InputError, UserError

NVTX_RANGE = "gemmlab"  # the range gemmlab.profile.target pushes around the profiled launch
TARGET_MODULE = "gemmlab.profile.target"
DEFAULT_SIZE = 2048  # M = N = K of the first seed article
DEFAULT_WARMUP = 5  # launches before the profiled one: compile/JIT, first-touch and clock ramp-up are out
DEFAULT_DIR = Path("gemmlab-profiles")
REPORT_SUFFIX = ".ncu-rep"


@dataclass(frozen=True)
class Target:
    """A program to run under ncu and the launches of it to profile."""

    app_argv: tuple[str, ...]
    label: str  # names the default report file
    kernel_regex: Optional[str] = None  # ncu -k regex:<this>
    nvtx_range: Optional[str] = None  # ncu --nvtx --nvtx-include "<this>/"
    launch_skip: int = 0
    launch_count: int = 1
    import_source: bool = False  # embed the source files in the report (ncu --import-source yes)

    def __post_init__(self) -> None:
        if not self.app_argv or not self.app_argv[0]:
            raise InputError("the command to profile is empty; expected a program and its arguments after --")
        if self.launch_skip < 0:
            raise InputError(f"{self.launch_skip}: expected 0 or more", option="launch_skip")
        if self.launch_count < 1:
            raise InputError(f"{self.launch_count}: expected 1 or more", option="launch_count")
        if self.kernel_regex is not None:
            try:
                re.compile(self.kernel_regex)
            except re.error as e:
                raise InputError(f"{self.kernel_regex!r}: not a valid regular expression ({e})", option="kernel") from None
        if self.nvtx_range is not None and (not self.nvtx_range or "/" in self.nvtx_range):
            raise InputError(f"{self.nvtx_range!r}: expected an NVTX range name without '/'", option="range")

    @property
    def nvtx_include(self) -> Optional[str]:
        """ncu's filter for a push/pop range: the name with a trailing '/'."""
        return None if self.nvtx_range is None else f"{self.nvtx_range}/"

    def describe_filter(self) -> str:
        parts = []
        if self.kernel_regex is not None:
            parts.append(f"-k regex:{self.kernel_regex}")
        if self.nvtx_range is not None:
            parts.append(f"--nvtx-include {self.nvtx_include}")
        if self.launch_skip:
            parts.append(f"--launch-skip {self.launch_skip}")
        return " ".join(parts) or "any kernel"

    @property
    def filtered(self) -> bool:
        return self.kernel_regex is not None or self.nvtx_range is not None


def launched_kernel(rung_name: str, M: int, N: int, K: int) -> Optional[str]:
    """The symbol ncu will see for ``rung_name`` at this shape, or None when only the run knows it.

    A vector rung launches its scalar twin when the shape rules out 16-byte accesses (the target's
    CuPy allocations are 256-byte aligned, so alignment never forces the twin); the autotuned rung
    resolves its kernel from the tuning records at run time, the dispatch rung its kernels (one to
    three launches) from the shape.
    """
    from gemmlab.kernels import registry
    from gemmlab.kernels.ladders import scalar_twin

    rung = registry.get(rung_name)
    if registry.abstract(rung.name):  # prepare() resolves these at run time
        return None
    chosen = rung if rung.accepts(M, N, K) else scalar_twin(rung)
    return chosen.kernel


def rung_target(rung: str, shape: tuple[int, int, int], warmup: int = DEFAULT_WARMUP,
                python: str = sys.executable,
                resolve: Callable[[str, int, int, int], Optional[str]] = launched_kernel) -> Target:
    if warmup < 0:
        raise InputError(f"{warmup}: expected 0 or more", option="warmup")
    M, N, K = shape
    kernel = resolve(rung, M, N, K)
    app = (python, "-m", TARGET_MODULE, "--rung", rung, "--shape", f"{M},{N},{K}", "--warmup", str(warmup))
    label = f"{rung}_{M}x{N}x{K}"
    if rung == "dispatch":  # one main kernel per call, between the copies and the reduction
        from gemmlab.kernels.paths import MAIN_KERNEL_REGEX

        return Target(app, label, kernel_regex=MAIN_KERNEL_REGEX, launch_skip=warmup, launch_count=1)
    if rung in ("dispatch_bf16", "dispatch_fp8"):  # the main kernel, between copies and reduction
        return Target(app, label, kernel_regex=rf"^gemmlab_{rung}_", launch_skip=warmup,
                      launch_count=1)
    if kernel is None:  # only the run knows the kernel: profile what runs inside the range
        return Target(app, label, nvtx_range=NVTX_RANGE, launch_count=1)
    return Target(app, label, kernel_regex=f"^{re.escape(kernel)}$", launch_skip=warmup, launch_count=1)


def script_target(script: str, args: Sequence[str] = (), nvtx_range: Optional[str] = None,
                  kernel: Optional[str] = None, launch_skip: int = 0, launch_count: int = 1,
                  python: str = sys.executable) -> Target:
    p = Path(script)
    if not p.is_file():
        raise InputError(f"{script}: no such file; expected a Python script", option="script")
    if nvtx_range is None and kernel is None:
        raise InputError(f"--script {script}: name the kernels to profile with --range NAME (an NVTX push/pop "
                         f"range in the script) or --kernel REGEX")
    return Target((python, str(p), *args), p.stem, kernel_regex=kernel, nvtx_range=nvtx_range,
                  launch_skip=launch_skip, launch_count=launch_count)


def command_target(argv: Sequence[str], nvtx_range: Optional[str] = None, kernel: Optional[str] = None,
                   launch_skip: int = 0, launch_count: int = 1) -> Target:
    if not argv:
        raise InputError("nothing to profile: give a ladder rung, --script FILE.py, or -- CMD ARGS")
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(argv[0]).name) or "profile"
    return Target(tuple(argv), label, kernel_regex=kernel, nvtx_range=nvtx_range,
                  launch_skip=launch_skip, launch_count=launch_count)


# ----------------------------------------------------------------------------- the report file

def report_path(requested: Optional[str], label: str, full: bool, directory: Path = DEFAULT_DIR) -> Path:
    """Where the .ncu-rep goes: ``-o`` as given (``.ncu-rep`` added, as ncu adds it), else
    ``gemmlab-profiles/<label>[_full].ncu-rep``."""
    if requested:
        p = Path(requested)
        return p if p.name.endswith(REPORT_SUFFIX) else p.with_name(p.name + REPORT_SUFFIX)
    return directory / f"{label}{'_full' if full else ''}{REPORT_SUFFIX}"


def may_overwrite(path: Path, force: bool, isatty: bool, confirm: Callable[[str], bool]) -> bool:
    """Whether ncu must be told to overwrite (``-f``): the file exists and the user agreed.

    Never overwrites silently: ``--force``, or a yes on a terminal; otherwise one line naming the file.
    """
    if path.is_dir():
        raise InputError(f"-o {path}: is a directory; expected a report file path")
    if not path.exists():
        return False
    if force:
        return True
    if isatty:
        if confirm(f"{path} exists. Overwrite it?"):
            return True
        raise UserError(f"{path} exists and was kept; choose another path with -o", code=1)
    raise InputError(f"{path} already exists; pass --force to overwrite it, or --out PATH to write elsewhere")


# ----------------------------------------------------------------------------- the ncu command

def build_argv(ncu: str, target: Target, collection, output: Path, overwrite: bool,
               process_scope: Optional[bool] = None) -> list[str]:
    """The exact ncu argument list, through the analyzer's command builder (gemmlab.profile.command).

    An NVTX range covers the launches of every thread of the process (``--nvtx-push-pop-scope
    process``) unless ``process_scope`` is False - an ncu without that option
    (``runner.has_option``); None (not known) keeps it, as the ncu gemmlab is tested with has it."""
    from gemmlab.profile.command import ncu_command

    return ncu_command(
        list(target.app_argv),
        kernel_regex=target.kernel_regex,
        sections=list(collection.sections),
        metrics=list(collection.metrics),
        set_name=collection.set_name,
        nvtx_include=(target.nvtx_include,) if target.nvtx_include else (),
        nvtx_scope="process" if target.nvtx_include and process_scope is not False else None,
        launch_skip=target.launch_skip or None,
        launch_count=target.launch_count,
        output=str(output),
        clock_control="none",
        target_processes="all",
        force_overwrite=overwrite,
        import_source=target.import_source,
        ncu=ncu,
    )
