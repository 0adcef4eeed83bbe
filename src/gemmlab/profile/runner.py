"""Run Nsight Compute as a subprocess and turn what it prints into results or one-line errors.

- ``find_ncu`` looks for ``ncu`` in a fixed order and, when it is nowhere, says where it looked
  and how to point at it.
- ``run_ncu`` runs an argument list with a timeout and captures stdout/stderr and wall time.
- ``read_output`` parses ncu's own lines: ``==PROF== Profiling "k" - 0: 0%....100% - 38 passes``
  (kernel, launch counter, replay passes), ``==PROF== Report: PATH``, ``==WARNING==``/``==ERROR==``.
- ``check`` raises one clear ``UserError`` per failure (missing counter permission, the program
  crashed, ncu's own error, nothing profiled); ``NoKernelsProfiled`` carries the run so the caller
  can list what did run (see ``list_kernels_argv``).

Texts matched here were captured from real ncu runs; tests/fixtures/ncu_output/README.md says where.
"""

from __future__ import annotations

import glob as _glob
import logging
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Sequence

from gemmlab.errors import ToolMissing, UserError

log = logging.getLogger(__name__)

ENV_NCU = "GEMMLAB_NCU"
# Where Nsight Compute installs itself (standalone installer / CUDA toolkit), newest version first.
NCU_GLOBS = ("/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu")
PERM_URL = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"
STDERR_TAIL_LINES = 3  # how many of the program's last stderr lines a crash message quotes


# ----------------------------------------------------------------------------- finding ncu

def _version_key(path: str) -> tuple:
    nums = re.findall(r"\d+", path)
    return tuple(int(n) for n in nums)


def _is_exe(p: str) -> bool:
    return os.path.isfile(p) and os.access(p, os.X_OK)


def find_ncu(
    explicit: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    which: Callable[[str], Optional[str]] = shutil.which,
    glob: Callable[[str], list[str]] = _glob.glob,
    is_exe: Callable[[str], bool] = _is_exe,
) -> str:
    """Path of the ncu to run: ``--ncu``, then $GEMMLAB_NCU, PATH, the usual install folders."""
    env = os.environ if env is None else env
    if explicit:
        if not is_exe(explicit):
            raise ToolMissing(f"--ncu {explicit}: not an executable file; expected the path of Nsight Compute's ncu")
        return explicit
    from_env = env.get(ENV_NCU)
    if from_env:
        if not is_exe(from_env):
            raise ToolMissing(f"{ENV_NCU}={from_env}: not an executable file; expected the path of Nsight Compute's ncu")
        return from_env
    on_path = which("ncu")
    if on_path:
        return on_path
    for pattern in NCU_GLOBS:
        hits = sorted((h for h in glob(pattern) if is_exe(h)), key=_version_key, reverse=True)
        if hits:
            return hits[0]
    raise ToolMissing(
        "ncu (Nsight Compute) not found: looked at --ncu, $" + ENV_NCU + ", PATH, " + ", ".join(NCU_GLOBS)
        + "; install Nsight Compute or point at it with --ncu PATH or " + ENV_NCU + "=PATH")


# ----------------------------------------------------------------------------- parsing its output

_MARK = re.compile(r"==(PROF|WARNING|ERROR)==")
# ==PROF== Profiling "k" - 0: 0%....50%....100% - 38 passes      (counter since ncu 2019.x)
# ==PROF== Profiling "k" - 0 (1/1): 0%....50%....100% - 1 pass   (recent: profiled/total)
# ==PROF== Profiling "k": 0%....50%....100% - 8 passes            (no counter)
_PROFILING = re.compile(
    r'^==PROF== Profiling "(?P<name>.*)"(?: - (?P<idx>\d+)(?: \(\d+/\d+\))?)?:'
    r'.*?(?:- (?P<passes>\d+) pass(?:es)?)?\s*$')
# the rest of a progress bar that a ==WARNING== interrupted: "....100% - 1 pass"
_PASSES_CONT = re.compile(r"^\.*(?:\d+%\.*)*\s*- (?P<passes>\d+) pass(?:es)?\s*$")
_REPORT = re.compile(r"^==PROF== Report: (?P<path>.+?)\s*$")
_APP_RC = re.compile(r"^==ERROR== The application returned an error code \((?P<rc>-?\d+)\)")
# ncu's generic follow-ups that add nothing to the first, specific error
_GENERIC_ERRORS = ("An error occurred while trying to profile", "The application returned an error code",
                   "Failed to profile")


@dataclass(frozen=True)
class ProfiledKernel:
    """One launch ncu profiled: its name as ncu printed it, ncu's launch counter, replay passes."""

    name: str
    index: Optional[int]
    passes: Optional[int]


