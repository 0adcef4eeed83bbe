"""The sentences printed under a user kernel's table: its place on the ladder, the shapes it was
checked at, how it was launched and what the compiler made of it, and (when profiled) the finding
and the source lines that carry it."""

from __future__ import annotations

from typing import Any

from gemmlab.bench.results import RunRecord


def _user_row(record: RunRecord) -> Any:
    return next((r for r in record.rows if not r.reference), None)


def user_lines(record: RunRecord) -> list[str]:
    kernel = record.meta.get("kernel") or {}
    row = _user_row(record)
    out = []
    place = record.meta.get("placement") or {}
    if row is not None and place.get("text"):
        gflops = row.gflops
        rate = "" if gflops is None else (f"{gflops / 1000:.1f} TFLOP/s, " if gflops >= 1000 else f"{gflops:.0f} GFLOP/s, ")
        out.append(f"{kernel.get('name')}: {rate}{place['text']}")
        out.append(f"  (ladder: {place.get('source')})")
    if record.meta.get("placement_error"):
        out.append(f"not placed on the ladder: {record.meta['placement_error']}")
    nbytes = row.extra.get("bytes") if row is not None else None
    if nbytes:
        from gemmlab.hardware import find_gpu

        rate = nbytes / row.median_s
        gpu = find_gpu(record.gpu)
        of = f", {100 * rate / gpu.dram_bytes_per_s:.0f}% of the {gpu.name} datasheet DRAM bandwidth" if gpu else ""
        out.append(f"{kernel.get('name')}: {rate / 1e9:,.0f} GB/s ({nbytes:,} bytes moved per call, from the spec's "
                   f"bytes_moved){of}")
    checked = record.meta.get("checked") or []
    if checked:
        parts = []
        for c in checked:
            shape = c.get("shape")
            s = ("x".join(str(v) for v in shape) if isinstance(shape, list)
                 else ", ".join(f"{k}={v}" for k, v in (shape or {}).items()) or "get_inputs()")
            parts.append(f"{s} skipped ({c['skipped']})" if c.get("skipped") else f"{s} {'ok' if c.get('ok') else 'FAILED'}")
        out.append("checked at: " + "; ".join(parts))
    if row is not None:
        launched = dict(row.launched)
        if launched.get("grid"):
            line = (f"launch: grid {tuple(launched['grid'])}, block {tuple(launched['block'])}, "
                    f"{launched.get('smem', 0)} B dynamic shared memory ({row.info.get('grid_rule', '')})")
            out.append(line)
        if "registers" in launched:
            spill = launched.get("local_bytes", 0)
            out.append(f"compiled: {launched['registers']} registers/thread, {launched.get('static_smem_bytes', 0)} B "
                       f"static shared memory, {spill} B local memory per thread"
                       + (" (register spills or a local array: check the SASS for LDL/STL)" if spill else ""))
    profile = record.meta.get("profile") or {}
    diag = profile.get("diagnosis") or {}
    if diag.get("category"):
        out.append(f"profile: {diag['category']} ({diag.get('confidence', '?')} confidence)"
                   + (f" - {diag['summary']}" if diag.get("summary") else ""))
    if profile.get("finding_line"):
        out.append(f"  {profile['finding_line']}")
    if kernel.get("source_sha256"):
        out.append(f"version {kernel['source_sha256'][:12]} of {kernel.get('file')} "
                   f"(gemmlab history {kernel.get('name')} lists every version)")
    return out
