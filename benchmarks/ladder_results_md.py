"""Markdown tables from the JSON that `gemmlab ladder --out` / `gemmlab sweep --out` wrote.

    python benchmarks/ladder_results_md.py docs/results/h100-2026-11-21/ladder_*.json [--sweep FILE]
"""

from __future__ import annotations

import argparse
import json


def ladder_md(path: str) -> str:
    d = json.load(open(path))
    s = d["shape"]
    env = d["env"]
    lines = [f"### {s['M']}×{s['N']}×{s['K']}", "",
             f"{env['gpu']}, driver {env.get('driver')}, CUDA runtime {env.get('cuda_runtime')}, CuPy {env.get('cupy')}, "
             f"{env.get('cublas_math_mode')}; captured {env.get('captured_utc')}; stored as run {d.get('run_id')}.", "",
             "| Version | Time (ms) | IQR/median | GFLOP/s | Speedup vs previous | % of cuBLAS | % of FP32 peak | rel. error | check | SM MHz before→after |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in d["rows"]:
        sp = r.get("speedup_vs_previous")
        clk = r.get("clocks") or {}
        lines.append(
            f"| {r['kernel']} | {r['median_s'] * 1e3:.4f} | {100 * r['relative_iqr']:.1f}% | {r['gflops']:.0f} | "
            f"{'–' if sp is None else f'{sp:.2f}x'} | {r['pct_of_cublas']:.1f} | {r['pct_of_peak']:.1f} | "
            f"{r['check'].get('rel_err', float('nan')):.2e} | {'ok' if r['correct'] else 'FAIL'} | "
            f"{clk.get('sm_mhz_before', '?')}→{clk.get('sm_mhz_after', '?')} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("ladders", nargs="+")
    p.add_argument("--sweep")
    a = p.parse_args()
    print("\n".join(ladder_md(f) for f in a.ladders))
    if a.sweep:
        print(ladder_md(a.sweep).replace("### ", "### Sweep, ", 1))


if __name__ == "__main__":
    main()
