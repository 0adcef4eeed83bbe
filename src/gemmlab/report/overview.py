"""The overview that leads ``gemmlab analyze``: the kernel groups ranked by GPU time, and where the time goes.

``rows``/``category_rows`` say what the tables hold; ``rich_tables`` and ``markdown`` only format them, so
the terminal and the Markdown output carry the same cells.
"""

from __future__ import annotations

from typing import Sequence

from rich import box
from rich.table import Table
from rich.text import Text

from gemmlab.analysis.overview import Group, Overview, dim3_text, fmt_time, pct

COLUMNS = ("id", "kernel", "grid / block", "launches", "total time", "share", "primary category", "conf.",
           "at limit", "a fix could win")
RIGHT = ("id", "launches", "total time", "share", "a fix could win")
# widest a column gets before its cells wrap: a category name stays on one line, "(3 of 4)" goes below it;
# a fix's time and share go on two lines
GAP = 2  # characters between two columns (a padding space and the box's blank divider)
WIDTH_CAP = {"grid / block": 13, "primary category": 25, "a fix could win": 8, "total time": 8}
# a narrow console: short headers and tighter caps (a long category name folds onto a second line)
COMPACT = {"launches": "n", "total time": "time", "at limit": "limit", "a fix could win": "fix"}
COMPACT_CAP = {"primary category": 15, "a fix could win": 7, "total time": 7}
CATEGORY_COLUMNS = ("primary category", "at limit", "launches", "GPU time", "share")
CONF_STYLE = {"high": "green", "medium": "yellow", "low": "red"}


def fix_text(g: Group) -> str:
    """``"1.2 ms (3.4%)"``; ``n/e`` when the primary's impact is not estimated."""
    if g.fix_ns is None:
        return "n/e" if g.time_ns is not None else "–"
    return f"{fmt_time(g.fix_ns)} ({pct(g.fix_share)})"


def category_text(g: Group) -> str:
    """The representative's category, with how many launches agree when not all do."""
    cat = g.primary.category.value
    return cat if g.agree == g.launches else f"{cat} ({g.agree}/{g.launches})"


def row(g: Group) -> tuple[str, ...]:
    p = g.primary
    return (f"#{g.representative.kernel_id}", g.name, f"{dim3_text(g.grid)} / {dim3_text(g.block)}",
            str(g.launches), fmt_time(g.time_ns), pct(g.share), category_text(g), p.confidence.value,
            "yes" if p.at_limit else "no", fix_text(g))


def rows(ov: Overview) -> list[tuple[str, ...]]:
    """One row per group, most GPU time first."""
    return [row(g) for g in ov.groups]


def category_rows(ov: Overview) -> list[tuple[str, ...]]:
    return [(c.category, "yes" if c.at_limit else "no", str(c.launches), fmt_time(c.time_ns), pct(c.share))
            for c in ov.categories]


def caption(ov: Overview, top: int) -> str:
    shown = len(ov.top(top))
    cards = ("a diagnosis card follows for every group" if shown == len(ov.groups) else
             f"diagnosis cards follow for the top {shown} groups (--top 0 or --all: every group)")
    return ("id: the group's longest launch; its diagnosis is the group's. '(3/4)': 3 of its 4 launches agree "
            "on that category. share: of the program's GPU time. A fix could win: the group's time × the "
            f"primary finding's impact (n/e: not estimated). {cards[0].upper() + cards[1:]}.")


def group_note(g: Group) -> str:
    """The line above a group's card when the group has more than one launch ("" otherwise)."""
    if g.launches == 1:
        return ""
    ids = ", ".join(f"#{i}" for i in g.launch_ids[:12]) + (" …" if g.launches > 12 else "")
    return (f"Group {g.rank}: {g.launches} launches of this kernel with grid {dim3_text(g.grid)} and block "
            f"{dim3_text(g.block)} ({ids}), {fmt_time(g.time_ns)} in all ({pct(g.share)} of GPU time). "
            f"This card is the longest launch, #{g.representative.kernel_id}; {g.agreement()}.")


