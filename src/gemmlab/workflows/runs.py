"""Where runs are read from: a results database or a run JSON file, as ``RunRecord``s.

One loader for every command that reads runs (``report``, ``compare``, ``runs``, ``diff``): a path
is a gemmlab results database (opened read-only: reading never writes to it) or a JSON file that
``--out`` wrote (one run), or a file of several runs (``{"runs": [...]}``, as the device scripts
write lesson runs). Every record goes through ``bench.results.load_record``, so runs stored by
earlier gemmlab versions load too. Every bad input is one ``InputError`` line naming the file and
what was expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence

from gemmlab.bench.results import LADDER_KINDS, RUN_EXPECTED, RunRecord, load_record
from gemmlab.errors import InputError
from gemmlab.store import Store, is_sqlite
from gemmlab.report.model import run_types


def check_file(p: Path, expected: str = RUN_EXPECTED) -> None:
    if not p.exists():
        raise InputError(f"{p}: no such file; expected {expected}")
    if p.is_dir():
        raise InputError(f"{p}: is a directory; expected {expected}")


def read_json(p: Path, expected: str = RUN_EXPECTED) -> Any:
    check_file(p, expected)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{p}: binary data, not JSON; expected {expected}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{p}: not valid JSON (line {e.lineno}: {e.msg}); expected {expected}") from None


def file_records(p: Path) -> list[RunRecord]:
    """The runs of a JSON file: one (``--out``), or several (``{"runs": [...]}``)."""
    data = read_json(p)
    if isinstance(data, dict) and isinstance(data.get("runs"), list) and "rows" not in data:
        if not data["runs"]:
            raise InputError(f"{p}: holds no runs; expected {RUN_EXPECTED}")
        return [load_record(d, f"{p} run {i + 1}") for i, d in enumerate(data["runs"])]
    return [load_record(data, str(p))]


def is_database(p: Path) -> bool:
    check_file(p)
    return is_sqlite(p)


def load(path: str | Path, run_id: Optional[int] = None, flag: str = "--run") -> RunRecord:
    """A run from a database (``run_id``, or the newest) or from a run JSON file."""
    p = Path(path)
    if is_database(p):
        with Store(p, create=False) as store:
            if run_id is None:
                newest = store.newest()
                if newest is None:
                    raise InputError(f"{p}: the database holds no runs yet (run `gemmlab ladder` first)")
                run_id = newest.id
            return store.load_record(run_id)
    if run_id is not None:
        raise InputError(f"{flag} {run_id}: {p} is a run JSON file; {flag} picks a run in a database")
    records = file_records(p)
    if len(records) > 1:
        raise InputError(f"{p}: holds {len(records)} runs; pick one ({', '.join(r.kind for r in records)})")
    return records[0]


def records(path: str | Path, run_id: Optional[int] = None, flag: str = "--run") -> list[RunRecord]:
    """The run a database's ``run_id`` (or newest) names, or every run of a JSON file."""
    p = Path(path)
    if is_database(p) or run_id is not None:
        return [load(p, run_id, flag)]
    return file_records(p)


def newest(path: str | Path, kind: str) -> RunRecord:
    """The newest run of ``kind`` in a database, or a JSON file's run when it is of that kind."""
    p = Path(path)
    if is_database(p):
        with Store(p, create=False) as store:
            found = store.newest(kind)
            if found is None:
                raise InputError(f"{p}: no {_noun(kind)} run (run `gemmlab {kind}` first)")
            return store.load_record(found.id)
    records = [r for r in file_records(p) if r.kind == kind]
    if not records:
        raise InputError(f"{p}: not a {_noun(kind)} run; expected a `gemmlab {kind} --out FILE` JSON or a results database")
    return records[-1]


def _noun(kind: str) -> str:
    return "shape-map" if kind == "shapes" else kind


