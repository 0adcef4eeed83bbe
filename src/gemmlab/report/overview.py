"""The overview that leads ``gemmlab analyze``: the kernel groups ranked by GPU time, and where the time goes.

``rows``/``category_rows`` say what the tables hold (the CSV and Markdown print them as they are);
``rich_tables`` lays the same cells out for a terminal of any width without cutting a number, a unit
or a kernel name: a wide console gets one line per group with the kernel last; a narrow one puts the
kernel (and its grid and block) on a line of its own under the group's numbers, and a name longer
than the console is printed whole rather than broken.
"""

from __future__ import annotations

from typing import Sequence

from rich.text import Text

from gemmlab.analysis.overview import Group, Overview, dim3_text, fmt_time, pct
from gemmlab.report import fit

COLUMNS = ("id", "kernel", "grid / block", "launches", "total time", "share", "primary category", "conf.",
           "at limit", "a fix could win")
RIGHT = ("id", "launches", "total time", "share", "a fix could win")
GAP = fit.GAP
# the order on the terminal: the numbers first, the kernel last (it is as long as it is)
ORDER = ("id", "grid / block", "launches", "total time", "share", "a fix could win", "primary category", "conf.",
         "at limit", "kernel")
# a narrow console: short headers; grid / block go on the kernel's line
COMPACT = {"launches": "n", "total time": "time", "at limit": "limit", "a fix could win": "fix"}
MIN_KERNEL = 24  # narrower than this left for the kernel column: the kernel goes on a line of its own
CATEGORY_COLUMNS = ("primary category", "at limit", "launches", "GPU time", "share")
CONF_STYLE = {"high": "green", "medium": "yellow", "low": "red"}
PARTIAL = "*"  # a fix estimate that only some of the group's launches gave


def fix_text(g: Group) -> str:
    """``"1.2 ms (3.4%)"``; ``*`` after it when only some launches have an estimate; ``n/e`` when none has."""
    if g.fix_ns is None:
        return "n/e" if g.time_ns is not None else "–"
    return f"{fmt_time(g.fix_ns)} ({pct(g.fix_share)})" + (PARTIAL if g.estimated < g.launches else "")


def category_text(g: Group) -> str:
    """The representative's category, with how many launches agree when not all do."""
    cat = g.primary.category.value
    return cat if g.agree == g.launches else f"{cat} ({g.agree}/{g.launches})"


def row(g: Group) -> tuple[str, ...]:
    p = g.primary
    return (f"#{g.representative.kernel_id}", g.label, f"{dim3_text(g.grid)} / {dim3_text(g.block)}",
            str(g.launches), fmt_time(g.time_ns), pct(g.share), category_text(g), p.confidence.value,
            "yes" if p.at_limit else "no", fix_text(g))


def rows(ov: Overview) -> list[tuple[str, ...]]:
    """One row per group, most GPU time first (the cells of COLUMNS)."""
    return [row(g) for g in ov.groups]


def category_rows(ov: Overview) -> list[tuple[str, ...]]:
    return [(c.category, "yes" if c.at_limit else "no", str(c.launches), fmt_time(c.time_ns), pct(c.share))
            for c in ov.categories]


def caption(ov: Overview, top: int) -> str:
    shown = len(ov.top(top))
    cards = ("a diagnosis card follows for every group" if shown == len(ov.groups) else
             f"diagnosis cards follow for the top {shown} groups (--top 0 or --all: every group)")
    return ("Kernels are named by their op or functor (--json has each full name). id: the group's longest "
            "launch, whose card stands for the group. '(3/4)': 3 of its 4 launches agree on that category. "
            "share: of the program's GPU time. A fix could win: the sum over the group's launches of each "
            f"launch's time × its own primary finding's impact ({PARTIAL}: only some launches have an estimate; "
            f"n/e: none has). {cards[0].upper() + cards[1:]}.")


