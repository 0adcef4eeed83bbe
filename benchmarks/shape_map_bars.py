"""Issue #20's bars over recorded tensor shape maps (``gemmlab shapes --dtype bf16|fp8 --out``):
the geometric mean, the shapes with M >= 128 under 95% of cuBLAS at its best, the decode shapes
(M <= 64) under both 100% of cuBLAS and 85% of the copy ceiling, and 4096^3 / 8192^3.

    python benchmarks/shape_map_bars.py docs/results/tc-shapes-2026-11-26/*/shapes_*.json.xz
    python benchmarks/shape_map_bars.py --remap OUT/shapes.sqlite    (each stored map, re-mapped)

A map's JSON holds the percentages as computed when it was taken; ``--remap`` rebuilds every
shapes run of a results database from its rows with this tree's ``gemmlab.shapes.shapemap`` (so a
change in how % of cuBLAS is computed applies to old measurements too).
"""

import json
import lzma
import sys

TARGET, DECODE_CUBLAS, DECODE_COPY = 95.0, 100.0, 85.0  # issue #20's "Done means"


def load(path: str) -> dict:
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def shape(p: dict) -> str:
    return f"{p['M']}x{p['N']}x{p['K']}"


def stored_maps(db: str) -> list[dict]:
    """Every shapes run of the database ``db``, re-mapped from its rows."""
    from gemmlab.shapes.shapemap import from_record
    from gemmlab.store import Store

    with Store(db, create=False) as store:
        return [from_record(store.load_record(r.id)).to_dict()
                for r in reversed(store.list_runs(kind="shapes"))]


def summarise(path: str, m: dict | None = None) -> list[str]:
    m = m or load(path)["map"]
    pts = m["points"]
    with_ref = [p for p in pts if p.get("pct_of_cublas") is not None]
    big = [p for p in with_ref if p["M"] >= 128]
    big_miss = sorted((p for p in big if p["pct_of_cublas"] < TARGET), key=lambda p: p["pct_of_cublas"])
    dec = [p for p in pts if p["M"] <= 64]
    dec_miss = [p for p in dec if (p.get("pct_of_cublas") or 0) < DECODE_CUBLAS
                and (p.get("pct_of_copy") or 0) < DECODE_COPY]
    sq = {p["M"]: p.get("pct_of_cublas") for p in pts if p["M"] == p["N"] == p["K"]}
    fmt = lambda v: "-" if v is None else f"{v:.1f}%"  # noqa: E731
    return [
        f"## {m['gpu']} {m['dtype']}: geometric mean {m['geomean_pct']:.1f}% over {len(with_ref)} of "
        f"{len(pts)} shapes (the rest have no reference); 4096^3 {fmt(sq.get(4096))}, 8192^3 "
        f"{fmt(sq.get(8192))}; M >= 128 under {TARGET:.0f}%: {len(big_miss)} of {len(big)}; decode "
        f"shapes under both bars: {len(dec_miss)} of {len(dec)}; every path correct: "
        f"{all(p['rung_correct'] for p in pts)}",
        "  M >= 128 under the bar: " + ", ".join(
            f"{shape(p)} {p['pct_of_cublas']:.1f} ({p['ran']})" for p in big_miss),
        "  decode under both bars (% of cuBLAS / % of copy): " + ", ".join(
            f"{shape(p)} {p.get('pct_of_cublas') or 0:.1f}/{p.get('pct_of_copy') or 0:.0f} ({p['ran']})"
            for p in dec_miss),
        "  no reference (cuBLAS refused the shape or failed the bound): " + ", ".join(
            shape(p) for p in pts if p.get("pct_of_cublas") is None),
    ]


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("maps", nargs="+", help="shape maps' JSON (.json or .json.xz), or with "
                    "--remap results databases")
    ap.add_argument("--remap", action="store_true",
                    help="rebuild every stored shapes run of each database with this tree's maths")
    args = ap.parse_args()
    for arg in args.maps:
        try:
            maps = stored_maps(arg) if args.remap else [None]
            for m in maps:
                print("\n".join(summarise(arg, m)))
        except (OSError, ValueError, KeyError) as e:
            print(f"shape_map_bars: {arg}: not a shape map{' database' if args.remap else ''} "
                  f"({e})", file=sys.stderr)
            sys.exit(2)
