"""``gemmlab profile FILE`` and ``bench FILE --profile``: the targeted collection on a user's kernel,
the diagnosis, and the source lines that hold its stall samples.

The kernel runs under ncu in the same child program as ``bench`` (``bench.user_child``, mode
``profile``): compiled with ``-lineinfo``, checked once (a wrong kernel is not worth profiling),
launched ``warmup`` times, then once inside the NVTX range ``gemmlab`` — the launch ncu profiles.
ncu gets ``--import-source yes``, so the report carries the source text it was built from even
after the file is edited again (the history shows each version's own lines).
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from gemmlab.bench.results import RunRecord
from gemmlab.errors import UserError
from gemmlab.fileio import write_new
from gemmlab.profile import collect, targets
from gemmlab.workflows import profile_run


def profile_dir(name: str, base: Path = targets.DEFAULT_DIR) -> Path:
    """``gemmlab-profiles/<name>-YYYYmmdd-HHMMSS[-n]``: a folder no earlier run wrote."""
    from gemmlab.workflows.ladder_profile import fresh_dir

    return fresh_dir(base, prefix=name)


def user_target(inp: Any, shape: Any, job_dir: Path, warmup: int = targets.DEFAULT_WARMUP,
                python: str = sys.executable) -> targets.Target:
    """The ncu target: the child program on a job file kept beside the report."""
    job_dir.mkdir(parents=True, exist_ok=True)
    job = {"entry": inp.entry, "file": str(inp.path.resolve()), "text": inp.text, "flags": dict(inp.flags or {}),
           "function": inp.function, "name": inp.name, "mode": "profile", "shape": None if shape is None else (list(shape) if not isinstance(shape, dict) else shape),
           "warmup": warmup}
    job_path = job_dir / "job.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    label = inp.name + ("_" + "x".join(str(v) for v in shape) if isinstance(shape, (list, tuple)) else "")
    # Every kernel the entry launches inside the range: a Python entry may launch several (a Triton
    # matmul and its output allocation); ncu stops after this many.
    count = 1 if inp.entry == "cuda" else 8
    return targets.Target((python, "-m", "gemmlab.bench.user_child", str(job_path), str(job_dir / "result.json")),
                          label, nvtx_range=targets.NVTX_RANGE, launch_count=count, import_source=True)


def profile_user(inp: Any, shape: Any, ncu: str, *, timeout_s: float = profile_run.DEFAULT_TIMEOUT_S,
                 out: Optional[Path] = None, force: bool = False, warmup: int = targets.DEFAULT_WARMUP) -> dict:
    """Profile the user's kernel; the JSON-ready result: report path, command, diagnoses, hot lines."""
    d = profile_dir(inp.name) if out is None else out.parent
    target = user_target(inp, shape, d if out is None else profile_dir(inp.name), warmup)
    path = out if out is not None else targets.report_path(None, target.label, False, d)
    overwrite = targets.may_overwrite(path, force=force, isatty=False, confirm=lambda q: False)
    job_dir = Path(target.app_argv[-1]).parent
    try:
        result = profile_run.run_profile(target, collect.default_collection(), ncu=ncu, output=path,
                                         overwrite=overwrite, timeout_s=timeout_s)
    except UserError:
        child_failure(inp, job_dir)  # the kernel's own failure (compile error, wrong result, crash) explains it
        raise
    child_failure(inp, job_dir)
    return summarize(result)


def child_failure(inp: Any, job_dir: Path) -> None:
    """Raise what the child under ncu reported, if it failed: a compile error (exit 2), a wrong result or a
    crash (exit 1) - rather than ncu's "profiled no kernel", which is only its consequence."""
    from gemmlab.bench.isolate import ChildFailed
    from gemmlab.workflows.user_run import WrongResult, wrong_message

    try:
        result = json.loads((job_dir / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    status = result.get("status")
    if status == "error":
        raise UserError(str(result.get("message")), code=int(result.get("code", 2)))
    if status == "crash":
        raise ChildFailed(f"{inp.arg}: {result.get('message')} (under ncu; nothing was profiled)")
    if status == "wrong":
        raise WrongResult(wrong_message(inp.arg, result["failed"]).replace("not timed", "not profiled"), result["failed"])


def summarize(result: Any) -> dict:
    """What a user run keeps of a profile: the report, the command, each launch's diagnosis, and the
    hot source lines with the sentence tying the finding to its line."""
    from gemmlab.analysis.hot_lines import finding_line, hot_lines
    from gemmlab.profile.command import render
    from gemmlab.profile.source_lines import read_lines

    diagnoses = [d.to_dict() if hasattr(d, "to_dict") else d for d in result.diagnoses]
    primary = None
    if result.diagnoses:
        last = result.diagnoses[-1]
        p = getattr(last, "primary", None)
        if p is not None:
            primary = {"category": p.category.value, "confidence": p.confidence.value, "summary": p.summary}
    out: dict = {"report": str(result.report), "command": render(result.argv), "diagnosis": primary,
                 "diagnoses": diagnoses, "kernels": [k.name for k in result.kernels]}
    try:
        launches = read_lines(result.report)
    except Exception as e:  # noqa: BLE001 - the diagnosis stands without its lines; say why
        out["hot_lines_error"] = f"source lines could not be read from {result.report}: {e}"
        return out
    if launches:
        hot = hot_lines(launches[-1])
        out["hot_lines"] = hot.to_dict()
        sentence = finding_line(result.diagnoses[-1], hot) if result.diagnoses else None
        if sentence:
            out["finding_line"] = sentence
        page = Path(result.report).with_suffix(".lines.html")
        try:
            write_new(page, lines_page(launches[-1], hot, sentence, out), force=True)
            out["lines_html"] = str(page)
        except OSError as e:  # the diagnosis and the lines stand without the page
            out["hot_lines_error"] = f"could not write {page}: {e}"
        if len(launches) > 1:
            out["hot_lines_all"] = [hot_lines(x).to_dict() for x in launches]
    return out


def lines_page(launch: Any, hot: Any, finding: Optional[str], profile: dict) -> str:
    """A self-contained page: the diagnosis, then the source with the hot lines highlighted."""
    from html import escape

    from gemmlab.report.hot_lines import html_fragment

    diag = profile.get("diagnosis") or {}
    head = (f"<p><b>{escape(str(diag.get('category')))}</b> ({escape(str(diag.get('confidence')))} confidence): "
            f"{escape(str(diag.get('summary') or ''))}</p>") if diag else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(hot.name)}: hot source lines</title>"
            f"<style>body{{font-family:system-ui,sans-serif;margin:24px;max-width:1200px}}</style></head><body>"
            f"<h2>{escape(hot.name)}</h2><p>report: {escape(str(profile.get('report')))}</p>{head}"
            f"{html_fragment(launch, hot, finding)}</body></html>\n")


def with_profile(record: RunRecord, profile: dict) -> RunRecord:
    return replace(record, meta={**record.meta, "profile": profile})
