"""The grown diagnosis corpus (issue 19): kernel families the first corpus lacks, captured the same way.

    ncu --profile-from-start off --nvtx --nvtx-push-pop-scope process ... \
        python3 benchmarks/corpus/workload_grown.py [--only RE] [--list]

Same driver as ``workload.py`` (one warm launch of each case inside ``cudaProfilerStart``/``Stop`` and an
NVTX range named after the case). The families: transcendental, integer and RNG elementwise kernels,
pooling and upsampling, CUB select/scan/unique, cuFFT, binary search, cuBLAS paths a square GEMM never
takes (TN, tall K with split-K, decode, unaligned FP16), cdist, Inductor-generated Triton kernels,
backward passes (launched from autograd's own thread: the capture needs process-scoped NVTX ranges),
FlashAttention backward, optimizers, launches with fewer blocks than SMs, and every Hopper rung of
gemmlab's tensor-core ladder. Which cases are kept out of tuning is decided by ``gemmlab.corpus.files
.held_out`` (a hash of the case name), fixed before any of them was captured.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # no compile worker processes under ncu

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import workload as W  # noqa: E402

DEV, E, rnd = W.DEV, W.E, W.rnd
GROWN: list[tuple[str, Callable[[], Callable[[], object]]]] = []


def case(name: str):
    def deco(fn):
        GROWN.append((name, fn))
        return fn
    return deco


def _grad(out, inputs, seed_grad=None):
    """Thunk running only the backward pass of an already built graph (kept for the next call)."""
    g = torch.randn_like(out) if seed_grad is None else seed_grad
    return lambda: torch.autograd.grad(out, inputs, g, retain_graph=True)


# ------------------------------------------------------------------ elementwise: math, integers, RNG
@case("torch_sin_fp32")
def _():
    a = rnd(E)
    return lambda: torch.sin(a)


@case("torch_pow_fp64")
def _():
    a = rnd(E // 2, dtype=torch.float64).abs()
    return lambda: torch.pow(a, 2.7)


@case("torch_erfinv_fp32")
def _():
    a = torch.rand(E, device=DEV) * 1.98 - 0.99
    return lambda: torch.erfinv(a)


@case("torch_floordiv_int64")
def _():
    a = torch.randint(-(1 << 40), 1 << 40, (E // 2,), device=DEV)
    return lambda: torch.div(a, 7919, rounding_mode="floor")


@case("torch_remainder_int32")
def _():
    a = torch.randint(-(1 << 30), 1 << 30, (E,), device=DEV, dtype=torch.int32)
    b = torch.randint(1, 1000, (E,), device=DEV, dtype=torch.int32)
    return lambda: torch.remainder(a, b)


@case("torch_tanh_bf16_small")
def _():
    a = rnd(1 << 16, dtype=torch.bfloat16)
    return lambda: torch.tanh(a)


@case("torch_rand_fp32")
def _():
    out = torch.empty(E, device=DEV)
    return lambda: out.uniform_()


@case("torch_dropout_bf16")
def _():
    a = rnd(2 * E, dtype=torch.bfloat16)
    return lambda: F.dropout(a, 0.1, training=True)


@case("torch_normal_fp32")
def _():
    out = torch.empty(E, device=DEV)
    return lambda: out.normal_()


# ------------------------------------------------------------------ pooling and upsampling
@case("torch_maxpool2d_fp32")
def _():
    a = rnd(32, 64, 112, 112)
    return lambda: F.max_pool2d(a, 3, 2, 1)


@case("torch_avgpool2d_bf16_nhwc")
def _():
    a = rnd(32, 128, 112, 112, dtype=torch.bfloat16).to(memory_format=torch.channels_last)
    return lambda: F.avg_pool2d(a, 2)


@case("torch_adaptive_avgpool_fp32")
def _():
    a = rnd(256, 2048, 7, 7)
    return lambda: F.adaptive_avg_pool2d(a, 1)


@case("torch_upsample_bilinear_fp32")
def _():
    a = rnd(16, 64, 128, 128)
    return lambda: F.interpolate(a, scale_factor=2, mode="bilinear", align_corners=False)


@case("torch_upsample_nearest_bf16")
def _():
    a = rnd(16, 128, 128, 128, dtype=torch.bfloat16)
    return lambda: F.interpolate(a, scale_factor=2, mode="nearest")


@case("torch_maxpool2d_backward_fp32")
def _():
    a = rnd(32, 64, 112, 112).requires_grad_()
    return _grad(F.max_pool2d(a, 3, 2, 1), (a,))


# ------------------------------------------------------------------ CUB, cuFFT, binary search, cdist
@case("torch_nonzero_fp32")
def _():
    a = rnd(E // 4)
    return lambda: torch.nonzero(a > 1.0)


@case("torch_unique_int64")
def _():
    a = torch.randint(0, 1 << 20, (1 << 24,), device=DEV)
    return lambda: torch.unique(a)


@case("torch_masked_select_fp32")
def _():
    a = rnd(E // 4)
    m = a > 0
    return lambda: torch.masked_select(a, m)


@case("torch_fft_c2c_fp32")
def _():
    a = torch.randn(1 << 24, device=DEV, dtype=torch.complex64)
    return lambda: torch.fft.fft(a)


@case("torch_rfft2_fp32")
def _():
    a = rnd(64, 512, 512)
    return lambda: torch.fft.rfft2(a)


@case("torch_searchsorted_fp32")
def _():
    edges = torch.sort(rnd(1 << 20)).values
    q = rnd(1 << 24)
    return lambda: torch.searchsorted(edges, q)


@case("torch_bucketize_fp32")
def _():
    edges = torch.sort(rnd(255)).values
    q = rnd(E)
    return lambda: torch.bucketize(q, edges)


@case("torch_cdist_fp32")
def _():
    a, b = rnd(8192, 64), rnd(4096, 64)
    return lambda: torch.cdist(a, b)


# ------------------------------------------------------------------ cuBLAS paths a square GEMM never takes
@case("cublas_bf16_tn_4096")
def _():
    a = rnd(4096, 4096, dtype=torch.bfloat16)
    b = rnd(4096, 4096, dtype=torch.bfloat16)
    return lambda: a.t() @ b


@case("cublas_bf16_tall_k")
def _():
    a = rnd(256, 131072, dtype=torch.bfloat16)
    b = rnd(131072, 256, dtype=torch.bfloat16)
    return lambda: a @ b


@case("cublas_bf16_decode_16x28672x8192")
def _():
    x = rnd(16, 8192, dtype=torch.bfloat16)
    w = rnd(28672, 8192, dtype=torch.bfloat16)
    return lambda: F.linear(x, w)


@case("cublas_fp16_unaligned_4095")
def _():
    a, b = rnd(4095, 4095, dtype=torch.float16), rnd(4095, 4095, dtype=torch.float16)
    return lambda: a @ b


@case("cublas_fp16_odd_k_2047")
def _():
    a, b = rnd(2048, 2047, dtype=torch.float16), rnd(2047, 2048, dtype=torch.float16)
    return lambda: a @ b


@case("cublas_fp32_bmm_small_32")
def _():
    a, b = rnd(16384, 32, 32), rnd(16384, 32, 32)
    return lambda: torch.bmm(a, b)


# ------------------------------------------------------------------ Inductor-generated Triton
def _compiled(fn, *args):
    import torch._dynamo

    torch._dynamo.reset()
    cf = torch.compile(fn, dynamic=False)
    cf(*args)  # compile outside the profiled range
    return lambda: cf(*args)


@case("inductor_pointwise_bf16")
def _():
    x, y = rnd(2 * E, dtype=torch.bfloat16), rnd(2 * E, dtype=torch.bfloat16)
    return _compiled(lambda x, y: x * torch.sigmoid(x) * y + 1.0, x, y)


@case("inductor_rmsnorm_fp32")
def _():
    x, w = rnd(16384, 4096), rnd(4096)
    return _compiled(lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, x, w)


@case("inductor_softmax_fp32")
def _():
    x = rnd(16384, 4096)
    return _compiled(lambda x: torch.softmax(x * 0.125, dim=-1), x)


@case("inductor_sum_cols_fp32")
def _():
    x = rnd(16384, 4096)
    return _compiled(lambda x: (x * x).sum(0), x)


# ------------------------------------------------------------------ backward passes (autograd's thread)
@case("torch_linear_backward_bf16")
def _():
    x = rnd(8192, 4096, dtype=torch.bfloat16).requires_grad_()
    w = rnd(4096, 4096, dtype=torch.bfloat16).requires_grad_()
    return _grad(F.linear(x, w), (x, w))


@case("torch_layer_norm_backward_bf16")
def _():
    x = rnd(16384, 4096, dtype=torch.bfloat16).requires_grad_()
    w = torch.ones(4096, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    b = torch.zeros(4096, device=DEV, dtype=torch.bfloat16, requires_grad=True)
    return _grad(F.layer_norm(x, (4096,), w, b), (x, w, b))


@case("torch_softmax_backward_fp32")
def _():
    x = rnd(16384, 4096).requires_grad_()
    return _grad(torch.softmax(x, -1), (x,))


@case("torch_gelu_backward_bf16")
def _():
    x = rnd(2 * E, dtype=torch.bfloat16).requires_grad_()
    return _grad(F.gelu(x), (x,))


@case("torch_embedding_backward_fp32")
def _():
    w = rnd(32000, 1024).requires_grad_()
    ids = torch.randint(0, 32000, (16384,), device=DEV)
    return _grad(F.embedding(ids, w), (w,))


@case("torch_cross_entropy_backward_fp32")
def _():
    logits = rnd(4096, 32000).requires_grad_()
    target = torch.randint(0, 32000, (4096,), device=DEV)
    loss = F.cross_entropy(logits, target)
    return _grad(loss, (logits,), torch.ones((), device=DEV))


@case("flash_sdpa_backward_bf16")
def _():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (rnd(8, 16, 4096, 128, dtype=torch.bfloat16).requires_grad_() for _ in range(3))
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return _grad(out, (q, k, v))


# ------------------------------------------------------------------ optimizers
def _params(n, size, dtype=torch.float32):
    ps = [torch.nn.Parameter(rnd(size, dtype=dtype)) for _ in range(n)]
    for p in ps:
        p.grad = rnd(size, dtype=dtype)
    return ps


@case("torch_sgd_momentum_foreach_fp32")
def _():
    ps = _params(64, 1 << 20)
    opt = torch.optim.SGD(ps, lr=1e-3, momentum=0.9, foreach=True)
    return opt.step


@case("torch_clip_grad_norm_fp32")
def _():
    ps = _params(64, 1 << 20)
    return lambda: torch.nn.utils.clip_grad_norm_(ps, 1.0, foreach=True)


@case("torch_adamw_fused_bf16")
def _():
    ps = _params(16, 1 << 22, torch.bfloat16)
    opt = torch.optim.AdamW(ps, lr=1e-3, fused=True)
    return opt.step


# ------------------------------------------------------------------ fewer blocks than SMs
@case("planted_half_grid_long")
def _():
    cupy, k = W._planted("planted_half_grid")
    blocks = W._sms() // 2
    y = cupy.empty(blocks * 256, dtype=cupy.float32)
    return lambda: k((blocks,), (256,), (y, cupy.int32(200000)))


@case("planted_init_125_blocks")
def _():
    cupy, k = W._planted("planted_init")
    y = cupy.empty(E, dtype=cupy.float32)
    return lambda: k((125,), (256,), (y, cupy.int64(E // 4), cupy.float32(1.5)))


@case("torch_layer_norm_few_rows_fp32")
def _():
    x = rnd(64, 1 << 18)
    return lambda: F.layer_norm(x, (1 << 18,))


@case("planted_dependent_chain")
def _():
    cupy, k = W._planted("planted_dependent_chain")
    blocks = W._sms() * 4
    y = cupy.empty(blocks * 32, dtype=cupy.float32)
    return lambda: k((blocks,), (32,), (y, cupy.int32(20000)))


@case("planted_strided_stores")
def _():
    cupy, k = W._planted("planted_strided_store")
    n = 8 * 1024 * 1024
    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    y = cupy.empty(n * 8, dtype=cupy.float32)
    return lambda: k((n // 256,), (256,), (x, y, cupy.int64(n), cupy.int32(8)))


# ------------------------------------------------------------------ gemmlab's Hopper rungs (4096³)
HOPPER = ("wmma_bf16", "mma_sync_bf16", "cp_async_bf16", "wgmma_bf16", "tma_bf16", "ws_bf16",
          "persistent_bf16", "persistent_fp8")


def _tc_rung(rung: str):
    def setup():
        import cupy
        from gemmlab.runtime.launch import prepare

        n = 4096
        rng = cupy.random.default_rng()
        if rung.endswith("fp8"):  # e4m3 bits, B given N x K; exponents kept below the NaN code
            bits = lambda: (rng.integers(0, 0x68, (n, n), dtype=cupy.uint8)  # noqa: E731
                            | (rng.integers(0, 2, (n, n), dtype=cupy.uint8) << 7))
            a, b = bits(), bits()
        else:
            bf16 = lambda: (rng.standard_normal((n, n), dtype=cupy.float32).view(cupy.uint32)  # noqa: E731
                            >> 16).astype(cupy.uint16)
            a, b = bf16(), bf16()
        c = cupy.zeros((n, n), dtype=cupy.uint16)
        launch = prepare(rung, n, n, n)
        return lambda: launch(a, b, c)
    return setup


for _r in HOPPER:
    case(f"gemmlab_{_r}_4096")(_tc_rung(_r))


if __name__ == "__main__":
    sys.exit(W.main(cases=GROWN))
