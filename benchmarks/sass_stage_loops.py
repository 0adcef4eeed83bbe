"""The tensor-core dispatch kernels' stage loops in SASS, against another source tree: a CPU aid
for kernel edits that should leave the hot loop alone (issue #20).

For every persistent tile configuration of ``dispatch_bf16`` / ``dispatch_fp8`` (whole tiles and
split-K) and the swapped decode kernel's instantiations named with --swap, each tree's kernel is
compiled with nvcc for sm_90a and disassembled with cuobjdump. Between a kernel's first and last
wgmma (HGMMA / QGMMA) lie its stage loops; the table gives, per tree, the instructions there and
how many read a special register (S2R: threadIdx, clocks - tens of cycles each, on the path from
one stage's MMAs to the next), and how many opcodes differ. A prologue-only edit that made ptxas
re-read threadIdx.x four times in every unclustered tile's loop cost the 64 x 64 tile ~5% on the
H200 (docs/results/tc-rows-2026-11-29); this finds such a change before any device time.

    python benchmarks/sass_stage_loops.py --base OLD/src [--tree src] [--json OUT.json]
    python benchmarks/sass_stage_loops.py --base OLD/src --configs 64x64,128x256c1 --swap bf16:128:2:8

Needs nvcc and cuobjdump (with nvdisasm) on PATH: pip's nvidia-cuda-cuobjdump and
nvidia-cuda-nvdisasm wheels carry them. Each tree is imported in its own process, so an
installed gemmlab does not stand in for either tree. Exit status 1 where a kernel's loop reads
more special registers in --tree than in --base.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

_INSTR = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[0-7T]\s+)?([A-Z][A-Z0-9_.]*)")

# The child: given a tree on sys.path, write each kernel's translation unit and its symbol.
_UNITS = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from gemmlab.kernels import paths
from gemmlab.kernels.source import translation_unit
from gemmlab.runtime import dispatch_tc as D
want = sys.argv[2].split(",") if sys.argv[2] else None
out = []
for d in D.DTYPES:
    for c in D.configs(d):
        if want and c not in want:
            continue
        for split in (False, True):
            if split and D._TILES[c].pingpong:
                continue
            r = D.config_rung(d, c, split=split)
            out.append({"name": r.name, "unit": translation_unit([r])})
for spec in filter(None, sys.argv[3].split(",")):
    dt, tn, ks, st = spec.split(":")
    k = paths.swap_kernel(dt, int(tn), int(ks), int(st))
    out.append({"name": k.name, "unit": paths.translation_unit((k,))})
json.dump(out, sys.stdout)
"""


def _units(tree: str, configs: str, swap: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run([sys.executable, "-c", _UNITS, str(Path(tree).resolve()), configs, swap],
                         capture_output=True, text=True, env=env, check=False)
    if res.returncode != 0:
        raise SystemExit(f"sass_stage_loops: cannot read the kernels of {tree}: "
                         f"{res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}")
    return {u["name"]: u["unit"] for u in json.loads(res.stdout)}


def loop_stats(sass: str) -> dict:
    """Opcodes between the first and last wgmma of a kernel's SASS, and the S2R among them."""
    ops = [m.group(1) for m in map(_INSTR.match, sass.splitlines()) if m]
    mma = [i for i, op in enumerate(ops) if op.startswith(("HGMMA", "QGMMA"))]
    loop = ops[mma[0]:mma[-1] + 1] if mma else []
    return {"instructions": len(loop), "s2r": sum(op.startswith("S2R") for op in loop), "ops": loop}


def _sass(unit: str, work: Path, tag: str) -> str:
    src, cubin = work / f"{tag}.cu", work / f"{tag}.cubin"
    src.write_text(unit, encoding="utf-8")
    cmd = ["nvcc", "-std=c++17", "-lineinfo", "-gencode=arch=compute_90a,code=sm_90a", "-cubin",
           "-o", str(cubin), str(src)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True, capture_output=True,
                          text=True).stdout


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", required=True, help="the source tree to compare against (its src/)")
    p.add_argument("--tree", default="src", help="the source tree under test (default: src)")
    p.add_argument("--configs", default="", help="only these tile configurations (comma-separated)")
    p.add_argument("--swap", default="", help="swapped decode kernels as dtype:tokens:ks:stages, "
                   "comma-separated (e.g. bf16:128:2:8,fp8:16:1:8)")
    p.add_argument("--json", dest="json_path", default=None)
    args = p.parse_args(argv)
    for tool in ("nvcc", "cuobjdump"):
        if subprocess.run(["which", tool], capture_output=True).returncode != 0:
            print(f"sass_stage_loops: {tool} not on PATH (pip install nvidia-cuda-cuobjdump "
                  f"nvidia-cuda-nvdisasm, and add their bin folders)", file=sys.stderr)
            return 3
    base, tree = _units(args.base, args.configs, args.swap), _units(args.tree, args.configs, args.swap)
    rows, worse = [], 0
    with tempfile.TemporaryDirectory(prefix="gemmlab-sass-") as d:
        for i, name in enumerate(n for n in tree if n in base):
            b = loop_stats(_sass(base[name], Path(d), f"b{i}"))
            t = loop_stats(_sass(tree[name], Path(d), f"t{i}"))
            same = b["ops"] == t["ops"]
            diff = sum(x != y for x, y in zip(b["ops"], t["ops"])) + abs(len(b["ops"]) - len(t["ops"]))
            worse += t["s2r"] > b["s2r"]
            rows.append({"kernel": name, "base": {k: b[k] for k in ("instructions", "s2r")},
                         "tree": {k: t[k] for k in ("instructions", "s2r")}, "same_opcodes": same,
                         "opcodes_differing": diff})
    print(f"{'kernel':<40} {'loop instr base/tree':>21} {'S2R base/tree':>14}  opcodes, position by position")
    for r in rows:
        flag = "  <- more S2R" if r["tree"]["s2r"] > r["base"]["s2r"] else ""
        what = "same" if r["same_opcodes"] else f"{r['opcodes_differing']} differ"
        print(f"{r['kernel']:<40} {r['base']['instructions']:>10}/{r['tree']['instructions']:<10} "
              f"{r['base']['s2r']:>6}/{r['tree']['s2r']:<7}  {what}{flag}")
    print(f"{len(rows)} kernels; {worse} whose stage loops read more special registers than in "
          f"{args.base}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"base": args.base, "tree": args.tree,
                                                    "kernels": rows}, indent=1))
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
