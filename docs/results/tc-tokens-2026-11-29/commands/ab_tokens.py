"""The A/B tables of this folder's README from the runs' JSON (benchmarks/tc_dispatch_compare.py
--json): per shape, % of cuBLAS at its best (median of the per-round ratios) of two variants
timed in the same rounds, and the difference.

    python docs/results/tc-tokens-2026-11-29/commands/ab_tokens.py
"""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def table(path: str, new: str, old: str, title: str, rows=lambda M: True) -> None:
    d = json.loads((HERE / path).read_text())
    print(f"\n{title} ({path}; {d['meta']['device']}, {d['meta']['dtype']})")
    print(f"| shape | {new} | {old} | change |\n| --- | --- | --- | --- |")
    diffs = []
    for rec in d["shapes"]:
        if not rows(rec["shape"][0]):
            continue
        v = {x["variant"]: x for x in rec["variants"] if "error" not in x}
        if new not in v or old not in v:
            continue
        a, b = v[new], v[old]
        if not (a["ok"] and b["ok"]):
            raise SystemExit(f"{rec['shape']}: a variant failed its check")
        pa, pb = 100 * a["vs_cublas"], 100 * b["vs_cublas"]
        same = a["ran"].split("_")[0] == b["ran"].split("_")[0] == "swap"
        if same:
            diffs.append(pa - pb)
        M, N, K = rec["shape"]
        print(f"| {M}x{N}x{K} | {pa:.1f} ({a['ran']}) | {pb:.1f} ({b['ran']}) | "
              f"{pa - pb:+.1f}{'' if same else ' (not both swapped)'} |")
    ahead = sum(x > 0 for x in diffs)
    print(f"both on the swapped kernel: {len(diffs)} shapes, the first ahead at {ahead}, "
          f"mean change {sum(diffs) / len(diffs):+.2f} points")


def best_token_tiles(path: str, title: str, prefix: str = "swap t=8") -> None:
    """16 tokens as two 8-token tiles: the best of every split and ring tried (variants whose
    label starts with ``prefix``) vs the rules."""
    d = json.loads((HERE / path).read_text())
    print(f"\n{title} ({path}; {d['meta']['device']}, {d['meta']['dtype']})")
    print(f"| shape | best of '{prefix}' | rules (16-token tile) | change |\n| --- | --- | --- | --- |")
    for rec in d["shapes"]:
        if rec["shape"][0] != 16:
            continue
        v = [x for x in rec["variants"] if "error" not in x and x["ok"]]
        rule = next(x for x in v if x["variant"] == "dispatch")
        best = max((x for x in v if x["variant"].startswith(prefix)), key=lambda x: x["vs_cublas"])
        M, N, K = rec["shape"]
        print(f"| {M}x{N}x{K} | {100 * best['vs_cublas']:.1f} ({best['ran']}) | "
              f"{100 * rule['vs_cublas']:.1f} ({rule['ran']}) | "
              f"{100 * (best['vs_cublas'] - rule['vs_cublas']):+.1f} |")


if __name__ == "__main__":
    table("r1/tt_fp8.json", "swap t=8 auto", "dispatch",
          "Run 1, fp8 grid one-token shapes: the 8-token tile at the rules' split and ring vs the "
          "rules of the time (16-token tile)", rows=lambda M: M == 1)
    best_token_tiles("r1/tt_fp8.json", "Run 1, fp8 grid 16-token shapes: token tiles")
    table("r2/one_bf16.json", "dispatch", "swap t=16 auto",
          "Run 2, bf16 grid one-token shapes: the rules (8-token tile) vs the 16-token tile")
    for dt in ("fp8", "bf16"):
        table(f"r2/held_{dt}.json", "dispatch", "swap t=16 auto",
              f"Run 2, held-out shapes, {dt}: the rules (8-token tile) vs the 16-token tile")
    for dt in ("fp8", "bf16"):
        best_token_tiles(f"r6/mc_{dt}.json", f"Run 6, {dt} grid 16-token shapes: multicast pairs",
                         prefix="swap t=8 mc")
