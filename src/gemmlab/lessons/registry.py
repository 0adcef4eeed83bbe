"""The six lessons of the fourth seed article, in the article's order."""

from __future__ import annotations

import difflib

from gemmlab.errors import InputError
from gemmlab.lessons.atomics import Atomics
from gemmlab.lessons.bank_conflicts import BankConflicts
from gemmlab.lessons.base import Lesson
from gemmlab.lessons.coalescing import Coalescing
from gemmlab.lessons.fusion import Fusion
from gemmlab.lessons.occupancy import Occupancy
from gemmlab.lessons.tiling import Tiling

LESSONS: tuple[Lesson, ...] = (Tiling(), Atomics(), Coalescing(), BankConflicts(), Occupancy(), Fusion())
NAMES = tuple(x.name for x in LESSONS)


def get(name: str) -> Lesson:
    for x in LESSONS:
        if x.name == name:
            return x
    close = difflib.get_close_matches(str(name), NAMES, n=2)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise InputError(f"unknown lesson {name!r}; {hint}expected one of {', '.join(NAMES)} (`gemmlab lesson` lists them)")