def rest_note(ov: Overview, top: int) -> str:
    """What the cards leave out ("" when every group has a card)."""
    rest = ov.groups[len(ov.top(top)):]
    if not rest:
        return ""
    n = sum(g.launches for g in rest)
    t = sum(g.time_ns or 0.0 for g in rest)
    return (f"{len(rest)} more group(s) ({n} launch(es), {pct(t / ov.total_ns) if ov.total_ns else '–'} of GPU "
            "time) are in the overview table only: --top 0 or --all prints every card, --json has every launch.")


def _widths(body: Sequence[Sequence[str]], width: int, cols: Sequence[int], headers: Sequence[str],
            caps: dict[str, int], kernel_min: int) -> list[int]:
    """Widths for the columns ``cols`` (indices into COLUMNS) under ``headers``: each as wide as its widest
    cell up to its cap (cells wrap beyond it); the kernel name takes what is left (``kernel_min`` to 40
    characters, then it wraps); room left over unwraps the capped columns."""
    out, widest = [], []
    for j, h in zip(cols, headers):
        longest_word = max(len(w) for w in h.split())
        widest.append(max([len(r[j]) for r in body] + [longest_word]))
        out.append(max(longest_word, min(widest[-1], caps.get(COLUMNS[j], widest[-1]))))
    k = list(cols).index(COLUMNS.index("kernel"))
    rest = sum(out) - out[k] + GAP * (len(cols) - 1)
    out[k] = max(kernel_min, min(out[k], 40, width - rest))
    spare = width - rest - out[k]
    for i, j in enumerate(cols):
        if COLUMNS[j] in caps and spare > 0:
            grow = min(spare, widest[i] - out[i])
            out[i] += grow
            spare -= grow
    return out


def layout(body: Sequence[Sequence[str]], width: int) -> tuple[list[int], list[str], list[int]]:
    """(column indices, headers, widths) for a console ``width`` wide. Below about 105 columns the table
    goes compact: short headers, no grid / block column (the cards and --json have it), tighter wraps."""
    cols = list(range(len(COLUMNS)))
    widths = _widths(body, width, cols, COLUMNS, WIDTH_CAP, 16)
    if sum(widths) + GAP * (len(cols) - 1) <= width:
        return cols, list(COLUMNS), widths
    cols = [j for j, c in enumerate(COLUMNS) if c != "grid / block"]
    headers = [COMPACT.get(COLUMNS[j], COLUMNS[j]) for j in cols]
    return cols, headers, _widths(body, width, cols, headers, COMPACT_CAP, 12)


def rich_tables(ov: Overview, top: int, width: int = 120) -> list:
    """The overview as rich renderables for a console ``width`` wide: a headline, the group table, the
    category table."""
    out: list = [Text("Overview", style="bold underline"), Text(ov.headline())]
    where = ov.where_time_goes()
    if where:
        out.append(Text(where, style="bold"))
    body = rows(ov)
    cols, headers, widths = layout(body, width)
    note = "" if len(cols) == len(COLUMNS) else "n: launches; fix: a fix could win. "
    t = Table(title="Kernels ranked by total GPU time", title_justify="left", caption=note + caption(ov, top),
              caption_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1),
              collapse_padding=True)
    for j, h, w in zip(cols, headers, widths):
        c = COLUMNS[j]
        t.add_column(h, justify="right" if c in RIGHT else "left", width=w,
                     overflow="fold")  # a long kernel name wraps: no name is cut
    conf = COLUMNS.index("conf.")
    for r in body:
        t.add_row(*[Text(r[j], CONF_STYLE.get(r[j], "")) if j == conf else r[j] for j in cols])
    out.append(t)
    c = Table(title="GPU time by primary category (each launch under its own)", title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in CATEGORY_COLUMNS:
        c.add_column(col, justify="left" if col in ("primary category", "at limit") else "right")
    for r in category_rows(ov):
        c.add_row(*r)
    out.append(c)
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
