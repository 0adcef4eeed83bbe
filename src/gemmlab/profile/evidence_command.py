"""The ncu command that collects a diagnosis's missing evidence (or re-measures its primary's), for
the launch the diagnosis is about. The analyzer says *what* to collect (metric short names,
sections, raw metrics); this builds *how*: the program to run (the one ncu recorded, the one the
export names, or a placeholder), the launch to reach (the report's own ``--launch-skip``, else past
the kernel's warm-up launch), and - when ``gemmlab profile``'s default collection covers every
metric (11 replay passes on the H100 instead of whole sections: docs/results/profile.md) - that
collection and the ``gemmlab profile`` line that runs the same thing.
"""

from __future__ import annotations

import functools
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from gemmlab.profile import collect, targets
from gemmlab.profile import command as cmd
from gemmlab.profile import metrics as M
from gemmlab.profile.ncu_rep import split_ncu_command, split_ncu_words
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
        note = "the program and arguments are those ncu recorded in the report."
        if any(q in w for w in recorded for q in "\"'{[("):
            # ncu joins argv with spaces, unquoted: an argument that held a space comes back split,
            # and nothing in the line tells which did (quotes and brackets hint that one may have)
            note += (" ncu records them joined by spaces, without quotes: if an argument held a"
                     " space it is split here - quote it again before running.")
        return recorded, note
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


# ----------------------------------------------------------------------------- reaching one launch again

@dataclass(frozen=True)
class Selection:
    """How to reach one launch of a capture again: ncu's kernel filter, its NVTX filter and how many
    launches that same filter lets by first. ``--launch-skip`` counts only launches that pass every
    filter (ncu's kernel name, NVTX range), so the skip is counted over the capture with the same filter."""

    kernel_regex: Optional[str]  # ncu -k regex:<this>; None: no kernel filter
    name_base: str  # what the regex matches: "function" (ncu's default: the bare name) or "demangled"
    launch_skip: int
    nvtx_include: tuple[str, ...] = ()  # ncu --nvtx-include values, as recorded ("step/")
    nvtx_scope: Optional[str] = None  # --nvtx-push-pop-scope as recorded
    exact: bool = True  # False: the capture does not say enough to count the skip (the note says why)
    note: str = ""
    # recorded options that change which launches ncu counts (--profile-from-start off, --nvtx-exclude,
    # --devices, --filter-mode): kept, and `gemmlab profile` (which has none of them) is not offered
    extra: tuple[str, ...] = ()

    @property
    def nvtx_range(self) -> Optional[str]:
        """The one push/pop range name (``step`` for ``step/``) that ``gemmlab profile --range`` takes."""
        if len(self.nvtx_include) == 1 and self.nvtx_include[0].endswith("/") and self.nvtx_include[0].count("/") == 1:
            return self.nvtx_include[0][:-1] or None
        return None

    def ncu_words(self) -> list[str]:
        out: list[str] = list(self.extra)
        if self.nvtx_include:
            out.append("--nvtx")
            for r in self.nvtx_include:
                out += ["--nvtx-include", r]
            if self.nvtx_scope:
                out += ["--nvtx-push-pop-scope", self.nvtx_scope]
        if self.kernel_regex is not None:
            if self.name_base != "function":
                out += ["--kernel-name-base", self.name_base]
            out += ["-k", f"regex:{self.kernel_regex}"]
        out += ["--launch-skip", str(self.launch_skip)]
        return out


def option_values(words: Sequence[str], *names: str) -> list[str]:
    """Every value of the options ``names`` in an ncu argv (``--opt V`` and ``--opt=V``)."""
    out = []
    for i, w in enumerate(words):
        for n in names:
            if w == n and i + 1 < len(words):
                out.append(words[i + 1])
            elif w.startswith(n + "="):
                out.append(w[len(n) + 1:])
    return out