def group_note(g: Group) -> str:
    """The line above a group's card when the group has more than one launch ("" otherwise)."""
    if g.launches == 1:
        return ""
    ids = ", ".join(f"#{i}" for i in g.launch_ids[:12]) + (" …" if g.launches > 12 else "")
    text = (f"Group {g.rank}: {g.launches} launches of this kernel with grid {dim3_text(g.grid)} and block "
            f"{dim3_text(g.block)} ({ids}), {fmt_time(g.time_ns)} in all ({pct(g.share)} of GPU time). "
            f"This card is the longest launch, #{g.representative.kernel_id}; {g.agreement()}.")
    if g.disagree:
        text += " The launches disagree on the primary: each one's own estimate counts in the group's."
    if g.fix_ns is not None:
        basis = g.fix_basis()
        text += (f" A fix could win {fmt_time(g.fix_ns)} ({pct(g.fix_share)} of GPU time)"
                 + (f": {basis}." if basis else f", summed over all {g.launches} launches."))
    else:
        text += " None of its launches has an estimate of what a fix could win."
    if g.variants > 1:
        text += f" The group holds {g.variants} instantiations of the kernel (--json lists each launch's name)."
    return text


def rest_note(ov: Overview, top: int) -> str:
    """What the cards leave out ("" when every group has a card)."""
    rest = ov.groups[len(ov.top(top)):]
    if not rest:
        return ""
    n = sum(g.launches for g in rest)
    t = sum(g.time_ns or 0.0 for g in rest)
    return (f"{len(rest)} more group(s) ({n} launch(es), {pct(t / ov.total_ns) if ov.total_ns else '–'} of GPU "
            "time) are in the overview table only: --top 0 or --all prints every card, --json has every launch.")


# ----------------------------------------------------------------------------- the terminal layout

def _cells(g: Group, split_fix: bool) -> dict[str, list[str]]:
    """Each column's lines for one group; ``split_fix``: a fix's time and share on two lines."""
    r = dict(zip(COLUMNS, row(g)))
    out = {c: [r[c]] for c in COLUMNS}
    if split_fix and g.fix_ns is not None:
        out["a fix could win"] = [fmt_time(g.fix_ns), f"({pct(g.fix_share)})" + (PARTIAL if g.estimated < g.launches
                                                                                 else "")]
    return out


def layout(ov: Overview, width: int) -> tuple[bool, bool, list[str], list[int], int]:
    """(compact, fix on two lines, columns in ORDER shown, their widths, the kernel column's width; 0: the
    kernel goes on a line of its own). No column is narrower than its widest number or name; a compact
    layout lets a category's "(3/4)" go under it."""
    for compact, split in ((False, False), (True, False), (True, True)):
        cols = [c for c in ORDER if c != "kernel" and not (compact and c == "grid / block")]
        cells = [_cells(g, split) for g in ov.groups]
        ws = []
        for c in cols:
            head = COMPACT.get(c, c) if compact else c
            widest = max([len(x) for cl in cells for x in cl[c]] + [len(head)])
            if c == "primary category" and compact:
                widest = max([len(w) for cl in cells for x in cl[c] for w in x.split()] + [len(head)])
            ws.append(widest)
        used = sum(ws) + GAP * len(cols)
        if not compact and width - used >= MIN_KERNEL:
            return False, False, cols, ws, width - used
        if compact and (used - GAP <= width or split):
            return True, split, cols, ws, 0
    raise AssertionError("unreachable")


def _pad(text: str, w: int, right: bool) -> str:
    return text.rjust(w) if right else text.ljust(w)


