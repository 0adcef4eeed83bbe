"""KernelBench's convention: ``gemmlab bench examples/your-kernel/kernelbench_swish.py``.

``Model`` is the reference, ``ModelNew`` the candidate (here one fused Triton kernel for
x * sigmoid(x), where PyTorch launches two); ``get_inputs()`` makes the inputs. gemmlab builds both
from the same seed, compares them with KernelBench's 1e-2 tolerance and times both.
"""

import torch
import triton
import triton.language as tl


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


@triton.jit
def _swish(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.numel()
        _swish[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
        return y


def get_inputs():
    return [torch.randn(4096, 8193)]  # 8193: a row that is a multiple of no block


def get_init_inputs():
    return []