def _companions(store: Store, newest_record: RunRecord) -> list[int]:
    """The newest ladder run of each other ladder (A/B and C types) on the newest run's GPU, newest
    first; none unless the newest run is itself a ladder run."""
    if newest_record.kind != "ladder":
        return []
    seen = {run_types(newest_record)}
    out = []
    for summary in store.list_runs(kind="ladder"):  # newest first
        if summary.gpu != newest_record.gpu or summary.id == newest_record.run_id:
            continue
        try:
            types = store.run_types(summary.id)  # the rows' dtypes only, not their samples
        except InputError:
            continue  # a run this version cannot show is not a companion
        if len(types) != 1 or types <= seen:
            continue  # rows of mixed types are no ladder; a ladder already picked has a newer run
        seen |= types
        out.append(summary.id)
    return out


def load_for_report(path: str | Path, run_ids: Sequence[int] = (), flag: str = "--run") -> tuple[list[RunRecord], str]:
    """The runs a report shows, one section each, and a sentence on how they were picked ("" when
    asked for by id). From a database: ``run_ids`` in that order; none: the newest run and, when it
    is a ladder run, the newest ladder run of each other ladder on the same GPU (an SGEMM run beside
    a BF16 one), the SGEMM ladder first. From a JSON file: its run."""
    p = Path(path)
    dup = next((i for n, i in enumerate(run_ids) if i in run_ids[:n]), None)
    if dup is not None:
        raise InputError(f"{flag} {dup}: given twice; each run is one section of the report")
    if not is_database(p):
        if run_ids:
            raise InputError(f"{flag} {run_ids[0]}: {p} is a run JSON file; {flag} picks a run in a database")
        records = file_records(p)
        kinds = sorted({r.kind for r in records})
        if len(kinds) > 1:
            raise InputError(f"{p}: holds runs of several kinds ({', '.join(kinds)}); report one kind at a time")
        return records, ""
    how = ""
    with Store(p, create=False) as store:
        if run_ids:
            records = [store.load_record(i) for i in run_ids]
        else:
            first = store.newest()
            if first is None:
                raise InputError(f"{p}: the database holds no runs yet (run `gemmlab ladder` first)")
            head = store.load_record(first.id)
            extra = [store.load_record(i) for i in _companions(store, head)]
            records = sorted([head] + extra, key=lambda r: (run_types(r) != ("fp32", "fp32"), r.run_id or 0))
            if extra:
                how = (f"runs {', '.join(str(r.run_id) for r in records)}: the newest ladder run of each ladder on "
                       f"{head.gpu}; pick others with {flag}")
    if len(records) > 1:
        other = next((r for r in records if r.kind not in LADDER_KINDS), None)
        if other is not None:
            raise InputError(f"{flag} {other.run_id}: {other.source} is a {other.kind} run; report it on its own")
    return records, how


def lesson_records(path: str | Path, run_id: Optional[int] = None, lesson: Optional[str] = None,
                   flag: str = "--run") -> list[RunRecord]:
    """Lesson runs: ``run_id`` (that run), else with ``lesson`` a name (its newest run) or "all"
    (the newest run of every lesson, in the article's order), else the newest run."""
    from gemmlab.lessons import registry

    p = Path(path)
    if lesson not in (None, "all"):
        registry.get(lesson)  # a clear error for a misspelt name
    if is_database(p):
        with Store(p, create=False) as store:
            if run_id is not None:
                runs = [store.load_record(run_id)]
            elif lesson is None:
                newest_run = store.newest()
                runs = [store.load_record(newest_run.id)] if newest_run else []
            else:
                runs = [store.load_record(s.id) for s in reversed(store.list_runs()) if s.kind == "lesson"]
    else:
        if run_id is not None:
            raise InputError(f"{flag} {run_id}: {p} is a JSON file, not a database")
        runs = file_records(p)
    lessons = [r for r in runs if r.kind == "lesson"]
    if run_id is not None or lesson is None:
        return lessons
    newest_by: dict[str, RunRecord] = {}
    for r in lessons:  # oldest first: the last one of a lesson is its newest
        newest_by[str(r.meta.get("lesson"))] = r
    picked = [newest_by[n] for n in registry.NAMES if n in newest_by and (lesson == "all" or n == lesson)]
    if not picked:
        raise InputError(f"{p}: no lesson run{'' if lesson == 'all' else ' of ' + lesson} (run `gemmlab lesson NAME` first)")
    return picked
