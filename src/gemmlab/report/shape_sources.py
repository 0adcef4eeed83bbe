"""Shape-map runs from where they are kept: a results database (``gemmlab shapes`` stores there) or
a ``gemmlab shapes --out`` JSON file.

``shapes_run(path, run_id, newest_shapes)`` returns (result dict, where it came from) when the
arguments pick a shapes run, or None when they pick another kind of run (the caller then goes the
ladder or lesson way). ``newest_shapes``: the newest shapes run in the database, whatever came
after it; without it, ``run_id`` (or the newest run) decides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from gemmlab.errors import InputError
from gemmlab.shapes.shapemap import is_shapes_run


def shapes_run(path: Path, run_id: Optional[int] = None, newest_shapes: bool = False) -> Optional[tuple[dict, str]]:
    from gemmlab.report.sources import RUN_EXPECTED, _check_file, _has_runs_table, is_sqlite
    from gemmlab.store import Store

    p = Path(path)
    _check_file(p, RUN_EXPECTED)  # the same line the ladder path gives
    if is_sqlite(p):
        if not _has_runs_table(p):
            return None  # the ladder path says what is wrong with this file
        with Store(p, create=False) as store:
            runs = store.list_runs()
            if newest_shapes:
                if run_id is not None:
                    raise InputError("--shape-map picks the newest shape-map run; --run picks one by id: give one of them")
                ids = [r.id for r in runs if r.command == "shapes"]
                if not ids:
                    raise InputError(f"{p}: no shape-map run (run `gemmlab shapes` first)")
                run_id = ids[0]  # list_runs is newest first
            elif run_id is None:
                if not runs:
                    return None
                run_id = runs[0].id
            d = store.load_run(run_id)
        return (d, f"{p} run {run_id}") if is_shapes_run(d) else _not_shapes(newest_shapes, p)
    if run_id is not None:
        return None  # the ladder path explains --run on a JSON file
    try:
        d: Any = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _not_shapes(newest_shapes, p)
    return (d, str(p)) if is_shapes_run(d) else _not_shapes(newest_shapes, p)


def _not_shapes(newest_shapes: bool, p: Path) -> None:
    if newest_shapes:
        raise InputError(f"{p}: not a shape-map run (`gemmlab shapes --out FILE` JSON or a results database)")
    return None
