"""Lesson runs from where they are kept: a results database (``gemmlab lesson`` stores there), a
``gemmlab lesson --out`` JSON file (one run), or the device script's ``lessons_<gpu>.json``
(``{"runs": [...]}``).

``lesson_runs(path, run_id, lesson)`` returns the lesson runs the arguments pick, or None when
they pick a ladder run (the caller then goes the ladder way). ``lesson``: a lesson name picks that
lesson's newest run; "all" the newest run of every lesson.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from gemmlab.errors import InputError
from gemmlab.lessons import registry
from gemmlab.report.lessons import is_lesson_run, latest_by_lesson


def _from_store(p: Path, run_id: Optional[int], lesson: Optional[str]) -> list[dict]:
    from gemmlab.report.sources import _has_runs_table
    from gemmlab.store import Store

    if not _has_runs_table(p):
        raise InputError(f"{p}: an SQLite file without gemmlab's runs/results tables; expected a gemmlab results database")
    with Store(p, create=False) as store:
        if run_id is not None:
            return [store.load_run(run_id)]
        summaries = list(reversed(store.list_runs()))  # oldest first
        if lesson is None:
            return [store.load_run(summaries[-1].id)] if summaries else []
        return [store.load_run(s.id) for s in summaries if s.command == "lesson"]


def _from_json(p: Path) -> list[dict]:
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{p}: not a JSON run file ({e})") from None
    if isinstance(data, dict) and isinstance(data.get("runs"), list):
        return [r for r in data["runs"] if isinstance(r, dict)]
    return [data] if isinstance(data, dict) else []


def lesson_runs(path: Path, run_id: Optional[int] = None, lesson: Optional[str] = None,
                flag: str = "--run") -> Optional[list[dict]]:
    from gemmlab.report.sources import _check_file, is_sqlite

    p = Path(path)
    if lesson is None:  # only a lesson run goes this way; anything else is the ladder path's to judge
        try:
            lesson_runs(p, run_id, "all", flag)  # raises when the file holds no lesson run
        except InputError:
            return None
        picked = _from_store(p, run_id, None) if is_sqlite(p) else _from_json(p)
        return picked if picked and all(is_lesson_run(r) for r in picked) else None
    _check_file(p, "a gemmlab run (JSON) or results database")
    if lesson != "all":
        registry.get(lesson)  # a clear error for a misspelt name
    if is_sqlite(p):
        runs = _from_store(p, run_id, lesson)
    else:
        if run_id is not None:
            raise InputError(f"{flag} {run_id}: {p} is a JSON file, not a database")
        runs = _from_json(p)
    lessons = [r for r in runs if is_lesson_run(r)]
    newest = latest_by_lesson(lessons)
    if lesson != "all":
        newest = {k: v for k, v in newest.items() if k == lesson}
    if not newest:
        raise InputError(f"{p}: no lesson run{'' if lesson == 'all' else ' of ' + lesson} (run `gemmlab lesson NAME` first)")
    return list(newest.values())
