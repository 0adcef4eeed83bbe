"""Whose code a kernel is, and advice for the caller of a library kernel.

A diagnosis of a cuBLAS, cuDNN, PyTorch (ATen), CUB/Thrust or NCCL kernel must speak to the person who
calls it: they cannot add ``__launch_bounds__`` to cuBLAS or pad a shared tile in cuDNN. What they can
change is outside the kernel — precision, shape and alignment, layout, fusion, batching, another call or
algorithm. The kernel's *name* is used here and only here, to choose whose advice to give; it never
decides the bottleneck category (the rules read metrics only).
"""

from __future__ import annotations

import functools
import re
from typing import Optional

from gemmlab.analysis.evidence import Finding
from gemmlab.analysis.vocabulary import Category as C

# (owner, pattern over the demangled name or the bare name). Order matters: the first match wins.
OWNERS: tuple[tuple[str, re.Pattern], ...] = (
    ("NCCL", re.compile(r"\bnccl", re.I)),
    ("cuDNN", re.compile(r"cudnn|xmma_fprop|xmma_dgrad|xmma_wgrad|implicit_convolve|fort_native_sdpa|"
                         r"_cga\d+x\d+x\d+_kernel\d", re.I)),
    # cuBLAS(Lt) ships CUTLASS-built kernels wrapped as cutlass::Kernel2<cutlass_<arch>_...>
    ("cuBLAS", re.compile(r"cublas|nvjet_|sm\d+_xmma_gemm|gemv2[NT]_kernel|gemvx?_kernel|splitKreduce_kernel|"
                          r"gemmSN_|gemmk1_kernel|dot_kernel|cutlass::Kernel2<cutlass_\d+_", re.I)),
    # ncu demangles ATen's at::native:: as native::; PyTorch also instantiates CUB under at_cuda_detail
    ("PyTorch (ATen)", re.compile(r"(^|[\s<(*&,])(at::)?native::|\bat::cuda::|\bc10::|at_cuda_detail::|"
                                  r"pytorch_flash::|\bflash::flash_fwd|fmha_cutlass|\bmbtopk::|"
                                  r"cuda::kernelHistogram|cunn_\w+", re.I)),
    ("CUB/Thrust", re.compile(r"\bcub::|\bthrust::|^Device(Radix|Scan|Reduce|Select|Segmented)", re.I)),
)


@functools.lru_cache(maxsize=4096)  # a pure function of the names; captures repeat them
def owner(name: str, demangled: str = "") -> Optional[str]:
    """The library a kernel belongs to, from its name; None for the user's own code (and Triton)."""
    text = f"{demangled or ''} {name or ''}"
    for lib, pat in OWNERS:
        if pat.search(text):
            return lib
    return None


_BY_CATEGORY: dict[C, str] = {
    C.DRAM_BOUND: "move fewer bytes around the call: fuse it with its neighbours (torch.compile, a fused op), "
                  "keep tensors in a smaller type (BF16/FP8), and avoid copies that only change layout",
    C.L2_BOUND: "the traffic pattern is the op's; a different layout of the inputs (contiguous in the dimension "
                "the op walks) or fusing the op away changes it",
    C.TENSOR_BOUND: "the tensor cores are the limit: only less math (shape, sparsity) or lower precision "
                    "(FP8 through cuBLASLt / torch._scaled_mm where accuracy allows) makes it faster",
    C.COMPUTE_BOUND: "the math runs on CUDA cores: allow tensor cores where precision permits "
                     "(torch.set_float32_matmul_precision('high') for TF32, BF16 inputs), or call a variant "
                     "that does less work",
    C.GRID_TOO_SMALL: "the call is too small to fill the GPU: batch more work into one call (larger batch, "
                      "grouped/batched GEMM), or capture the sequence in a CUDA graph so launch gaps shrink",
    C.TAIL_EFFECT: "the problem splits into a partial last wave: a shape that is a multiple of the library's "
                   "tile (pad M/N/K), or another algorithm choice (cuBLASLt heuristics, "
                   "torch.backends.cudnn.benchmark=True), changes the wave count",
    C.LATENCY_BOUND: "the op is too small or too serial to hide latency: batch calls together, fuse small ops "
                     "(torch.compile), or capture them in a CUDA graph",
    C.UNCOALESCED_GLOBAL_LOADS: "the input layout makes the op read scattered addresses: make the input "
                                "contiguous in the dimension the op walks (e.g. channels_last for convolutions), "
                                "once, before repeated use",
    C.UNCOALESCED_GLOBAL_STORES: "the output layout makes the op write scattered addresses: ask for the layout "
                                 "the next op wants instead of transposing afterwards",
    C.ATOMIC_CONTENTION: "many updates land on few targets: pre-aggregate (sort the indices and use a segment "
                         "reduction), or spread the targets across more rows before the scatter",
    C.LOCAL_MEMORY: "the library's kernel spills for this configuration: another data type, shape or algorithm "
                    "choice may select a variant that does not",
}


_UNIT = {C.DRAM_BOUND: "DRAM", C.L2_BOUND: "L2", C.TENSOR_BOUND: "the tensor cores",
         C.COMPUTE_BOUND: "its math pipe", C.L1_LSU_BOUND: "L1/LSU", C.SHARED_MEMORY_THROUGHPUT: "shared memory"}


def caller_advice(lib: str, primary: Finding) -> list[str]:
    """Recommendations for the caller of a ``lib`` kernel, given its primary finding."""
    out = []
    what = _BY_CATEGORY.get(primary.category)
    if primary.at_limit:
        unit = _UNIT.get(primary.category, "its busiest unit")
        out.append(f"This {lib} kernel already runs {unit} at the limit: nothing inside the kernel is left to "
                   "tune, and the gain is outside it — "
                   + (what or "a different precision, shape, layout, fusion or call") + ".")
    elif what is not None:
        out.append(f"This is {lib}'s kernel (its code is not yours to change): {what}.")
    else:
        out.append(f"This is {lib}'s kernel (its code is not yours to change): try another algorithm or "
                   "configuration for the call (cuBLASLt heuristics, torch.backends.cudnn.benchmark=True, "
                   "torch.compile mode='max-autotune'), another shape or alignment, or another precision.")
    if primary.category in (C.OCCUPANCY_REGISTERS, C.OCCUPANCY_SHARED_MEMORY, C.OCCUPANCY_BLOCK_SIZE,
                            C.SHARED_BANK_CONFLICTS, C.SHARED_MEMORY_THROUGHPUT, C.L1_LSU_BOUND,
                            C.WARP_DIVERGENCE, C.BARRIER_STALLS, C.INSTRUCTION_OVERHEAD):
        out.append("The library chose this kernel's resources and code; a different call (another algorithm, "
                   "data type or shape) selects another kernel — compare them with gemmlab analyze.")
    return out
