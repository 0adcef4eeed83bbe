"""The report as Markdown (GitHub-flavoured): the same tables and cards as the HTML page.

Plots are PNG files referenced by relative path; ``render`` returns the text and the files to
write, so the caller decides where they go (and whether it may overwrite them).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from gemmlab import __version__
from gemmlab.report.content import (
    CANDIDATE_COLUMNS,
    CATEGORY_COLUMNS,
    MATTERED_COLUMNS,
    OVERVIEW_COLUMNS,
    Card,
    Finding,
    Report,
    Section,
)

_SPECIAL = re.compile(r"([\\`*_\[\]<>|#~])")


def esc(text: object) -> str:
    """Text that renders literally: Markdown punctuation backslash-escaped, newlines folded."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def code(text: object) -> str:
    """An inline code span that survives backticks and table pipes inside ``text``."""
    s = " ".join(str(text).split()).replace("|", "\\|")
    fence = "``" if "`" in s else "`"
    return f"{fence} {s} {fence}" if fence == "``" else f"`{s}`"


def _table(columns: list[str] | tuple[str, ...], rows: list[list[str]], right: set[int] = frozenset()) -> list[str]:
    out = ["| " + " | ".join(esc(c) for c in columns) + " |"]
    out.append("|" + "|".join(" ---: " if i in right else " --- " for i in range(len(columns))) + "|")
    out += ["| " + " | ".join(rows_i) + " |" for rows_i in rows]
    return out


def _finding(f: Finding, level: str) -> list[str]:
    head = f"**{esc(f.category)}**" + (" (at limit)" if f.at_limit else "") + f", confidence {esc(f.confidence)}"
    if f.impact:
        head += f", {esc(f.impact)}"
    out = [f"{level}{head}" + (f": {esc(f.summary)}" if f.summary else ""), ""]
    if f.evidence:
        rows = [[code(ev.metric) + (f" ({esc(ev.ncu_name)})" if ev.ncu_name else ""), esc(ev.value), esc(ev.unit), esc(ev.compared_with), esc(ev.why)] for ev in f.evidence]
        out += _table(("Metric", "Value", "Unit", "Compared with", "Why it matters"), rows, right={1}) + [""]
    return out


def _card(c: Card) -> list[str]:
    out = [f"### {code(c.name)}", ""]
    if c.result is not None:
        out += [esc(c.stats), ""]
    else:
        out += ["Diagnosed but not measured in this run.", ""]
    if c.candidates:
        out += [f"cuBLAS candidates timed ({len(c.candidates)}); the fastest is the reference:", ""]
        out += _table(CANDIDATE_COLUMNS, [[esc(x) for x in r] for r in c.candidates], right={1, 2}) + [""]
    if not c.diagnosed:
        out += ["No diagnosis attached.", ""]
        return out
    if c.primary is not None:
        out += _finding(c.primary, "Primary: ")
    else:
        out += ["The analyzer named no primary bottleneck.", ""]
    for f in c.findings:
        out += _finding(f, "Also: ")
    if c.missing:
        out += ["Missing evidence (lowers confidence):", ""]
        out += [f"- {code(m)}: {esc(why)}" for m, why in c.missing] + [""]
    if c.recommendations:
        out += ["What to try:", ""] + [f"- {esc(t)}" for t in c.recommendations] + [""]
    if c.collect_command:
        out += ["Collect the evidence:", "", "```sh", c.collect_command.replace("```", "` ` `"), "```", ""]
        if c.collect_profile:
            out += ["or, the same collection the easy way:", "", "```sh",
                    c.collect_profile.replace("```", "` ` `"), "```", ""]
        if c.collect_note:
            out += [esc(c.collect_note), ""]
    if c.diagnosis_source:
        out += [f"Diagnosed from {esc(c.diagnosis_source)}.", ""]
    return out


