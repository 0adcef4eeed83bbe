"""A Triton row softmax in GPU MODE's convention: ``gemmlab bench examples/your-kernel/triton_softmax.py``.

gemmlab draws inputs with ``generate_input(**shape)`` for every shape in ``tests`` (two seeds each)
and the first of ``benchmarks``, compares ``custom_kernel(data)`` with ``ref_kernel(data)`` like
``torch.testing.assert_close``, then times both in interleaved rounds. ``bytes_moved`` gives the
roofline its traffic: a softmax reads x once and writes y once, so it is memory-bound.
"""

import torch
import triton
import triton.language as tl

tests = [{"rows": 127, "cols": 1000}, {"rows": 1, "cols": 4097}, {"rows": 4096, "cols": 1024}]
benchmarks = [{"rows": 16384, "cols": 4096}]


def generate_input(rows: int, cols: int, seed: int) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn((rows, cols), device="cuda", generator=g, dtype=torch.float32)


def ref_kernel(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


def bytes_moved(rows: int, cols: int) -> int:
    return 2 * rows * cols * 4  # read x, write y, float32


def flops(rows: int, cols: int) -> int:
    return 5 * rows * cols  # max, subtract, exp, sum, divide per element (exp counted as one)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + offs, y, mask=mask)


def custom_kernel(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    y = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), BLOCK=block, num_warps=8 if block >= 2048 else 4)
    return y
