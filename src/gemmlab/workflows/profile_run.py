"""One ``gemmlab profile`` run: build the ncu command, run it, explain failures, import, diagnose.

Composes targets (what to run), collect (what to collect), runner (ncu as a subprocess), the
importers (``gemmlab.profile.load``) and the analyzer (``gemmlab.analysis``). Nothing here prints.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from gemmlab.errors import UserError
from gemmlab.profile import runner as ncu_runner
from gemmlab.profile.collect import Collection
from gemmlab.profile.records import KernelLaunch, bare_name
from gemmlab.profile.runner import NcuRun, NoKernelsProfiled, ProfiledKernel
from gemmlab.profile.targets import Target, build_argv

DEFAULT_TIMEOUT_S = 600.0  # --set full on a large GEMM replays ~40 times; a minute per kernel is common
LIST_MAX_LAUNCHES = 1000  # the kernel-listing run stops after this many launches


@dataclass
class ProfileResult:
    target: Target
    collection: Collection
    argv: list[str]
    report: Path
    wall_s: float
    kernels: list[ProfiledKernel]  # what ncu said it profiled, with replay passes
    launches: list[KernelLaunch] = field(default_factory=list)
    diagnoses: list[Any] = field(default_factory=list)  # the analyzer's Diagnosis objects, one per launch
    warnings: list[str] = field(default_factory=list)  # what the capture may have missed, one line each

    @property
    def passes(self) -> Optional[int]:
        ps = [k.passes for k in self.kernels if k.passes is not None]
        return max(ps) if ps else None

    def to_dict(self) -> dict:
        return {
            "command": self.argv,
            "collection": self.collection.to_dict(),
            "report": str(self.report),
            "wall_s": self.wall_s,
            "kernels": [{"name": k.name, "launch": k.index, "passes": k.passes} for k in self.kernels],
            "warnings": list(self.warnings),
            "diagnoses": [d.to_dict() if hasattr(d, "to_dict") else d for d in self.diagnoses],
        }


def diagnose(launches: list[KernelLaunch]) -> list[Any]:
    """The analyzer's diagnoses, one per launch."""
    from gemmlab.analysis.diagnose import diagnose_all

    return list(diagnose_all(launches))


def primary_category(diagnosis: Any) -> Optional[str]:
    """The analyzer's primary bottleneck category as a string (enum values are unwrapped)."""
    primary = getattr(diagnosis, "primary", None)
    cat = getattr(primary, "category", None) if primary is not None else None
    if cat is None:
        return None
    return str(getattr(cat, "value", cat))


def run_profile(target: Target, collection: Collection, *, ncu: str, output: Path, overwrite: bool,
                timeout_s: float = DEFAULT_TIMEOUT_S, runner=subprocess.run,
                analyze: bool = True) -> ProfileResult:
    scoped = ncu_runner.has_option(ncu, "--nvtx-push-pop-scope") if target.nvtx_range else None
    argv = build_argv(ncu, target, collection, output, overwrite, process_scope=scoped)
    output.parent.mkdir(parents=True, exist_ok=True)
    run = ncu_runner.run_ncu(argv, timeout_s, runner)
    try:
        ncu_runner.check(run)
    except NoKernelsProfiled as e:
        raise UserError(explain_nothing_profiled(e.run, target, ncu, timeout_s, runner)) from None
    report = Path(run.output.report) if run.output.report else output
    if not report.exists():
        raise UserError(f"ncu finished but wrote no report at {report}; its last lines: "
                        + " | ".join((run.stdout + run.stderr).strip().splitlines()[-3:]))
    result = ProfileResult(target, collection, argv, report, run.wall_s, run.output.kernels)
    if scoped is False:
        result.warnings.append(ncu_runner.NO_PROCESS_SCOPE.format(ncu=ncu))
    if analyze:
        from gemmlab.profile.load import load

        result.launches = load(report)
        result.diagnoses = diagnose(result.launches)
    return result


def explain_nothing_profiled(run: NcuRun, target: Target, ncu: str, timeout_s: float, runner) -> str:
    """One line: why ncu profiled nothing, naming the kernels that did run when a filter was used.

    The kernels are listed from a second, unfiltered run that collects only ``launch__grid_size``
    (no counter replay; see ``runner.list_kernels_argv``).
    """
    desc = target.describe_filter()
    if not target.filtered and not target.launch_skip:
        hint = next((w for w in run.output.warnings if "--target-processes" in w), "")
        return ("ncu profiled no kernel: the program launched no CUDA kernel that ncu could see"
                + (f" ({hint})" if hint else ""))
    listing = ncu_runner.run_ncu(ncu_runner.list_kernels_argv(ncu, target.app_argv, LIST_MAX_LAUNCHES),
                                 timeout_s, runner)
    try:
        ncu_runner.check(listing)
    except NoKernelsProfiled:
        pass
    ran = ncu_runner.kernels_that_ran(listing.output)
    capped = len(listing.output.kernels) >= LIST_MAX_LAUNCHES
    if target.kernel_regex is not None and target.nvtx_range is None:
        rx = re.compile(target.kernel_regex)
        matched = sum(n for name, n in ran.items() if rx.search(name) or rx.search(bare_name(name)))
        if matched and matched <= target.launch_skip:
            return ncu_runner.skip_message(desc, target.launch_skip, matched)
    return ncu_runner.no_match_message(desc, target.launch_skip, ran, capped)
