"""What each kind of run needs beyond the common record: the derived numbers its JSON shows beside
each row. ``report``, ``compare``, ``runs`` and ``diff`` pick what to do by ``record.kind``; this is
the table a new kind (a user's own kernel, say) adds its line to, next to ``bench.results.KINDS``.
"""

from __future__ import annotations

from typing import Callable

from gemmlab.bench.results import KINDS, RunRecord
from gemmlab.lessons import record as lesson_record
from gemmlab.shapes import shapemap

# kind -> the per-row derived numbers written beside each row in JSON and the store
ROW_EXTRAS: dict[str, Callable[[RunRecord], list[dict]]] = {
    "ladder": RunRecord.ladder_extras,
    "bench": RunRecord.ladder_extras,
    "sweep": RunRecord.ladder_extras,
    "shapes": shapemap.row_extras,
    "lesson": lesson_record.extras,
    "user": RunRecord.ladder_extras,  # % of cuBLAS and of peak; no "previous" (versions: gemmlab history)
}
assert set(ROW_EXTRAS) == set(KINDS), "every kind of run needs its row extras"


def as_dict(record: RunRecord) -> dict:
    """The record as JSON, its rows with their kind's derived numbers: what ``--out`` writes,
    ``--json`` prints and the store keeps."""
    return record.to_dict(ROW_EXTRAS[record.kind](record))
