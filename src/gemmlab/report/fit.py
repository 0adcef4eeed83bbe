"""Tables that fit a console without cutting a number, a unit or a name.

Every column has a kind:

* ``number`` and ``name`` cells (values, units, metric, section and kernel names, ids) are never
  wrapped, folded or cut: their column is as wide as its widest cell;
* ``label`` cells (a category, a confidence) may wrap, at spaces and after ``_``;
* ``prose`` cells (why it matters, a summary) wrap at spaces and share the width that is left.

``table`` lays the columns out for a console ``width`` wide and returns a rich Table whose every
line fits it, or None when the numbers and names alone do not fit: then ``stacked`` prints each row
as a block (its names and numbers on one line, never broken; its prose below, wrapped).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from rich import box
from rich.table import Table
from rich.text import Text

NUMBER, NAME, LABEL, PROSE = "number", "name", "label", "prose"
GAP = 2  # characters between two columns of a SIMPLE_HEAD table without edges (padding collapsed)
MIN_PROSE = 16  # narrowest a prose column gets (by default) before the table turns into blocks
MIN_LABEL = 8
MAX_WORD = 48  # a prose cell with a longer word (a long name) is printed as a block, the word whole
_BREAK_AFTER = re.compile(r"(?<=[_./,])")


@dataclass(frozen=True)
class Col:
    header: str
    kind: str = PROSE
    justify: str = "left"
    cap: Optional[int] = None  # a label's widest before it wraps
    weight: int = 1  # a prose column's share of the width left


def cell_width(text: str) -> int:
    return max((len(line) for line in str(text).split("\n")), default=0)


def wrap(text: str, width: int, break_words: bool = False) -> list[str]:
    """Lines of at most ``width`` characters, broken at spaces. A word longer than a line (a kernel or
    metric name) stays whole on a line of its own, however long, unless ``break_words`` (a label): then
    it is broken after ``_``, ``.``, ``/`` or ``,`` where it can be, and only then anywhere."""
    width = max(1, width)
    out: list[str] = []
    for para in str(text).split("\n"):
        line = ""
        for word in para.split():
            while break_words and len(word) > width:
                if line:
                    out.append(line)
                    line = ""
                pieces = [p for p in _BREAK_AFTER.split(word) if p]
                head = ""
                for p in pieces:
                    if len(head) + len(p) > width:
                        break
                    head += p
                head = head or word[:width]
                out.append(head)
                word = word[len(head):]
            if not word:
                continue
            if line and len(line) + 1 + len(word) <= width:
                line += " " + word
            elif line:
                out.append(line)
                line = word
            else:
                line = word
        out.append(line)
    return out


def widths(cols: Sequence[Col], rows: Sequence[Sequence[str]], width: int,
           min_prose: int = MIN_PROSE) -> Optional[list[int]]:
    """Column widths for a console ``width`` wide, or None when the number and name columns (and the
    narrowest labels and prose, ``min_prose``) do not fit."""
    natural, least = [], []
    for j, c in enumerate(cols):
        cells = [str(r[j]) for r in rows if j < len(r)]
        head_word = max((len(w) for w in c.header.split()), default=1)
        nat = max([cell_width(x) for x in cells] + [len(c.header) if c.kind in (NUMBER, NAME) else head_word, 1])
        if c.kind in (NUMBER, NAME):
            lo = max(nat, head_word)
        elif c.kind == LABEL:
            word = max((len(w) for x in cells for w in x.split()), default=1)
            lo = max(head_word, min(word, c.cap or word, nat), MIN_LABEL if nat >= MIN_LABEL else nat)
            nat = max(lo, min(nat, c.cap or nat))
        else:  # prose: never narrower than its longest word (up to MAX_WORD; longer ones make blocks)
            word = max((len(w) for x in cells for w in x.split()), default=1)
            if word > MAX_WORD:
                return None
            lo = max(head_word, min(min_prose, nat), word)
        natural.append(nat)
        least.append(lo)
    room = width - GAP * (len(cols) - 1)
    if sum(least) > room:
        return None
    out = list(least)
    spare = room - sum(out)
    # labels first (up to their natural width), then prose by weight
    for j, c in enumerate(cols):
        if c.kind == LABEL and spare > 0:
            grow = min(spare, natural[j] - out[j])
            out[j] += grow
            spare -= grow
    prose = [j for j, c in enumerate(cols) if c.kind == PROSE]
    while spare > 0 and prose:
        want = [j for j in prose if out[j] < natural[j]]
        if not want:
            break
        total = sum(cols[j].weight for j in want)
        given = 0
        for j in want:
            g = min(natural[j] - out[j], max(1, spare * cols[j].weight // total))
            out[j] += g
            given += g
            if given >= spare:
                break
        spare -= given
    return out


def table(cols: Sequence[Col], rows: Sequence[Sequence[object]], width: int, title: str = "",
          styles: Optional[Sequence[Optional[str]]] = None, min_prose: int = MIN_PROSE) -> Optional[Table]:
    """A rich Table of ``rows`` whose every line fits ``width``, or None (use ``stacked``).
    ``styles``: a style per column (None for none)."""
    text_rows = [[str(x) for x in r] for r in rows]
    w = widths(cols, text_rows, width, min_prose)
    if w is None:
        return None
    t = Table(title=Text(title, style="table.title") if title else None, title_justify="left", box=box.SIMPLE_HEAD,
              show_edge=False, pad_edge=False, padding=(0, 1), collapse_padding=True)
    for c, cw in zip(cols, w):
        fixed = c.kind in (NUMBER, NAME)
        t.add_column(Text("\n".join(wrap(c.header, cw, True))) if not fixed else Text(c.header), justify=c.justify,
                     width=cw, no_wrap=fixed, overflow="fold")
    for r in text_rows:
        cells = []
        for j, (c, cw) in enumerate(zip(cols, w)):
            x = r[j] if j < len(r) else ""
            body = x if c.kind in (NUMBER, NAME) else "\n".join(wrap(x, cw, break_words=c.kind == LABEL))
            style = styles[j] if styles and j < len(styles) and styles[j] else ""
            cells.append(Text(body, style=style))
        t.add_row(*cells)
    return t


def stacked(cols: Sequence[Col], rows: Sequence[Sequence[object]], width: int, indent: int = 4) -> list[Text]:
    """Each row as a block: its number and name cells on a line (as many as fit; a cell is never broken,
    however wide), then each label and prose cell as ``header: text``, wrapped to ``width`` under an indent."""
    out: list[Text] = []
    for r in rows:
        head = [str(r[j]) for j, c in enumerate(cols) if c.kind in (NUMBER, NAME) and j < len(r) and str(r[j])]
        line = ""
        for cell in head:  # as many whole cells a line as fit; a cell wider than the console alone on its line
            if line and len(line) + 2 + len(cell) > width:
                out.append(Text(line))
                line = " " * indent + cell
            else:
                line = (line + "  " + cell) if line else "  " + cell
        out.append(Text(line))
        for j, c in enumerate(cols):
            if c.kind in (NUMBER, NAME) or j >= len(r) or not str(r[j]).strip():
                continue
            for line in wrap(f"{c.header}: {r[j]}", width - indent):
                out.append(Text(" " * indent + line, style="dim" if c.kind == LABEL else ""))
    return out
