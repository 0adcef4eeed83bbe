"""Where a report's data comes from: a stored run, a run JSON file, analyzer output, ceilings.

- ``from_result(d)``: the dict ``gemmlab ladder / bench / sweep`` writes with ``--out`` (and that
  ``Store.load_run`` returns) → ``RunView``.
- ``from_json(path)``, ``from_store(db, run_id)``, and ``load_run(path, run_id)`` which tells the
  two apart by the file's first bytes.
- ``load_diagnoses(paths)``: ``gemmlab analyze --json`` documents, or Nsight Compute exports that
  are analysed here, merged into one ``{"source", "kernels"}`` document.
- ``ceilings_for(gpu)``: roofline ceilings measured on this GPU (``gemmlab ceilings --measure``)
  when stored, else its spec-sheet numbers, else None.

Every bad input is one ``InputError`` line naming the file and what was expected.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from gemmlab.errors import InputError
from gemmlab.report.ladders import run_dtypes
from gemmlab.report.model import REFERENCE, KernelResult, MatteredStep, ProfileNote, RunView, SweepPoint

log = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"
RUN_EXPECTED = "a gemmlab run (`gemmlab ladder --out FILE` JSON, or a results database)"


def _row_result(row: Mapping[str, Any], seq: int, where: str) -> KernelResult:
    if not isinstance(row, Mapping):
        raise InputError(f"{where}: expected an object per result row, got {type(row).__name__}")
    spec = row.get("spec")
    if not isinstance(spec, Mapping) or not all(k in spec for k in ("M", "N", "K")) or "kernel" not in row:
        raise InputError(f"{where}: result row {seq} lacks kernel or spec M,N,K; expected {RUN_EXPECTED}")
    info = dict(row.get("info") or {})
    launched = row.get("launched") or {}
    config = {**info, **({"launched": dict(launched)} if launched else {})}
    check = row.get("check") or {}
    return KernelResult(
        name=str(row["kernel"]),
        M=spec["M"],
        N=spec["N"],
        K=spec["K"],
        samples_s=tuple(row.get("samples_s") or ()),
        median_s=row.get("median_s"),
        order=seq,  # the harness writes rows in ladder order (rungs may share an order number)
        family=REFERENCE if row.get("is_reference") else str(info.get("family") or "ladder"),
        gflops=row.get("gflops"),
        pct_of_cublas=row.get("pct_of_cublas"),
        pct_of_peak=row.get("pct_of_peak"),
        correct=row.get("correct") if isinstance(row.get("correct"), bool) else None,
        rel_err=check.get("rel_err") if isinstance(check, Mapping) else None,
        beta=spec.get("beta", 0.0),
        config=config,
    )


def _profile_notes(profile: Any) -> dict[str, ProfileNote]:
    out: dict[str, ProfileNote] = {}
    if not isinstance(profile, Mapping):
        return out
    for p in profile.get("profiles") or []:
        if isinstance(p, Mapping) and p.get("rung"):
            out[str(p["rung"])] = ProfileNote(p.get("bottleneck"), p.get("signal"), p.get("error"), p.get("report"))
    return out


def _mattered(profile: Any) -> tuple[MatteredStep, ...]:
    """The stored "What actually mattered" ranking; entries without a rank, step and speedup are skipped."""
    out = []
    if not isinstance(profile, Mapping):
        return ()
    for c in profile.get("mattered") or []:
        if not isinstance(c, Mapping):
            continue
        rank, speedup = c.get("rank"), c.get("speedup")
        step = c.get("optimization") or (f"{c['before']} -> {c['after']}" if c.get("before") and c.get("after") else None)
        if isinstance(rank, int) and isinstance(speedup, (int, float)) and not isinstance(speedup, bool) and step:
            out.append(MatteredStep(rank, str(step), float(speedup), str(c.get("why") or ""), c.get("slower") is True,
                                    c.get("within_noise") is True))
    return tuple(out)


def from_result(d: Any, source: str) -> RunView:
    """A ``gemmlab ladder / bench / sweep`` result dict (``--out`` JSON or a stored run) → RunView."""
    if not isinstance(d, Mapping) or not isinstance(d.get("rows"), list) or not isinstance(d.get("env"), Mapping):
        raise InputError(f"{source}: not {RUN_EXPECTED}: no 'rows' list and 'env' object")
    if not d["rows"]:
        raise InputError(f"{source}: the run has no result rows")
    results = tuple(_row_result(r, i, source) for i, r in enumerate(d["rows"]))
    dtype, out_dtype = run_dtypes(d, d["rows"], source)
    env = dict(d["env"])
    kind = str(d.get("command") or "ladder")
    sweep: tuple[SweepPoint, ...] = ()
    if kind == "sweep":
        sweep = tuple(
            SweepPoint(str(r.config.get("family") or r.name), dict((r.config.get("params") or {"variant": r.name})),
                       r.M, r.N, r.K, r.samples_s, r.median_s)
            for r in results
            if not r.is_reference and r.correct is not False  # a wrong kernel's speed does not count
        )
    shape = d.get("shape") or {}
    opts = d.get("options") or {}
    cmd = f"gemmlab {kind}"
    if shape:
        cmd += f" --shape {shape.get('M')},{shape.get('N')},{shape.get('K')}"
    timing = opts.get("timing") or {}
    if timing:
        cmd += f" (warm-up {timing.get('warmup_ms')} ms, {timing.get('rep_ms')} ms of runs"
        cmd += ", L2 flushed)" if timing.get("flush_l2", True) else ", L2 not flushed)"
    peak = d.get("peak") if isinstance(d.get("peak"), Mapping) else {}
    if peak.get("flops") and dtype == "fp32":
        env.setdefault("fp32_peak_tflops", peak["flops"] / 1e12)
    try:
        return RunView(
            gpu=str(d.get("gpu") or env.get("gpu") or "unknown GPU"),
            results=results,
            created_utc=str(d.get("created_utc") or env.get("captured_utc") or ""),
            command=cmd,
            env=env,
            run_id=None if d.get("run_id") is None else str(d["run_id"]),
            sweep=sweep,
            source=source,
            kind=kind,
            profile=_profile_notes(d.get("profile")),
            dtype=dtype,
            out_dtype=out_dtype,
            peak=peak,
            mattered=_mattered(d.get("profile")),
        )
    except InputError as e:
        raise InputError(f"{source}: {e.message}") from None


def _read_json(p: Path, expected: str) -> Any:
    _check_file(p, expected)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{p}: binary data, not JSON; expected {expected}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{p}: not valid JSON (line {e.lineno}: {e.msg}); expected {expected}") from None


def _check_file(p: Path, expected: str) -> None:
    if not p.exists():
        raise InputError(f"{p}: no such file; expected {expected}")
    if p.is_dir():
        raise InputError(f"{p}: is a directory; expected {expected}")


def from_json(path: str | Path) -> RunView:
    p = Path(path)
    return from_result(_read_json(p, RUN_EXPECTED), str(p))


def _has_runs_table(p: Path) -> bool:
    """Whether the SQLite file has gemmlab's tables, opened read-only (a foreign database is
    never written to, not even by creating tables)."""
    try:
        with sqlite3.connect(f"file:{p.resolve()}?mode=ro", uri=True) as db:
            names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as e:
        raise InputError(f"{p}: unreadable SQLite file ({e}); expected a gemmlab results database") from None
    return {"runs", "results"} <= names


def from_store(db_path: str | Path, run_id: Optional[int] = None) -> RunView:
    """Run ``run_id`` from a results database (default: the newest run)."""
    from gemmlab.store import Store

    p = Path(db_path)
    _check_file(p, "a gemmlab results database")
    if not _has_runs_table(p):
        raise InputError(f"{p}: an SQLite file without gemmlab's runs/results tables; expected a gemmlab results database")
    with Store(p, create=False) as store:
        if run_id is None:
            latest = store.list_runs(limit=1)
            if not latest:
                raise InputError(f"{p}: the database holds no runs yet (run `gemmlab ladder` first)")
            run_id = latest[0].id
        d = store.load_run(run_id)
    return from_result(d, f"{p} run {run_id}")


NOT_LADDER = {"shapes": "a shape map (`gemmlab report DB --shape-map`)", "lesson": "a lesson run (`gemmlab report DB --lesson NAME`)"}


def _companions(store: Any, newest: Any) -> list[int]:
    """The newest ladder run of each other ladder (dtype) on the newest run's GPU, newest first;
    none unless the newest run is itself a ladder run."""
    from gemmlab.report.ladders import dtypes_of_spec

    if newest.command != "ladder":
        return []
    seen = {dtypes_of_spec(newest.dtypes)}
    out = []
    for r in store.list_runs():  # newest first
        key = dtypes_of_spec(r.dtypes)
        if r.command == "ladder" and r.gpu == newest.gpu and key is not None and key not in seen:
            seen.add(key)
            out.append(r.id)
    return out


def store_runs(db_path: str | Path, run_ids: Sequence[int] = ()) -> tuple[list[RunView], str]:
    """The runs a report shows from a results database, one section each, and a sentence on how they
    were picked ("" when asked for by id). ``run_ids``: these runs, in this order; none: the newest
    run and, when it is a ladder run, the newest ladder run of each other ladder (an SGEMM run beside
    a BF16 one) on the same GPU, the SGEMM ladder first."""
    from gemmlab.report.ladders import dtypes_of_spec
    from gemmlab.store import Store

    p = Path(db_path)
    _check_file(p, "a gemmlab results database")
    if not _has_runs_table(p):
        raise InputError(f"{p}: an SQLite file without gemmlab's runs/results tables; expected a gemmlab results database")
    dup = next((i for n, i in enumerate(run_ids) if i in run_ids[:n]), None)
    if dup is not None:
        raise InputError(f"--run {dup}: given twice; each run is one section of the report")
    how = ""
    with Store(p, create=False) as store:
        ids = list(run_ids)
        if not ids:
            runs = store.list_runs()
            if not runs:
                raise InputError(f"{p}: the database holds no runs yet (run `gemmlab ladder` first)")
            extra = _companions(store, runs[0])
            by_id = {r.id: r for r in runs}
            ids = sorted([runs[0].id] + extra, key=lambda i: (dtypes_of_spec(by_id[i].dtypes) != ("fp32", "fp32"), i))
            if extra:
                how = (f"runs {', '.join(map(str, ids))}: the newest ladder run of each ladder on {runs[0].gpu}; "
                       "pick others with --run")
        docs = [(i, store.load_run(i)) for i in ids]
    views = []
    for i, d in docs:
        if len(docs) > 1 and d.get("command") in NOT_LADDER:
            raise InputError(f"--run {i}: {p} run {i} is {NOT_LADDER[d['command']]}; report it on its own")
        views.append(from_result(d, f"{p} run {i}"))
    return views, how


def load_runs(path: str | Path, run_ids: Sequence[int] = (), flag: str = "--run") -> tuple[list[RunView], str]:
    """The runs of a report: a database's (see ``store_runs``) or a run JSON file's one run."""
    p = Path(path)
    _check_file(p, RUN_EXPECTED)
    if is_sqlite(p):
        return store_runs(p, run_ids)
    if run_ids:
        raise InputError(f"{flag} {run_ids[0]}: {p} is a run JSON file (one run); {flag} picks a run in a database")
    return [from_json(p)], ""


def is_sqlite(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def load_run(path: str | Path, run_id: Optional[int] = None, flag: str = "--run") -> RunView:
    """A run from a database (``run_id`` or the newest) or from a run JSON file."""
    p = Path(path)
    _check_file(p, RUN_EXPECTED)
    if is_sqlite(p):
        return from_store(p, run_id)
    if run_id is not None:
        raise InputError(f"{flag} {run_id}: {p} is a run JSON file (one run); {flag} picks a run in a database")
    return from_json(p)


# --- diagnoses -------------------------------------------------------------------------------
DIAG_EXPECTED = "`gemmlab analyze --json` output or an Nsight Compute export (.csv, .ncu-rep)"


def _analyze_export(p: Path, data: Optional[bytes] = None) -> dict:
    """Run the analyzer on an Nsight Compute export (``data``: its bytes, already read from a pipe);
    its ``gemmlab analyze --json`` document."""
    from gemmlab.analysis import overview
    from gemmlab.analysis.diagnose import diagnose_all
    from gemmlab.analysis.evidence import report_dict
    from gemmlab.profile.load import load, load_bytes, stream_name

    source = stream_name(p)
    launches = load(p) if data is None else load_bytes(data, source)
    diags = diagnose_all(launches)
    return report_dict(source, diags, overview=overview.build(launches, diags).to_dict())


def _diagnosis_doc(p: Path) -> dict:
    from gemmlab.profile.load import is_stream, read_stream, stream_name

    if is_stream(p):  # '-', a FIFO, <(...): read once, then tell JSON from an export by its bytes
        data = read_stream(p)
        if data.lstrip().startswith(b"{"):
            return _diagnosis_json(_json_bytes(data, stream_name(p)), stream_name(p))
        return _analyze_export(p, data)
    _check_file(p, DIAG_EXPECTED)
    head = p.read_bytes()[:4096].lstrip()
    if head.startswith(b"{"):
        return _diagnosis_json(_read_json(p, DIAG_EXPECTED), str(p))
    return _analyze_export(p)  # the profile loader names what is wrong with a bad export


def _json_bytes(data: bytes, source: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{source}: binary data, not JSON; expected {DIAG_EXPECTED}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{source}: not valid JSON (line {e.lineno}: {e.msg}); expected {DIAG_EXPECTED}") from None


def _diagnosis_json(data: Any, source: str) -> dict:
    if not isinstance(data, dict) or not isinstance(data.get("kernels"), list):
        raise InputError(f"{source}: JSON without a 'kernels' list; expected {DIAG_EXPECTED}")
    return data


def load_diagnoses(paths: Sequence[str | Path]) -> dict | None:
    """All diagnoses from ``paths`` in one document: {"source": "a; b", "kernels": [...]}."""
    if not paths:
        return None
    docs = [_diagnosis_doc(Path(p)) for p in paths]
    return {
        "source": "; ".join(str(d.get("source") or p) for d, p in zip(docs, paths)),
        "kernels": [k for d in docs for k in d["kernels"]],
        # each document's own overview (GPU time by kernel group): they describe different programs,
        # so they are shown one by one, never merged
        "overviews": [{"source": str(d.get("source") or p), **d["overview"]} for d, p in zip(docs, paths)
                      if isinstance(d.get("overview"), dict)],
    }


def profiled_reports(view: RunView) -> list[Path]:
    """The .ncu-rep files ``ladder --profile`` wrote for this run that still exist."""
    out = []
    for note in view.profile.values():
        if note.report and Path(note.report).is_file():
            out.append(Path(note.report))
        elif note.report:
            log.info("ladder --profile report %s is gone; its rung gets no diagnosis card", note.report)
    return out


def attach(view: RunView, diagnoses: Optional[dict] = None, ceilings: Any = None, data_note: str = "") -> RunView:
    """The same run with diagnoses, ceilings and a data note added."""
    return replace(
        view,
        diagnoses=diagnoses if diagnoses is not None else view.diagnoses,
        ceilings=ceilings if ceilings is not None else view.ceilings,
        data_note=data_note or view.data_note,
    )


# --- roofline ceilings -----------------------------------------------------------------------
CEILINGS_EXPECTED = "`gemmlab ceilings --measure --json` output or a ceilings store"


def _measured(m: Any) -> Any:
    from gemmlab.analysis.roofline import Ceilings

    return Ceilings(m.gpu, m.fp32_flops, m.copy_bytes_per_s, "measured",
                    f"measured {m.timestamp}: cuBLAS SGEMM n={m.gemm_n}, device-to-device copy")


def ceilings_from_file(path: str | Path, gpu: str) -> Any:
    """Measured ceilings from a file: ``gemmlab ceilings --measure --json`` output (one
    measurement) or a ceilings store (the entry for ``gpu``)."""
    from gemmlab.bench import ceilings as ceiling_store

    p = Path(path)
    data = _read_json(p, CEILINGS_EXPECTED)
    if isinstance(data, dict) and isinstance(data.get("measurement"), dict):
        try:
            m = ceiling_store.CeilingMeasurement.from_dict(data["measurement"])
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"{p}: malformed ceilings measurement ({e}); expected {CEILINGS_EXPECTED}") from None
        from gemmlab.hardware import find_gpu

        same = m.gpu == gpu or (find_gpu(m.gpu) is not None and find_gpu(m.gpu) == find_gpu(gpu))
        if not same:
            raise InputError(f"{p}: ceilings measured on {m.gpu}, but the run is from {gpu}")
        return _measured(m)
    m = ceiling_store.latest_for(gpu, p)  # raises InputError naming the file when it is not a store
    if m is None:
        raise InputError(f"{p}: no ceilings stored for {gpu}")
    return _measured(m)


def ceilings_for(gpu: str, store: Optional[Path] = None) -> Any:
    """Measured ceilings for ``gpu`` when stored, else its spec-sheet numbers, else None."""
    from gemmlab.analysis.roofline import spec_ceilings
    from gemmlab.bench import ceilings as ceiling_store
    from gemmlab.hardware import find_gpu

    try:
        m = ceiling_store.latest_for(gpu, store)
    except InputError as e:  # an unreadable store is worth a log line, not a failed report
        log.warning("ceilings store: %s", e.message)
        m = None
    if m is not None:
        return _measured(m)
    spec = find_gpu(gpu)
    return spec_ceilings(spec) if spec is not None else None
