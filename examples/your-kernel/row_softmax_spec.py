"""A CUDA kernel that is not a GEMM, through a spec: ``gemmlab bench examples/your-kernel/row_softmax_spec.py``.

The spec follows GPU MODE's convention (``generate_input``, ``ref_kernel``, ``custom_kernel``,
``tests``, ``benchmarks``); ``custom_kernel`` launches ``row_softmax.cu`` through
``gemmlab.runtime.user_cuda.load_kernel``, which compiles it with ``-lineinfo`` under its own path,
so ``gemmlab profile`` on this file names the lines of row_softmax.cu that hold the stalls.
"""

import cupy
import torch

from gemmlab.runtime.user_cuda import load_kernel

tests = [{"rows": 127, "cols": 1000}, {"rows": 3, "cols": 4097}]
benchmarks = [{"rows": 16384, "cols": 4096}]
# __expf is a fast approximation (2 ulp + the exponent's rounding): a little looser than torch's fp32 default
RTOL, ATOL = 1e-5, 1e-6

_kernel = load_kernel("row_softmax.cu", "row_softmax")


def generate_input(rows: int, cols: int, seed: int) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn((rows, cols), device="cuda", generator=g, dtype=torch.float32)


def ref_kernel(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def bytes_moved(rows: int, cols: int) -> int:
    return 2 * rows * cols * 4  # x read once (two passes hit L2/L1 for rows this size), y written once


def custom_kernel(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty_like(x)
    _kernel((rows,), (256,), (cupy.asarray(x), cupy.asarray(y), cupy.int32(cols)))
    return y