@dataclass
class NcuMessages:
    kernels: list[ProfiledKernel] = field(default_factory=list)
    report: Optional[str] = None
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # ==ERROR== texts, continuation lines appended
    app_returncode: Optional[int] = None
    program_lines: list[str] = field(default_factory=list)  # stderr lines that are not ncu's

    @property
    def no_kernels_profiled(self) -> bool:
        return any(w.startswith("No kernels were profiled") for w in self.warnings)

    def max_passes(self) -> Optional[int]:
        ps = [k.passes for k in self.kernels if k.passes is not None]
        return max(ps) if ps else None


def _split_marked(line: str) -> tuple[str, str]:
    """(program text before ncu's marker, ncu's text from the marker on); ncu's part may be ''."""
    m = _MARK.search(line)
    if not m:
        return line, ""
    return line[:m.start()], line[m.start():]


def read_output(stdout: str, stderr: str) -> NcuMessages:
    """Parse ncu's ``==PROF==``/``==WARNING==``/``==ERROR==`` lines from both streams.

    ncu's marker may follow program output on the same line (no newline before it); an error
    text may continue on unprefixed lines; a progress bar cut by a warning ends on a line of its own.
    """
    out = NcuMessages()
    for stream_name, text in (("stdout", stdout), ("stderr", stderr)):
        error_open = False
        for raw in text.splitlines():
            program, ncu = _split_marked(raw.rstrip("\r"))
            program = program.strip()
            s = ncu.strip()
            if program:
                if error_open and not s and re.match(r"^(https?://|[a-z(])", program):
                    out.errors[-1] += " " + program  # "... Ensure that no\nother tool (like DCGM) ..."
                    continue
                error_open = False
                m = _PASSES_CONT.match(program)
                if m and out.kernels and out.kernels[-1].passes is None:
                    k = out.kernels[-1]
                    out.kernels[-1] = ProfiledKernel(k.name, k.index, int(m.group("passes")))
                    continue
                if stream_name == "stderr":
                    out.program_lines.append(program)
            if not s:
                continue
            error_open = False
            if s.startswith("==PROF=="):
                m = _PROFILING.match(s)
                if m:
                    out.kernels.append(ProfiledKernel(
                        name=m.group("name"),
                        index=int(m.group("idx")) if m.group("idx") else None,
                        passes=int(m.group("passes")) if m.group("passes") else None))
                    continue
                m = _REPORT.match(s)
                if m:
                    out.report = m.group("path")
            elif s.startswith("==WARNING=="):
                out.warnings.append(s[len("==WARNING=="):].strip())
            else:
                m = _APP_RC.match(s)
                if m:
                    out.app_returncode = int(m.group("rc"))
                out.errors.append(s[len("==ERROR=="):].strip())
                error_open = True
    return out


# ----------------------------------------------------------------------------- running it

@dataclass
class NcuRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    output: NcuMessages

    def to_dict(self) -> dict:
        return {"argv": self.argv, "returncode": self.returncode, "wall_s": self.wall_s,
                "report": self.output.report,
                "kernels": [k.__dict__ for k in self.output.kernels],
                "warnings": self.output.warnings, "errors": self.output.errors}


Runner = Callable[..., "subprocess.CompletedProcess[str]"]

_OPTIONS: dict[str, Optional[str]] = {}


def has_option(ncu: str, option: str, timeout_s: float = 60.0) -> Optional[bool]:
    """Whether ``ncu --help`` lists ``option`` (True/False), or None when ncu cannot be asked (not
    an executable, a timeout). The help text is read once per ncu path."""
    if ncu not in _OPTIONS:
        try:
            res = subprocess.run([ncu, "--help"], capture_output=True, text=True, timeout=timeout_s, check=False)
            _OPTIONS[ncu] = res.stdout + res.stderr if res.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            _OPTIONS[ncu] = None
    text = _OPTIONS[ncu]
    return None if text is None else option in text


NO_PROCESS_SCOPE = ("{ncu} has no --nvtx-push-pop-scope: the NVTX range covers only the thread that opened it, so "
                    "kernels launched from other threads (PyTorch's backward pass) are not profiled; Nsight "
                    "Compute 2025.3 and newer have the option")