def _kernel_filter(text: str) -> str:
    """ncu's ``-k`` value as a regex (a plain name matches whole)."""
    return text[len("regex:"):] if text.startswith("regex:") else f"^{re.escape(text)}$"


def selections(launches: Sequence[KernelLaunch]) -> list[Selection]:
    """``selection`` for every launch of ``launches`` (sorted by id), in one pass: the earlier launches of
    each name are counted as they go, not searched for again per launch."""
    seen: dict[str, list[int]] = {}
    out = []
    for position, k in enumerate(launches):
        same = seen.setdefault(k.name, [])
        out.append(_select(k, position, same))  # read before this launch joins it
        same.append(k.id)
    return out


def selection(launches: Sequence[KernelLaunch], index: int) -> Selection:
    """The filter and ``--launch-skip`` that reach ``launches[index]`` again, counted over ``launches``
    (every launch of the capture, in launch order by id).

    Without a recorded ncu command (a CSV export) the capture is taken to be the program's launches from
    its start: the filter is the kernel's function name and the skip the number of earlier launches of
    that name in the capture. With a recorded command its kernel and NVTX filters are kept, and the skip
    is the recorded ``--launch-skip`` plus the launches the capture holds before this one."""
    k = launches[index]
    earlier = [j for j in launches if j.id < k.id]
    return _select(k, len(earlier), [j.id for j in earlier if j.name == k.name])


def _select(k: KernelLaunch, position: int, same: list[int]) -> Selection:
    """``selection`` of launch ``k``, given how many launches the capture holds before it and the ids of
    the earlier ones with its name."""
    ncu_argv, _ = split_ncu_command(k.command_line) if k.command_line else ([], [])
    if not ncu_argv:
        ids = ", ".join(f"#{i}" for i in same[:6]) + (" …" if len(same) > 6 else "")
        what = (f"the capture has {len(same)} earlier launch{'es' if len(same) != 1 else ''} of {k.name} ({ids})"
                if same else f"this is the capture's first launch of {k.name}")
        return Selection(f"^{re.escape(k.name)}$" if k.name else None, "function", len(same),
                         note=(f"--launch-skip {len(same)}: {what}, so this reaches launch #{k.id} when the "
                               "program runs as it did for the capture (from its start, with no other ncu filter)."))
    recorded_skip = next((int(v) for v in option_values(ncu_argv, "--launch-skip", "-s") if v.isdigit()), 0)
    extra: list[str] = []
    for opt in _COUNTING:
        for v in option_values(ncu_argv, opt):
            extra += [opt, v]
    nvtx = tuple(option_values(ncu_argv, "--nvtx-include"))
    scope = next(iter(option_values(ncu_argv, "--nvtx-push-pop-scope")), None)
    base = next(iter(option_values(ncu_argv, "--kernel-name-base")), "function")
    filters = option_values(ncu_argv, "-k", "--kernel-name")
    if option_values(ncu_argv, "--kernel-id"):
        return Selection(f"^{re.escape(k.name)}$" if k.name else None, "function", recorded_skip, nvtx, scope,
                         exact=False, note="the report was captured with --kernel-id; the launch-skip below is its "
                                           "recorded one and may reach another launch of the kernel.")
    in_range = f" in {' '.join(nvtx)}" if nvtx else ""
    if filters:
        regex = _kernel_filter(filters[0])
        note = (f"--launch-skip {recorded_skip + position}: the report's own filter (-k {filters[0]}{in_range}), "
                f"its --launch-skip {recorded_skip} and the {position} launch(es) it holds before #{k.id}.")
        return Selection(regex, base, recorded_skip + position, nvtx, scope, note=note, extra=tuple(extra))
    if recorded_skip:  # the skipped launches could be of any kernel: keep counting every launch
        note = (f"--launch-skip {recorded_skip + position}: the report skipped {recorded_skip} launch(es) of any "
                f"kernel{in_range} and holds {position} before #{k.id}; no kernel filter, as in the capture.")
        return Selection(None, "function", recorded_skip + position, nvtx, scope, note=note, extra=tuple(extra))
    kept = f" ({' '.join(extra)} kept, as in the capture)" if extra else ""
    note = (f"--launch-skip {len(same)}: the report holds {len(same)} earlier launch(es) of {k.name}{in_range}, "
            f"and its ncu command skipped none{kept}.")
    return Selection(f"^{re.escape(k.name)}$" if k.name else None, "function", len(same), nvtx, scope, note=note,
                     extra=tuple(extra))