def group_lines(ov: Overview, width: int) -> list[Text]:
    """The group table as lines for a console ``width`` wide (see ``layout``)."""
    compact, split, cols, ws, kernel = layout(ov, width)
    heads = [COMPACT.get(c, c) if compact else c for c in cols]
    header = Text()
    for c, h, w in zip(cols, heads, ws):
        header.append(_pad(h, w, c in RIGHT) + " " * GAP, style="bold")
    if kernel:
        header.append("kernel", style="bold")
    out = [Text(header.plain.rstrip(), style="bold"), Text("─" * min(width, len(header.plain.rstrip()) or width))]
    for g in ov.groups:
        cells = _cells(g, split)
        cat = cells["primary category"][0]
        wi = ws[cols.index("primary category")]
        cells["primary category"] = fit.wrap(cat, wi, break_words=True) if len(cat) > wi else [cat]
        height = max(len(cells[c]) for c in cols)
        name = g.label
        shape = f"(grid {dim3_text(g.grid)}, block {dim3_text(g.block)})" if compact else ""
        inline = bool(kernel) and len(name) <= kernel
        for i in range(height):
            line = Text()
            for c, w in zip(cols, ws):
                x = cells[c][i] if i < len(cells[c]) else ""
                style = CONF_STYLE.get(x, "") if c == "conf." else ""
                line.append(_pad(x, w, c in RIGHT), style=style)
                line.append(" " * GAP)
            if i == 0 and inline:
                line.append(name)
            line.rstrip()
            out.append(line)
        if not inline:  # its own line: under the kernel column, else under the numbers, else from the margin
            start = next(s for s in (width - kernel if kernel else -1, ws[0] + GAP, 2) if s >= 0 and
                         (s + len(name) <= width or s == 2))
            if shape and start + len(name) + 2 + len(shape) <= width:
                out.append(Text(" " * start + name + "  " + shape))
            else:
                out.append(Text(" " * start + name))
                if shape:
                    out.append(Text(" " * (ws[0] + GAP) + shape))
    return out


def _prose(text: str, width: int, style: str = "") -> list[Text]:
    return [Text(line, style=style) for line in fit.wrap(text, width)]


def rich_tables(ov: Overview, top: int, width: int = 120) -> list:
    """The overview as rich renderables for a console ``width`` wide: a headline, the group table, the
    category table. Print them with ``soft_wrap=True``: a kernel name wider than the console stays whole."""
    out: list = [Text("Overview", style="bold underline")] + _prose(ov.headline(), width)
    scope = ov.capture.line() if ov.capture is not None else ""
    if scope:
        out += _prose(scope, width)
    where = ov.where_time_goes()
    if where:
        out += _prose(where, width, "bold")
    out.append(Text("Kernels ranked by total GPU time", style="table.title"))
    out += group_lines(ov, width)
    compact = layout(ov, width)[0]
    note = "n: launches; fix: a fix could win. " if compact else ""
    out += _prose(note + caption(ov, top), width, "table.caption")
    cat_cols = [fit.Col("primary category", fit.NAME), fit.Col("at limit", fit.NAME),
                fit.Col("launches", fit.NUMBER, "right"), fit.Col("GPU time", fit.NUMBER, "right"),
                fit.Col("share", fit.NUMBER, "right")]
    c = fit.table(cat_cols, category_rows(ov), width, "GPU time by primary category (each launch under its own)")
    if c is not None:
        out.append(c)
    else:
        out.append(Text("GPU time by primary category (each launch under its own)", style="table.title"))
        out += fit.stacked(cat_cols, category_rows(ov), width)
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(columns: Sequence[str], body: Sequence[Sequence[str]], right: Sequence[str]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |",
           "| " + " | ".join("---:" if c in right else "---" for c in columns) + " |"]
    out += ["| " + " | ".join(_cell(x) for x in r) + " |" for r in body]
    return out


def markdown(ov: Overview, top: int) -> str:
    lines = ["## Overview", "", ov.headline()]
    scope = ov.capture.line() if ov.capture is not None else ""
    if scope:
        lines += ["", scope]
    where = ov.where_time_goes()
    if where:
        lines += ["", f"**{where}**"]
    lines += ["", "### Kernels ranked by total GPU time", ""]
    body = [(r[0], f"`{r[1]}`") + r[2:6] + (f"`{r[6]}`",) + r[7:] for r in rows(ov)]
    lines += _md_table(COLUMNS, body, RIGHT)
    lines += ["", f"_{caption(ov, top)}_", "", "### GPU time by primary category", ""]
    lines += _md_table(CATEGORY_COLUMNS, [(f"`{r[0]}`",) + r[1:] for r in category_rows(ov)],
                       ("launches", "GPU time", "share"))
    return "\n".join(lines) + "\n"
