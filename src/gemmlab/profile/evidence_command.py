"""The ncu command that collects a diagnosis's missing evidence (or re-measures its primary's), for
the launch the diagnosis is about. The analyzer says *what* to collect (metric short names,
sections, raw metrics); this builds *how*: the program to run (the one ncu recorded, the one the
export names, or a placeholder), the launch to reach (the report's own ``--launch-skip``, else past
the kernel's warm-up launch), and - when ``gemmlab profile``'s default collection covers every
metric (11 replay passes on the H100 instead of whole sections: docs/results/profile.md) - that
collection and the ``gemmlab profile`` line that runs the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from gemmlab.profile import collect, targets
from gemmlab.profile import command as cmd
from gemmlab.profile import metrics as M
from gemmlab.profile.ncu_rep import split_ncu_command
from gemmlab.profile.records import KernelLaunch


@dataclass(frozen=True)
class EvidenceCommand:
    argv: list[str]  # the ncu command line
    note: str  # how the program and the launch were chosen, and what to run next
    profile_line: str  # the same collection as a ``gemmlab profile`` line ("" when it does not cover it)


_CONNECTED = re.compile(r"==PROF== Connected to process \d+ \((.+)\)\s*$")


def program_path(launch: KernelLaunch) -> str:
    """The executable ncu attached to, from the ``==PROF== Connected to process N (/path)`` line of
    live output ("" when the export does not carry it)."""
    for note in launch.notes:
        m = _CONNECTED.search(note.strip())
        if m:
            return m.group(1)
    return ""


def _app(launch: KernelLaunch, override: Optional[Sequence[str]] = None) -> tuple[list[str], str]:
    """The program to put at the end of the ncu command, and a note on how it was chosen."""
    if override:
        return list(override), ""
    ncu_argv, recorded = split_ncu_command(launch.command_line) if launch.command_line else ([], [])
    if recorded:
        return recorded, "the program and arguments are those ncu recorded in the report."
    program = program_path(launch)
    if program:
        return [program], f"{program} is the program named in the export; append its own arguments."
    if launch.process:
        p = launch.process if "/" in launch.process else f"./{launch.process}"
        return [p], f"{p} stands for the profiled process '{launch.process}'; use its real path and append its arguments."
    return ["./app"], "./app stands for the program that launches this kernel (the export does not name it)."


def recorded_skip(launch: KernelLaunch) -> Optional[int]:
    """The --launch-skip ncu recorded for this report (how the profiled launch was reached), if any."""
    ncu_argv, _ = split_ncu_command(launch.command_line) if launch.command_line else ([], [])
    for flag in ("--launch-skip", "-s"):
        if flag in ncu_argv[:-1] and ncu_argv[ncu_argv.index(flag) + 1].isdigit():
            return int(ncu_argv[ncu_argv.index(flag) + 1])
    return None


def build(launch: KernelLaunch, *, shorts: Sequence[str], sections: Sequence[str], metrics: Sequence[str],
          all_needed: bool, app_argv: Optional[Sequence[str]] = None, launch_skip: int = 1,
          launch_count: int = 1) -> EvidenceCommand:
    """The command collecting ``shorts`` (metric short names) for ``launch``: ``sections`` and raw
    ``metrics`` when ``gemmlab profile``'s default collection does not cover them. ``all_needed``:
    every one of ``shorts`` is needed (missing evidence), so the default collection is used only when
    it has them all; otherwise (re-measuring) the ones it knows are enough. ``app_argv``: the program
    to run, overriding the recorded one; ``launch_skip`` is used when the report recorded none."""
    app, note = _app(launch, app_argv)
    # Reach the same launch the report profiled: its recorded --launch-skip, when the program is the
    # recorded one too; otherwise skip the kernel's warm-up launch.
    recorded = recorded_skip(launch) if app_argv is None else None
    skip = recorded if recorded is not None else launch_skip
    out_name = f"{launch.name or 'kernel'}_evidence"
    # Evidence may name metrics the analyzer derives (not in the table): they follow from the table's.
    known = [s for s in shorts if s in M.METRICS]
    default = collect.default_collection()
    profile_line = ""
    if known and (not all_needed or len(known) == len(shorts)) and not collect.uncovered(known, default):
        target = targets.Target(tuple(app), out_name,
                                kernel_regex=f"^{re.escape(launch.name)}$" if launch.name else None,
                                launch_skip=skip, launch_count=launch_count)
        argv = targets.build_argv("ncu", target, default, Path(out_name), overwrite=False)
        profile_line = cmd.render(
            ["gemmlab", "profile"] + (["--kernel", target.kernel_regex] if target.kernel_regex else [])
            + ["--launch-skip", str(skip), "--launch-count", str(launch_count),
               "-o", out_name, "--"] + list(app))
    else:
        argv = cmd.ncu_command(app, kernel_name=launch.name or None, sections=sorted(set(sections)),
                               metrics=sorted(set(metrics)), launch_skip=skip,
                               launch_count=launch_count, output=out_name)
    skip_note = (f"--launch-skip {skip} is the skip the report was profiled with." if recorded is not None else
                 f"--launch-skip {skip} skips the kernel's warm-up launch (use 0 if the program launches it only once).")
    note = (note + " " if note else "") + f"{skip_note} Then: gemmlab analyze {out_name}.ncu-rep"
    return EvidenceCommand(argv, note, profile_line)