def _section(sec: Section, plot_dir: str | None, files: dict[str, bytes]) -> list[str]:
    """One run's ladder: heading, its lines, tables, ranking, figures (written to ``files``), notes."""
    out = [f"## {esc(sec.title)}", ""]
    out += _table(("Field", "Value"), [[esc(k), code(v) if k == "Command" else esc(v)] for k, v in sec.meta]) + [""]
    for t in sec.ladders:
        rows = [[code(cells[0])] + [esc(c) for c in cells[1:]] for cells in (t.cells(row) for row in t.rows)]
        out += [f"### {esc(t.title)}", ""] + _table(t.columns, rows, right=set(t.numeric)) + [""]
        if t.reference_note:
            out += [f"cuBLAS row: {esc(t.reference_note)}", ""]
    out += [esc(sec.caption), ""]
    if sec.mattered:
        out += ["### What actually mattered", ""]
        out += _table(MATTERED_COLUMNS, [[esc(c) for c in r] for r in sec.mattered], right={0}) + [""]
    out += ["### Plots" if not sec.key else f"### Plots: {esc(sec.title)}", ""]
    if plot_dir is None:
        if sec.plots:
            out += [f"{len(sec.plots)} plots left out of this Markdown file (no plot folder was given); "
                    "the HTML report has them.", ""]
    else:
        for p in sec.plots:
            rel = f"{plot_dir}/{p.key}.png"
            files[rel] = p.png
            out += [f"![{esc(p.title)}]({rel})", "", f"*{esc(p.title)}.* {esc(p.caption)}", ""]
    out += [f"- {esc(n)}" for n in sec.notes]
    if sec.notes:
        out.append("")
    return out


def render(rep: Report, plot_dir: str | None, generated_utc: str | None = None) -> tuple[str, dict[str, bytes]]:
    """(Markdown text, {relative path: PNG bytes}). With ``plot_dir`` None, plots are left out with a note."""
    when = generated_utc or datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    files: dict[str, bytes] = {}
    out = [f"# {esc(rep.title)}", ""]
    out += _table(("Field", "Value"), [[esc(k), code(v) if k == "Command" else esc(v)] for k, v in rep.header])
    out.append("")
    if rep.data_note:
        out += [f"> **Data:** {esc(rep.data_note)}", ""]
    src = f"Data source: {esc(rep.source or 'not recorded')}"
    if rep.diagnosis_source:
        src += f" · diagnoses from {esc(rep.diagnosis_source)}"
    out += [src, ""]
    for sec in rep.sections:
        out += _section(sec, plot_dir, files)
    for ov in rep.overviews:
        out += ["## Where the GPU time goes", "", f"{esc(ov.source)}: {esc(ov.summary)}", ""]
        out += _table(OVERVIEW_COLUMNS, [[esc(c) for c in r] for r in ov.rows]) + [""]
        if ov.more:
            out += [f"{ov.more} more group(s) in `gemmlab analyze --all` and the JSON.", ""]
        out += _table(CATEGORY_COLUMNS, [[esc(c) for c in r] for r in ov.categories]) + [""]
    out += ["## Kernels", ""]
    n_plain = sum(1 for c in rep.cards if not c.diagnosed)
    if n_plain:
        out += [
            f"{n_plain} of {len(rep.cards)} kernels have no diagnosis: profile them (`gemmlab profile RUNG` or "
            "`gemmlab ladder --profile`) and pass the export or its `gemmlab analyze --json` output with `--diagnosis`.",
            "",
        ]
    for c in [c for c in rep.cards if c.diagnosed] + [c for c in rep.cards if not c.diagnosed]:
        out += _card(c)  # diagnosed kernels first, as on the HTML page
    for heading, rows in rep.envs:
        title = "## Environment" if len(rep.envs) == 1 else f"## Environment: {esc(heading)}"
        out += [title, ""] + _table(("Key", "Value"), [[esc(k), esc(v)] for k, v in rows]) + [""]
    out += [f"Generated by gemmlab {esc(__version__)} on {esc(when)}.", ""]
    return "\n".join(out), files
