"""Tables of measured rows, as plain lists of cells: the first article's ladder table and sweep table.

Built from result dicts (``Row.to_dict()``, or a run loaded from the store), so a fresh run and a
stored one print the same way. Numbers are formatted here only; stored values are never rounded.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

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


def ladder_columns(result: Mapping[str, Any]) -> tuple[str, ...]:
    """LADDER_COLUMNS, with the peak column naming the BF16 (FP8) tensor peak for a bf16 (fp8)
    run."""
    dtype = result.get("dtype")
    if dtype in ("bf16", "fp8"):
        name = f"% of {dtype.upper()} peak"
        return tuple(name if c == "% of FP32 peak" else c for c in LADDER_COLUMNS)
    return LADDER_COLUMNS


def _f(v: Optional[float], fmt: str) -> Optional[str]:
    return None if v is None else format(v, fmt)


def _check_cell(row: Mapping[str, Any]) -> str:
    if row.get("correct"):
        return "ok"
    reason = (row.get("check") or {}).get("reason", "failed")
    return f"FAIL: {reason}"


def _iqr_cell(row: Mapping[str, Any]) -> str:
    cell = f"{100 * row['relative_iqr']:.1f}%"
    return f"{cell} {NOISY_MARK}" if row.get("noisy") else cell


def _common(row: Mapping[str, Any]) -> dict:
    rel = (row.get("check") or {}).get("rel_err")
    return {
        "time": f"{row['median_s'] * 1e3:.4f}",
        "iqr": _iqr_cell(row),
        "gflops": f"{row['gflops']:.1f}",
        "cublas": _f(row.get("pct_of_cublas"), ".1f"),
        "peak": _f(row.get("pct_of_peak"), ".1f"),
        "err": _f(rel, ".2e"),
        "check": _check_cell(row),
    }


def ladder_rows(rows: Sequence[Mapping[str, Any]]) -> list[list[Optional[str]]]:
    out = []
    for r in rows:
        c = _common(r)
        speed = r.get("speedup_vs_previous")
        out.append(
            [
                r["kernel"],
                c["time"],
                c["iqr"],
                c["gflops"],
                None if speed is None else f"{speed:.2f}x",
                c["cublas"],
                c["peak"],
                c["err"],
                c["check"],
            ]
        )
    return out


def _params(row: Mapping[str, Any]) -> Mapping[str, Any]:
    return (row.get("spec") or {}).get("params") or (row.get("info") or {}).get("params") or {}


def sweep_table(rows: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[Optional[str]]]]:
    """Columns and rows for a sweep: one column per kernel parameter (tile, block, unroll, ...)."""
    keys: list[str] = []
    for r in rows:
        for k in _params(r):
            if k not in keys:
                keys.append(k)
    columns = ["Variant", *keys, "Time (ms)", "IQR/median", "GFLOP/s", "% of cuBLAS", "Rel. error", "Check"]
    out = []
    for r in rows:
        params = _params(r)
        c = _common(r)
        out.append(
            [
                r["kernel"],
                *[None if params.get(k) is None else str(params[k]) for k in keys],
                c["time"],
                c["iqr"],
                c["gflops"],
                c["cublas"],
                c["err"],
                c["check"],
            ]
        )
    return columns, out


def caption(result: Mapping[str, Any]) -> str:
    """Shape, device, how the times were taken, and what the marks mean."""
    shape = result.get("shape") or {}
    env = result.get("env") or {}
    peak = result.get("peak") or {}
    rows = result.get("rows") or []
    timing = (result.get("options") or {}).get("timing") or {}
    dtype = result.get("dtype")
    tensor = dtype in ("bf16", "fp8")
    types = "FP32"
    if dtype == "bf16":
        out = (result.get("options") or {}).get("out_dtype", "bf16")
        types = f"A, B bf16, FP32 accumulate, C {out}"
    elif dtype == "fp8":
        types = "A e4m3 (M x K), B e4m3 given N x K ('TN'), FP32 accumulator without promotion, C bf16"
    parts = [f"M,N,K = {shape.get('M')},{shape.get('N')},{shape.get('K')} {types}"]
    if env.get("gpu"):
        parts.append(f"{env['gpu']} (driver {env.get('driver', '?')}, CUDA {env.get('cuda_runtime', '?')})")
    flush = "L2 flushed between runs" if timing.get("flush_l2", True) else "L2 NOT flushed"
    parts.append(f"median of CUDA-event runs, {flush}")
    clocks = [
        f"{r['kernel']} {r['clocks'].get('sm_mhz_before')}→{r['clocks'].get('sm_mhz_after')}"
        for r in rows
        if r.get("clocks") and r["clocks"].get("sm_mhz_before") is not None
    ]
    if clocks:
        parts.append("SM MHz before→after: " + ", ".join(clocks))
    if peak.get("flops") and tensor:
        parts.append(
            f"dense {dtype.upper()} peak {peak['flops'] / 1e12:.1f} TFLOP/s = {peak['sm_count']} SMs x "
            f"{peak[f'{dtype}_flops_per_clk_per_sm']} FLOP/clk x {peak['clock_mhz']} MHz (max clock; "
            f"each row's % uses the clock its run saw)"
        )
    elif peak.get("flops"):
        parts.append(
            f"FP32 peak {peak['flops'] / 1e12:.1f} TFLOP/s = {peak['sm_count']} SMs x "
            f"{peak['fp32_lanes_per_sm']} lanes x 2 x {peak['clock_mhz']} MHz"
        )
    ref = next((r for r in rows if r.get("is_reference")), None)
    if tensor and ref is not None and (ref.get("info") or {}).get("summary"):
        parts.append(f"cuBLAS row: {ref['info']['summary']}")
    # What actually ran where it is not the rung itself: a scalar twin on odd shapes, the autotuned
    # rung's candidate, the dispatch rung's kernels.
    ran = [f"{r['kernel']} ran {r['launched']['rung']}" for r in rows
           if (r.get("launched") or {}).get("rung") and r["launched"]["rung"] != r["kernel"]]
    if ran:
        parts.append("what ran: " + "; ".join(ran))
    parts.append(f"{NOISY_MARK} noisy: IQR/median > {NOISE_IQR_FRACTION:.0%}")
    if result.get("run_id") is not None:
        parts.append(f"stored as run {result['run_id']}")
    return "; ".join(parts)
