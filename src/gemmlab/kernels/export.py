"""A ladder rung as a user file: the same convention a learner's own kernel uses.

``gemmlab kernels --export RUNG`` prints one self-contained ``.cu`` file: the rung's source with its
``#include``s inlined, the ``extern "C"`` kernel that instantiates it (SGEMM_CUDA's argument order),
and the ``// gemmlab:`` declaration of its launch, written out as numbers (block, tile or grid,
shared memory, the shapes a vector rung accepts). Copied, edited and benched unchanged
(``gemmlab bench my_copy.cu``), it is checked, timed and placed like the rung it came from.

Persistent and TMA rungs are not exported: their launch needs the device's SM count and tensor maps
made on the host, which the user-kernel convention has no words for.
"""

from __future__ import annotations

from gemmlab.errors import InputError
from gemmlab.kernels.families import Rung
from gemmlab.kernels.source import translation_unit


def refusal(rung: Rung) -> str | None:
    from gemmlab.kernels import registry

    if registry.abstract(rung.name):
        return f"rung {rung.name} picks its kernel per GPU and shape; export the rung it picks instead"
    if rung.tma or rung.persistent:
        return (f"rung {rung.name} launches with TMA tensor maps or one CTA per SM, which a user file cannot "
                f"declare; export a rung without TMA (e.g. mma_sync_bf16, cp_async_bf16)")
    return None


def declaration(rung: Rung) -> list[str]:
    """The ``// gemmlab:`` lines that launch ``rung`` as its registry does."""
    from gemmlab.kernels.families import _FAMILIES

    fam = _FAMILIES[rung.family]
    rows, cols = fam.tile(rung.params)
    block = ",".join(str(b) for b in fam.block(rung.params))
    lines = [f"// gemmlab: name=my_{rung.name} args=sgemm dtype={rung.dtype} out={rung.out_dtype}",
             f"// gemmlab: block={block} smem={fam.smem(rung.params)}"]
    if rung.arch == "sm_90a":  # wgmma and setmaxnreg exist only in the arch-specific target
        lines.append("// gemmlab: arch=sm_90a")
    if fam.rows_on_x:  # grid.x walks the rows of C
        lines.append(f"// gemmlab: grid = cdiv(M, {rows}), cdiv(N, {cols})")
    else:
        lines.append(f"// gemmlab: tile={rows},{cols}")
    if rung.vectorized:  # 16-byte global accesses: rows of A and B must start on 16-byte boundaries
        w = rung.vector_elems
        lines.append(f"// gemmlab: requires = K % {w} == 0, N % {w} == 0")
    return lines


def user_file(rung: Rung) -> str:
    why = refusal(rung)
    if why:
        raise InputError(why)
    head = [f"// {rung.name}: {rung.summary}",
            "// Exported by `gemmlab kernels --export` as a user file: edit it, then `gemmlab bench` it",
            "// (docs/your-kernel.md). The launch below is the rung's own.",
            *declaration(rung), ""]
    return "\n".join(head) + translation_unit([rung])
