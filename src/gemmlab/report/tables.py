"""Tables of measured rows, as plain lists of cells: the first article's ladder table and sweep table.

Built from a run record (fresh, stored or read from ``--out`` JSON), so every run prints the same
way. Numbers are derived from the rows' measurements and formatted here only; stored values are
never rounded.
"""

from __future__ import annotations

from typing import Optional

from gemmlab.bench.results import Row, RunRecord
from gemmlab.bench.stats import NOISE_IQR_FRACTION

NOISY_MARK = "~"

LADDER_COLUMNS = (
    "Version",
    "Time (ms)",
    "IQR/median",
    "GFLOP/s",
    "Speedup vs previous",
    "% of cuBLAS",
    "% of FP32 peak",
    "Rel. error",
    "Check",
)


def ladder_columns(record: RunRecord) -> tuple[str, ...]:
    """LADDER_COLUMNS, with the peak column naming the BF16 (FP8) tensor peak for a bf16 (fp8) run."""
    dtype = record.meta.get("dtype")
    if dtype in ("bf16", "fp16", "fp8"):
        name = f"% of {dtype.upper()} peak"
        return tuple(name if c == "% of FP32 peak" else c for c in LADDER_COLUMNS)
    return LADDER_COLUMNS


def _f(v: Optional[float], fmt: str) -> Optional[str]:
    return None if v is None else format(v, fmt)


def _check_cell(row: Row) -> str:
    if row.correct:
        return "ok"
    reason = (row.check.reason if row.check is not None else "") or "failed"
    return f"FAIL: {reason}"


def _iqr_cell(row: Row) -> str:
    cell = f"{100 * row.measurement.relative_iqr:.1f}%"
    return f"{cell} {NOISY_MARK}" if row.noisy else cell


def _common(record: RunRecord, row: Row) -> dict:
    return {
        "time": f"{row.median_s * 1e3:.4f}",
        "iqr": _iqr_cell(row),
        "gflops": _f(row.gflops, ".1f"),
        "cublas": _f(record.pct_of_reference(row), ".1f"),
        "peak": _f(record.pct_of_peak(row), ".1f"),
        "err": _f(row.rel_err, ".2e"),
        "check": _check_cell(row),
    }


def ladder_rows(record: RunRecord) -> list[list[Optional[str]]]:
    out = []
    for r in record.rows:
        c = _common(record, r)
        speed = record.speedup_vs_previous(r)
        out.append([r.name, c["time"], c["iqr"], c["gflops"], None if speed is None else f"{speed:.2f}x",
                    c["cublas"], c["peak"], c["err"], c["check"]])
    return out


def _params(row: Row) -> dict:
    return dict(row.spec.params) or dict(row.info.get("params") or {})


def sweep_table(record: RunRecord) -> tuple[list[str], list[list[Optional[str]]]]:
    """Columns and rows for a sweep: one column per kernel parameter (tile, block, unroll, ...)."""
    keys: list[str] = []
    for r in record.rows:
        for k in _params(r):
            if k not in keys:
                keys.append(k)
    columns = ["Variant", *keys, "Time (ms)", "IQR/median", "GFLOP/s", "% of cuBLAS", "Rel. error", "Check"]
    out = []
    for r in record.rows:
        params = _params(r)
        c = _common(record, r)
        out.append([r.name, *[None if params.get(k) is None else str(params[k]) for k in keys],
                    c["time"], c["iqr"], c["gflops"], c["cublas"], c["err"], c["check"]])
    return columns, out


def caption(record: RunRecord) -> str:
    """Shape, device, how the times were taken, and what the marks mean."""
    meta = record.meta
    shape = meta.get("shape") or {}
    env = record.env
    peak = meta.get("peak") or {}
    rows = record.rows
    timing = (meta.get("options") or {}).get("timing") or {}
    dtype = meta.get("dtype")
    tensor = dtype in ("bf16", "fp16", "fp8")
    types = "FP32"
    if dtype == "bf16":
        out = (meta.get("options") or {}).get("out_dtype", "bf16")
        types = f"A, B bf16, FP32 accumulate, C {out}"
    elif dtype == "fp16":
        out = (meta.get("options") or {}).get("out_dtype", "fp16")
        types = f"A, B fp16, FP32 accumulate, C {out}"
    elif dtype == "fp8":
        types = "A e4m3 (M x K), B e4m3 given N x K ('TN'), FP32 accumulator without promotion, C bf16"
    parts = [f"M,N,K = {shape.get('M')},{shape.get('N')},{shape.get('K')} {types}"]
    if env.get("gpu"):
        parts.append(f"{env['gpu']} (driver {env.get('driver', '?')}, CUDA {env.get('cuda_runtime', '?')})")
    flush = "L2 flushed between runs" if timing.get("flush_l2", True) else "L2 NOT flushed"
    parts.append(f"median of CUDA-event runs, {flush}")
    clocks = [f"{r.name} {r.clocks.get('sm_mhz_before')}→{r.clocks.get('sm_mhz_after')}"
              for r in rows if r.clocks.get("sm_mhz_before") is not None]
    if clocks:
        parts.append("SM MHz before→after: " + ", ".join(clocks))
    if peak.get("flops") and tensor:
        parts.append(
            f"dense {dtype.upper()} peak {peak['flops'] / 1e12:.1f} TFLOP/s = {peak.get('sm_count', '?')} SMs x "
            f"{peak.get(f'{dtype}_flops_per_clk_per_sm', peak.get('bf16_flops_per_clk_per_sm', '?'))} FLOP/clk x {peak.get('clock_mhz', '?')} MHz (max clock; "
            f"each row's % uses the clock its run saw)"
        )
    elif peak.get("flops"):
        parts.append(
            f"FP32 peak {peak['flops'] / 1e12:.1f} TFLOP/s = {peak.get('sm_count', '?')} SMs x "
            f"{peak.get('fp32_lanes_per_sm', '?')} lanes x 2 x {peak.get('clock_mhz', '?')} MHz"
        )
    ref = next((r for r in rows if r.reference), None)
    if tensor and ref is not None and ref.info.get("summary"):
        parts.append(f"cuBLAS row: {ref.info['summary']}")
    # What actually ran where it is not the rung itself: a scalar twin on odd shapes, the autotuned
    # rung's candidate, the dispatch rung's kernels.
    ran = [f"{r.name} ran {r.launched['rung']}" for r in rows
           if r.launched.get("rung") and r.launched["rung"] != r.name]
    if ran:
        parts.append("what ran: " + "; ".join(ran))
    parts.append(f"{NOISY_MARK} noisy: IQR/median > {NOISE_IQR_FRACTION:.0%}")
    rounds = [r.extra["vs_reference"] for r in rows if isinstance(r.extra.get("vs_reference"), dict)]
    if rounds:
        parts.append(f"timed with {ref.name if ref is not None else 'the reference'} in {len(rounds[0]['rounds'])} "
                     "interleaved rounds, order reversed each round")
    flips = [r.name for r in rows if (r.extra.get("vs_reference") or {}).get("order_flip")]
    if flips:
        parts.append("ORDER-DEPENDENT (faster than the reference only in the rounds where one of them ran first, "
                     "per-round ratios and clocks in the JSON): " + ", ".join(flips))
    if record.run_id is not None:
        parts.append(f"stored as run {record.run_id}")
    return "; ".join(parts)
