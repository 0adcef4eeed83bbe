"""Fingerprints of every kernel gemmlab compiles: the exact text handed to the compiler, the options,
the architecture, the launch geometry at a few shapes, and the PTX nvcc makes of it.

A refactor that must not change any kernel runs this before and after and compares the two files:

    python benchmarks/kernel_fingerprints.py --out before.json            # on the old commit
    python benchmarks/kernel_fingerprints.py --out after.json --compare before.json

What is fingerprinted:
- every registry rung (both ladders, sweep variants, autotuner candidates, twins): SHA-256 of the
  translation unit the runtime compiles for it (``translation_unit([rung])``), the compile options,
  the architecture it is compiled for on an sm_90 device, and (grid, block, dynamic shared memory)
  at a few shapes with 132 SMs;
- every kernel the dispatch rung can launch, every sgemm_rb variant, every lesson's source;
- the PTX of each source file's kernels (one ``nvcc -ptx`` per source and target architecture,
  all of that source's instantiations in one unit, as ``gemmlab.runtime.nvcc.resources`` builds
  them), when nvcc is installed.

CPU only. The PTX step takes a minute or two on two cores.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SHAPES = ((4096, 4096, 4096), (1000, 3000, 77), (127, 127, 127), (1, 4096, 4096), (4097, 4095, 4096))
SMS = 132
DEVICE_ARCH = "sm_90"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _api():
    """The registry, source and path modules, wherever this version of gemmlab keeps them."""
    from gemmlab.kernels import paths, sgemm_rb
    from gemmlab.kernels import registry as reg  # all_rungs(): the lookup API, before and after the split
    from gemmlab.kernels.source import translation_unit
    from gemmlab.runtime.toolchain import BASE_OPTIONS

    try:
        from gemmlab.kernels.families import arch_refusal, compile_arch  # after the registry split
    except ImportError:
        from gemmlab.kernels.registry import arch_refusal, compile_arch
    return reg, paths, sgemm_rb, translation_unit, BASE_OPTIONS, arch_refusal, compile_arch


def _geometry(rung) -> dict:
    out = {}
    for M, N, K in SHAPES:
        try:
            grid, block, smem = rung.launch_config(M, N, K, SMS)
            out[f"{M}x{N}x{K}"] = [list(grid), list(block), int(smem)]
        except Exception as e:  # a shape the rung refuses: the refusal is part of its behaviour
            out[f"{M}x{N}x{K}"] = f"{type(e).__name__}: {e}"
    return out


def fingerprints() -> tuple[dict, list]:
    reg, paths, sgemm_rb, translation_unit, options, arch_refusal, compile_arch = _api()
    from gemmlab.lessons import registry as lessons

    units: dict = {}
    groups: dict = collections.defaultdict(list)  # (source, arch) -> [text of each instantiation]
    for rung in reg.all_rungs(None):
        if arch_refusal(rung, 9, 0):
            arch = None
        else:
            arch = compile_arch(rung, DEVICE_ARCH)
        tu = translation_unit([rung])
        units[f"rung:{rung.name}"] = {"kernel": rung.kernel, "source_sha256": sha(tu), "options": list(options),
                                      "arch": arch, "threads": rung.threads,
                                      "dynamic_smem": rung.dynamic_smem, "geometry": _geometry(rung)}
        if arch:
            groups[(rung.source, arch)].append(rung)
    for k in paths.all_path_kernels():
        tu = paths.translation_unit([k])
        units[f"path:{k.name}"] = {"kernel": k.kernel, "source_sha256": sha(tu), "threads": k.threads,
                                   "block": list(k.block), "dynamic_smem": k.dynamic_smem}
    for v in sgemm_rb.VARIANTS:
        units[f"sgemm_rb:{v.name}"] = {"kernel": v.kernel, "source_sha256": sha(sgemm_rb.translation_unit([v]))}
    for lesson in lessons.LESSONS:
        units[f"lesson:{lesson.name}"] = {"source_sha256": sha(lesson.code())}
    ptx_jobs = [(f"ptx:{src}:{arch}", translation_unit(rs), arch, options)
                for (src, arch), rs in sorted(groups.items())]
    ptx_jobs += [(f"ptx:paths:{src}:{DEVICE_ARCH}", paths.translation_unit(ks), DEVICE_ARCH, options)
                 for src, ks in _by_source(paths.all_path_kernels()).items()]
    ptx_jobs += [(f"ptx:lesson:{ls.name}:{DEVICE_ARCH}", ls.code(), DEVICE_ARCH, options) for ls in lessons.LESSONS]
    ptx_jobs.append((f"ptx:sgemm_rb:{DEVICE_ARCH}", sgemm_rb.translation_unit(sgemm_rb.VARIANTS), DEVICE_ARCH, options))
    return units, ptx_jobs


def _by_source(kernels) -> dict:
    out = collections.defaultdict(list)
    for k in kernels:
        out[k.source].append(k)
    return out


def ptx(job) -> tuple[str, str]:
    from gemmlab.runtime.toolchain import arch_flag, find_nvcc

    key, text, arch, options = job
    # -lineinfo names the source by its path, and nvcc derives the names of internal-linkage symbols
    # from it: compile every unit at the same path, so one kernel gives one PTX in every run
    d = Path(tempfile.gettempdir()) / "gemmlab-fingerprints" / sha(key)[:16]
    d.mkdir(parents=True, exist_ok=True)
    src, out = d / "unit.cu", d / "unit.ptx"
    src.write_text(text, encoding="utf-8")
    res = subprocess.run([find_nvcc(), "-ptx", arch_flag(arch), *options, "-o", str(out), str(src)],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        return key, "compile failed: " + (res.stderr or res.stdout).strip().splitlines()[-1]
    return key, sha(out.read_bytes())


def compare(a: dict, b: dict) -> list[str]:
    diffs = []
    for key in sorted(set(a) | set(b)):
        if key not in a:
            diffs.append(f"only in the new file: {key}")
        elif key not in b:
            diffs.append(f"only in the old file: {key}")
        elif a[key] != b[key]:
            diffs.append(f"differs: {key}: {a[key]} != {b[key]}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="JSON file to write")
    ap.add_argument("--compare", type=Path, help="an earlier file: print every difference, exit 1 if any")
    ap.add_argument("--no-ptx", action="store_true", help="skip the nvcc step")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    units, jobs = fingerprints()
    if not args.no_ptx:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            units.update({k: {"ptx_sha256": v} for k, v in pool.map(ptx, jobs)})
    args.out.write_text(json.dumps(units, indent=1, sort_keys=True) + "\n")
    print(f"{len(units)} fingerprints -> {args.out}")
    if args.compare:
        diffs = compare(json.loads(args.compare.read_text()), units)
        for d in diffs:
            print(d)
        print(f"{len(diffs)} differences against {args.compare}")
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
