"""``gemmlab timeline``: a per-kernel time summary of a program, through nsys or CUPTI.

``via="auto"`` uses Nsight Systems when it is installed and makes a report
(``nsys profile --trace=cuda`` then ``nsys stats --report cuda_gpu_kern_sum --format csv``), and
otherwise CUPTI through ``torch.profiler`` (Python programs only). ``via="nsys"``/``"cupti"`` force
one. The two do not measure the same thing exactly: nsys traces the whole run with little overhead;
the CUPTI wrapper runs the program inside the profiler in one process. Both time every kernel
execution on the GPU, serialised by nothing but the program itself.
"""

from __future__ import annotations

import glob as _glob
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from gemmlab.profile.timeline import SummaryRow, summarize
from gemmlab.errors import InputError, ToolMissing, UserError
from gemmlab.profile import cupti_timeline, nsys


NSYS_GLOBS = ("/opt/nvidia/nsight-systems/*/bin/nsys", "/usr/local/cuda/bin/nsys")
VIAS = ("auto", "nsys", "cupti")


@dataclass
class Timeline:
    rows: list[SummaryRow]
    via: str  # "nsys" | "cupti" | "import"
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"via": self.via, "notes": self.notes, "kernels": [r.to_dict() for r in self.rows]}


def find_nsys(which=shutil.which, glob=_glob.glob) -> Optional[str]:
    found = which("nsys")
    if found:
        return found
    for pattern in NSYS_GLOBS:
        hits = sorted(glob(pattern), reverse=True)
        if hits:
            return hits[0]
    return None


class NsysFailed(UserError):
    pass


def nsys_timeline(nsys_exe: str, argv: Sequence[str], timeout_s: float, runner=subprocess.run) -> list[SummaryRow]:
    with tempfile.TemporaryDirectory() as d:
        rep = Path(d) / "timeline"
        prof = [nsys_exe, "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none",
                f"--output={rep}", "--force-overwrite=true", *argv]
        p = runner(prof, capture_output=True, text=True, timeout=timeout_s, errors="replace")
        report = rep.with_suffix(".nsys-rep")
        if not report.exists():
            tail = " | ".join(((p.stderr or "") + (p.stdout or "")).strip().splitlines()[-2:])
            raise NsysFailed(f"nsys made no report (exit code {p.returncode}){': ' + tail if tail else ''}")
        for name in (nsys.KERN_SUM, "gpukernsum"):  # current name, then the pre-2022.4 one
            s = runner([nsys_exe, "stats", "--report", name, "--format", "csv", str(report)],
                       capture_output=True, text=True, timeout=timeout_s, errors="replace")
            try:
                stats = nsys.parse_stats(s.stdout or "", f"nsys stats {report.name}")
            except InputError:
                continue
            rep_ = stats.get(nsys.KERN_SUM)
            if rep_ is not None:
                return rep_.rows
        raise NsysFailed("nsys stats gave no cuda_gpu_kern_sum/gpukernsum table")


def run_timeline(argv: Sequence[str], via: str = "auto", timeout_s: float = 600.0, runner=subprocess.run,
                 nsys_exe: Optional[str] = None) -> Timeline:
    if via not in VIAS:
        raise InputError(f"{via!r}: expected one of {', '.join(VIAS)}", option="via")
    notes: list[str] = []
    exe = nsys_exe or (find_nsys() if via in ("auto", "nsys") else None)
    if via == "nsys" and exe is None:
        raise ToolMissing("nsys (Nsight Systems) not found on PATH or in " + ", ".join(NSYS_GLOBS)
                          + "; install it, or use --via cupti for a Python program")
    if exe is not None and via in ("auto", "nsys"):
        try:
            return Timeline(nsys_timeline(exe, argv, timeout_s, runner), "nsys")
        except NsysFailed as e:
            if via == "nsys":
                raise
            notes.append(f"{e.message}; used CUPTI through torch.profiler instead")
    events, code = cupti_timeline.cupti_events(argv, timeout_s, runner)
    if code != 0:
        raise UserError(f"the program exited with code {code} under the CUPTI wrapper; fix it before timing it")
    if not events:
        raise UserError("CUPTI recorded no kernel: the program launched none on the GPU")
    return Timeline(summarize(events), "cupti", notes)


def import_timeline(path: str) -> tuple[Timeline, "nsys.NsysStats"]:
    stats = nsys.load_stats(path)
    kern = stats.get(nsys.KERN_SUM)
    return Timeline(kern.rows if kern else [], "import", [kern.note] if kern and kern.note else []), stats
