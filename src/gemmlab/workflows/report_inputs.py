"""What a report adds to a run: the analyzer's diagnoses, roofline ceilings, and the reports
``ladder --profile`` left behind.

- ``load_diagnoses(paths)``: ``gemmlab analyze --json`` documents, or Nsight Compute exports that are
  analysed here, merged into one ``{"source", "kernels"}`` document.
- ``ceilings_for(gpu)``: roofline ceilings measured on this GPU (``gemmlab ceilings --measure``)
  when stored, else its spec-sheet numbers, else None; ``ceilings_from_file`` reads a given file.
- ``attach``: a ``RunView`` with those added.

Every bad input is one ``InputError`` line naming the file and what was expected.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional, Sequence

from gemmlab.errors import InputError
from gemmlab.report.model import RunView
from gemmlab.workflows.runs import check_file, read_json

log = logging.getLogger(__name__)


def attach(view: RunView, diagnoses: Optional[dict] = None, ceilings: Any = None, data_note: str = "") -> RunView:
    """The same run with diagnoses, ceilings and a data note added."""
    return replace(
        view,
        diagnoses=diagnoses if diagnoses is not None else view.diagnoses,
        ceilings=ceilings if ceilings is not None else view.ceilings,
        data_note=data_note or view.data_note,
    )


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
    check_file(p, DIAG_EXPECTED)
    with open(p, "rb") as f:
        head = f.read(4096).lstrip()  # enough to tell JSON from an export (a .ncu-rep can be gigabytes)
    if head.startswith(b"{"):
        return _diagnosis_json(read_json(p, DIAG_EXPECTED), str(p))
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
    data = read_json(p, CEILINGS_EXPECTED)
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