_COUNTING = ("--profile-from-start", "--nvtx-exclude", "--devices", "--filter-mode")
# the options a Selection replaces (and how many values each takes)
_SELECTION_OPTIONS = {**{o: 1 for o in _COUNTING}, "-k": 1, "--kernel-name": 1, "--kernel-name-base": 1,
                      "--launch-skip": 1, "-s": 1, "--nvtx": 0, "--nvtx-include": 1, "--nvtx-push-pop-scope": 1,
                      "--kernel-id": 1}


@functools.lru_cache(maxsize=4096)
def _split_line(line: str) -> tuple[str, ...]:
    """shlex.split, once per distinct line (the launches of one kernel share their profile line)."""
    return tuple(shlex.split(line))


def retarget(argv: Sequence[str], profile_line: str, note: str, sel: Selection) -> tuple[list[str], str, str]:
    """An evidence command (ncu argv, ``gemmlab profile`` line, note) pointed at the launch ``sel``
    reaches: the kernel and NVTX filters and ``--launch-skip`` replaced, everything else kept. The
    ``gemmlab profile`` line is dropped ("") when it cannot say the same filter: a demangled-name
    filter, a recorded option it has no flag for, several NVTX ranges, or per-thread NVTX ranges
    (``gemmlab profile --range`` counts a range across the process's threads)."""
    ncu_words, app = split_ncu_words(argv)
    if not ncu_words:
        return list(argv), profile_line, note
    kept: list[str] = []
    i, at = 1, None
    while i < len(ncu_words):
        w = ncu_words[i]
        name = w.split("=", 1)[0]
        if name in _SELECTION_OPTIONS:
            at = len(kept) if at is None else at
            i += 1 + (_SELECTION_OPTIONS[name] if "=" not in w else 0)
            continue
        kept.append(w)
        i += 1
    if at is None:
        at = next((j for j, w in enumerate(kept) if w == "--launch-count"), len(kept))
    new_argv = [ncu_words[0]] + kept[:at] + sel.ncu_words() + kept[at:] + list(app)
    line = ""
    same_range = not sel.nvtx_include or (sel.nvtx_range is not None and sel.nvtx_scope == "process")
    if profile_line and sel.name_base == "function" and not sel.extra and same_range:
        words = list(_split_line(profile_line))
        head, tail = (words[:words.index("--")], words[words.index("--"):]) if "--" in words else (words, [])
        rest, j = [], 2
        while j < len(head):
            if head[j] in ("--kernel", "-k", "--launch-skip", "--range"):
                j += 2
                continue
            rest.append(head[j])
            j += 1
        pick = (["--range", sel.nvtx_range] if sel.nvtx_range else []) \
            + (["--kernel", sel.kernel_regex] if sel.kernel_regex is not None else []) \
            + ["--launch-skip", str(sel.launch_skip)]
        line = cmd.render(head[:2] + pick + rest + tail)
    kept_note = re.sub(r"--launch-skip \d+ (skips the kernel's warm-up launch \(use 0 if the program launches it "
                       r"only once\)|is the skip the report was profiled with)\.", "", note)
    kept_note = re.sub(r"\s+", " ", kept_note).strip()
    new_note = " ".join(p for p in (sel.note, kept_note[:1].upper() + kept_note[1:]) if p)
    return new_argv, line, new_note