def run_ncu(argv: Sequence[str], timeout_s: float, runner: Runner = subprocess.run,
            clock: Callable[[], float] = time.perf_counter) -> NcuRun:
    """Run ``argv`` (ncu first) and capture everything; failures are not judged here (see ``check``)."""
    argv = list(argv)
    log.info("running: %s", " ".join(argv))
    t0 = clock()
    try:
        proc = runner(argv, capture_output=True, text=True, timeout=timeout_s, errors="replace")
    except FileNotFoundError:
        raise ToolMissing(f"{argv[0]}: cannot be executed (not found); point at ncu with --ncu PATH or "
                          f"{ENV_NCU}=PATH") from None
    except PermissionError:
        raise ToolMissing(f"{argv[0]}: permission denied when starting it; expected an executable ncu") from None
    except subprocess.TimeoutExpired:
        raise UserError(f"ncu did not finish within {timeout_s:g} s; raise --timeout, or profile fewer launches "
                        f"(--launch-count) or fewer metrics (the default set instead of --full)") from None
    wall = clock() - t0
    return NcuRun(argv, proc.returncode, proc.stdout or "", proc.stderr or "", wall,
                  read_output(proc.stdout or "", proc.stderr or ""))


class NoKernelsProfiled(UserError):
    """ncu ran the program but profiled nothing; ``run`` is kept so the caller can explain why."""

    def __init__(self, message: str, run: NcuRun) -> None:
        super().__init__(message)
        self.run = run


def _tail(lines: Sequence[str], n: int = STDERR_TAIL_LINES) -> str:
    return " | ".join(lines[-n:])


def check(run: NcuRun) -> None:
    """Raise one ``UserError`` (or ``ToolMissing``) for the first thing that went wrong, else return."""
    o = run.output
    for e in o.errors:
        if "ERR_NVGPUCTRPERM" in e:
            raise ToolMissing(
                "ncu cannot read the GPU performance counters (ERR_NVGPUCTRPERM): they are restricted to "
                "admin users; run as root/with sudo, or set the driver option "
                f"NVreg_RestrictProfilingToAdminUsers=0 (see {PERM_URL})")
    specific = [e for e in o.errors if not e.startswith(_GENERIC_ERRORS)]
    if not specific:  # "Failed to profile "k" in process N" is all ncu said about its own failure
        specific = [e for e in o.errors if e.startswith("Failed to profile")]
    if specific:
        text = specific[0]
        if text.endswith(":") and len(specific) > 1:  # "An error was reported by the driver:" + the detail
            text = f"{text} {specific[1]}"
        more = f" (program exit code {o.app_returncode})" if o.app_returncode not in (None, 0) else ""
        raise UserError(f"ncu failed: {text}{more}")
    if o.app_returncode not in (None, 0):
        tail = _tail(o.program_lines)
        raise UserError(f"the profiled program crashed: exit code {o.app_returncode}"
                        + (f"; its last stderr lines: {tail}" if tail else "; it printed nothing on stderr"))
    if o.no_kernels_profiled or (run.returncode == 0 and not o.kernels):
        hint = next((w for w in o.warnings if "--target-processes" in w), "")
        raise NoKernelsProfiled("ncu profiled no kernel" + (f" ({hint})" if hint else ""), run)
    if run.returncode != 0:
        tail = _tail(o.program_lines) or _tail([ln for ln in run.stdout.splitlines() if ln.strip()])
        raise UserError(f"ncu exited with code {run.returncode}" + (f"; last lines: {tail}" if tail else ""))


# ----------------------------------------------------------------------------- when nothing matched

def list_kernels_argv(ncu: str, app_argv: Sequence[str], max_launches: int = 1000) -> list[str]:
    """A cheap, unfiltered ncu run that names every kernel the program launches.

    It collects only ``launch__grid_size`` — a ``launch__`` metric, read from the launch itself, so
    ncu needs no counter replay for it — on at most ``max_launches`` launches; the kernel names come
    from ncu's ``==PROF== Profiling "k"`` lines. (ncu has no option that lists kernels without
    profiling them.)
    """
    return [ncu, "--target-processes", "all", "--metrics", "launch__grid_size",
            "--launch-count", str(max_launches), *app_argv]


def kernels_that_ran(out: NcuMessages) -> Counter:
    return Counter(k.name for k in out.kernels)


def no_match_message(filter_desc: str, launch_skip: int, ran: Counter, capped: bool) -> str:
    """One line: what was asked for, and the kernels that did run (with launch counts)."""
    if not ran:
        return (f"no kernel matched {filter_desc}: the program launched no CUDA kernel that ncu could see "
                f"(does it use the GPU, and finish normally?)")
    listed = ", ".join(f"{name} (x{n})" for name, n in ran.most_common())
    more = " (listing stopped at the launch cap)" if capped else ""
    return f"no kernel matched {filter_desc}; the program ran: {listed}{more}"


def skip_message(filter_desc: str, launch_skip: int, matched: int) -> str:
    return (f"{filter_desc} matched {matched} launch(es) but --launch-skip {launch_skip} skips them all; "
            f"lower --launch-skip (or --warmup-launches) below {matched}")
