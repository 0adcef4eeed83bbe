"""The CUDA C text of the ladder: the .cu files, with local includes inlined, plus one
``extern "C"`` wrapper per rung instantiation.

Compiling a rung means compiling ``translation_unit([rung])``; the CPU test compiles
``translation_unit(<all rungs of one .cu>)`` with nvcc. Both see byte-identical kernel code, and
the text is self-contained (no include paths), so a hash of it covers everything the compiler
reads.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from gemmlab.kernels.families import Rung

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
_PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\s*$")


def _read(name: str) -> str:
    return resources.files("gemmlab.kernels").joinpath(name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def read_source(name: str) -> str:
    """The text of ``name`` (a file in gemmlab/kernels) with its ``#include "..."`` lines
    replaced by the included files (each at most once, like ``#pragma once``)."""
    seen: set[str] = set()

    def expand(fname: str) -> list[str]:
        if fname in seen:
            return []
        seen.add(fname)
        out = [f"// ---- begin {fname}"]
        for line in _read(fname).splitlines():
            m = _INCLUDE.match(line)
            if m:
                out.extend(expand(m.group(1)))
            elif _PRAGMA_ONCE.match(line):
                continue
            else:
                out.append(line)
        out.append(f"// ---- end {fname}")
        return out

    return "\n".join(expand(name)) + "\n"


# C types of a matrix element per dtype: bfloat16 and e4m3 travel as their bit patterns (no CUDA
# header is included, so there is no __nv_bfloat16 or __nv_fp8_e4m3; the kernels convert with PTX
# cvt, and e4m3 is only ever read by wgmma).
C_TYPES = {"fp32": "float", "bf16": "unsigned short", "fp8": "unsigned char"}


def wrapper(rung: "Rung") -> str:
    """The ``extern "C"`` kernel that instantiates ``rung``'s template (a plain symbol name keeps
    profiler output readable and needs no name mangling).

    Every rung has the same argument list - (M, N, K, alpha, A, B, beta, C), alpha and beta
    float32 - with pointer types from the rung's input and output dtypes; TMA rungs take the
    tensor maps of A and B first (``__grid_constant__``, 128 bytes each; persistent rungs a
    second one of A after A's, ``tma.last_rows_spec``), and clustered rungs
    carry their cluster shape as ``__cluster_dims__``. Split-K instantiations take ``int splits``
    and the float32 workspace ``W`` after K."""
    bounds = str(rung.threads)
    if rung.params.get("MINB", 0) > 0:  # ask ptxas to fit MINB blocks per SM (caps registers)
        bounds += f", {rung.params['MINB']}"
    t_in, t_out = C_TYPES[rung.dtype], C_TYPES[rung.out_dtype]
    attrs = f"__launch_bounds__({bounds})"
    cluster = rung.needs.cluster
    if cluster != (1, 1, 1):  # compile-time cluster shape: an ordinary launch forms clusters
        attrs = f"__cluster_dims__({cluster[0]}, {cluster[1]}, {cluster[2]}) " + attrs
    maps = ""
    if rung.tma:  # tensor maps by value in parameter space, where TMA reads them
        maps = "const __grid_constant__ gemmlab::tc::TensorMap tmA,\n    "
        # persistent rungs: a second map of A, boxed to its last row-tile's rows (tma.last_rows_spec)
        a_maps = "tmA, tmA_last" if rung.persistent else "tmA"
        if rung.persistent:
            maps += "const __grid_constant__ gemmlab::tc::TensorMap tmA_last,\n    "
        maps += "const __grid_constant__ gemmlab::tc::TensorMap tmB, "
        if rung.tma_store:
            maps += "const __grid_constant__ gemmlab::tc::TensorMap tmC,\n    "
        c_map = ("&tmC, " if rung.tma_store else "nullptr, ") if rung.takes_c_map else ""
        splits = ", splits, W" if rung.splitk else ""
        call = f"{rung.template_call}({a_maps}, tmB, {c_map}M, N, K, alpha, beta, C{splits});"
    else:
        call = f"{rung.template_call}(M, N, K, alpha, A, B, beta, C);"
    return (
        f'extern "C" __global__ void {attrs} {rung.kernel}(\n'
        f"    {maps}int M, int N, int K, "
        f"{'int splits, float* __restrict__ W, ' if rung.splitk else ''}"
        f"float alpha, const {t_in}* __restrict__ A,\n"
        f"    const {t_in}* __restrict__ B, float beta, {t_out}* __restrict__ C) {{\n"
        f"    {call}\n"
        "}\n"
    )


def translation_unit(rungs: Iterable["Rung"]) -> str:
    """One compilable text for rungs that share a source file."""
    rungs = list(rungs)
    if not rungs:
        raise ValueError("translation_unit needs at least one rung")
    sources = {r.source for r in rungs}
    if len(sources) != 1:
        raise ValueError(f"rungs from several sources cannot share a unit: {sorted(sources)}")
    body = read_source(rungs[0].source)
    return body + "\n" + "\n".join(wrapper(r) for r in rungs)
