"""The program the diagnosis corpus is captured from: everyday GPU kernels, each launched once inside
``cudaProfilerStart``/``Stop`` and an NVTX push/pop range named after its case.

    ncu --profile-from-start off --nvtx ... python3 benchmarks/corpus/workload.py [--only RE] [--list]

Run by ``benchmarks/corpus/capture.sh`` (which also exports the pages and maps each profiled kernel to
its case through the NVTX range, ``index.py``). Every case is set up and run twice outside the profiled
region first (cuBLAS/cuDNN heuristics, Triton and NVRTC compiles, first-touch), so the profiled launch is
a warm one. Inputs are fresh random data, never zeros. A case that cannot run on this GPU/software
(an FP8 or cuDNN path missing) prints one line on stderr and is skipped; the others go on.

Sizes are chosen so that memory-bound kernels move several times the L2 (50 MB on the H100) and
compute-bound ones fill the chip; a few are deliberately tiny (launch-bound) or skinny.
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
from pathlib import Path
from typing import Callable

import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
DEV = "cuda"
CASES: list[tuple[str, Callable[[], Callable[[], object]]]] = []


def case(name: str):
    """Register a case: the function sets up inputs and returns the thunk that launches the kernel(s)."""
    def deco(fn):
        CASES.append((name, fn))
        return fn
    return deco


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)


E = 64 * 1024 * 1024  # 64 Mi elements: 256 MB in FP32, 5x the H100's L2
ROWS, COLS = 16384, 4096


# ------------------------------------------------------------------ PyTorch eager: elementwise
@case("torch_add_fp32")
def _():
    a, b = rnd(E), rnd(E)
    return lambda: a + b


@case("torch_mul_scalar_bf16")
def _():
    a = rnd(2 * E, dtype=torch.bfloat16)
    return lambda: a * 3.0


@case("torch_exp_fp32")
def _():
    a = rnd(E)
    return lambda: torch.exp(a)


@case("torch_gelu_bf16")
def _():
    a = rnd(2 * E, dtype=torch.bfloat16)
    return lambda: F.gelu(a)


@case("torch_silu_fp16")
def _():
    a = rnd(2 * E, dtype=torch.float16)
    return lambda: F.silu(a)


@case("torch_relu_inplace_fp32")
def _():
    a = rnd(E)
    return lambda: a.relu_()


@case("torch_where_fp32")
def _():
    a, b = rnd(E), rnd(E)
    m = a > 0
    return lambda: torch.where(m, a, b)


@case("torch_tiny_add")
def _():
    a, b = rnd(1024), rnd(1024)
    return lambda: a + b


@case("torch_cast_fp32_to_bf16")
def _():
    a = rnd(E)
    return lambda: a.to(torch.bfloat16)


# ------------------------------------------------------------------ copies, transposes, layout
@case("torch_clone_fp32")
def _():
    a = rnd(E)
    return lambda: a.clone()


@case("torch_transpose_contiguous_fp32")
def _():
    a = rnd(8192, 8192)
    return lambda: a.t().contiguous()


@case("torch_cat_fp32")
def _():
    a, b = rnd(ROWS, COLS), rnd(ROWS, COLS)
    return lambda: torch.cat([a, b], dim=1)


@case("torch_permute_nchw_to_nhwc_bf16")
def _():
    a = rnd(64, 256, 56, 56, dtype=torch.bfloat16)
    return lambda: a.contiguous(memory_format=torch.channels_last)


# ------------------------------------------------------------------ reductions, norms, softmax
@case("torch_sum_rows_fp32")
def _():
    a = rnd(ROWS, COLS)
    return lambda: a.sum(dim=1)


@case("torch_sum_cols_fp32")
def _():
    a = rnd(ROWS, COLS)
    return lambda: a.sum(dim=0)


@case("torch_sum_all_fp32")
def _():
    a = rnd(E)
    return lambda: a.sum()


@case("torch_argmax_rows_fp32")
def _():
    a = rnd(ROWS, COLS)
    return lambda: a.argmax(dim=1)


@case("torch_softmax_fp32")
def _():
    a = rnd(ROWS, COLS)
    return lambda: torch.softmax(a, dim=-1)


@case("torch_log_softmax_bf16")
def _():
    a = rnd(ROWS, COLS, dtype=torch.bfloat16)
    return lambda: torch.log_softmax(a, dim=-1)


@case("torch_layer_norm_bf16")
def _():
    a = rnd(ROWS, COLS, dtype=torch.bfloat16)
    w, b = rnd(COLS, dtype=torch.bfloat16), rnd(COLS, dtype=torch.bfloat16)
    return lambda: F.layer_norm(a, (COLS,), w, b)


@case("torch_rms_norm_fp32")
def _():
    a = rnd(ROWS, COLS)
    w = rnd(COLS)
    return lambda: F.rms_norm(a, (COLS,), w)


@case("torch_batch_norm_fp32")
def _():
    a = rnd(64, 256, 56, 56)
    rm, rv = torch.zeros(256, device=DEV), torch.ones(256, device=DEV)
    return lambda: F.batch_norm(a, rm, rv, training=False)


@case("torch_cumsum_fp32")
def _():
    a = rnd(E)
    return lambda: torch.cumsum(a, 0)


@case("torch_sort_fp32")
def _():
    a = rnd(16 * 1024 * 1024)
    return lambda: torch.sort(a)


@case("torch_topk_fp32")
def _():
    a = rnd(4096, 32768)
    return lambda: torch.topk(a, 64, dim=1)


# ------------------------------------------------------------------ gather / scatter / index / embedding
@case("torch_index_select_rows_fp32")
def _():
    a = rnd(65536, 1024)
    idx = torch.randint(0, 65536, (65536,), device=DEV)
    return lambda: a.index_select(0, idx)


@case("torch_gather_random_fp32")
def _():
    a = rnd(ROWS, COLS)
    idx = torch.randint(0, COLS, (ROWS, COLS), device=DEV)
    return lambda: torch.gather(a, 1, idx)


@case("torch_embedding_bf16")
def _():
    w = rnd(50257, 1024, dtype=torch.bfloat16)
    ids = torch.randint(0, 50257, (32768,), device=DEV)
    return lambda: F.embedding(ids, w)


@case("torch_index_add_hotspot_fp32")
def _():
    src = rnd(1 << 20, 64)
    idx = torch.randint(0, 4, (1 << 20,), device=DEV)  # four target rows: every add collides
    dst = torch.zeros(4, 64, device=DEV)
    return lambda: dst.index_add_(0, idx, src)


@case("torch_scatter_add_spread_fp32")
def _():
    src = rnd(E)
    idx = torch.randint(0, E, (E,), device=DEV)  # targets spread over 256 MB: few collisions
    dst = torch.zeros(E, device=DEV)
    return lambda: dst.scatter_add_(0, idx, src)


@case("torch_bincount_hotspot")
def _():
    x = torch.randint(0, 8, (E,), device=DEV)
    return lambda: torch.bincount(x, minlength=8)


# ------------------------------------------------------------------ optimizer step
@case("torch_adam_fused_fp32")
def _():
    ps = [torch.nn.Parameter(rnd(4096, 4096)) for _ in range(4)]
    for p in ps:
        p.grad = rnd(4096, 4096)
    opt = torch.optim.Adam(ps, lr=1e-3, fused=True)
    return lambda: opt.step()


@case("torch_adamw_foreach_fp32")
def _():
    ps = [torch.nn.Parameter(rnd(1024, 1024)) for _ in range(16)]
    for p in ps:
        p.grad = rnd(1024, 1024)
    opt = torch.optim.AdamW(ps, lr=1e-3, foreach=True)
    return lambda: opt.step()


# ------------------------------------------------------------------ cuBLAS / cuBLASLt GEMMs
def _mm(m, n, k, dtype):
    a, b = rnd(m, k, dtype=dtype), rnd(k, n, dtype=dtype)
    return lambda: a @ b


@case("cublas_sgemm_fp32_4096")
def _():
    torch.backends.cuda.matmul.allow_tf32 = False
    return _mm(4096, 4096, 4096, torch.float32)


@case("cublas_tf32_4096")
def _():
    a, b = rnd(4096, 4096), rnd(4096, 4096)

    def run():
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return a @ b
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
    return run


@case("cublas_bf16_4096")
def _():
    return _mm(4096, 4096, 4096, torch.bfloat16)


@case("cublas_bf16_8192")
def _():
    return _mm(8192, 8192, 8192, torch.bfloat16)


@case("cublas_fp16_4096")
def _():
    return _mm(4096, 4096, 4096, torch.float16)


@case("cublaslt_fp8_e4m3_4096")
def _():
    a = rnd(4096, 4096).to(torch.float8_e4m3fn)
    b = rnd(4096, 4096).to(torch.float8_e4m3fn).t()  # column-major B, as _scaled_mm requires
    one = torch.tensor(1.0, device=DEV)
    return lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)


@case("cublaslt_int8_4096")
def _():
    a = torch.randint(-64, 64, (4096, 4096), device=DEV, dtype=torch.int8)
    b = torch.randint(-64, 64, (4096, 4096), device=DEV, dtype=torch.int8)
    return lambda: torch._int_mm(a, b)


@case("cublas_dgemm_fp64_2048")
def _():
    return _mm(2048, 2048, 2048, torch.float64)


@case("cublas_bf16_skinny_m8")
def _():
    x, w = rnd(8, 8192, dtype=torch.bfloat16), rnd(8192, 8192, dtype=torch.bfloat16)
    return lambda: x @ w


@case("cublas_bf16_gemv_m1")
def _():
    x, w = rnd(1, 8192, dtype=torch.bfloat16), rnd(8192, 8192, dtype=torch.bfloat16)
    return lambda: x @ w


@case("cublas_fp32_gemv_m1")
def _():
    torch.backends.cuda.matmul.allow_tf32 = False
    x, w = rnd(1, 8192), rnd(8192, 8192)
    return lambda: x @ w


@case("cublas_bf16_tiny_64")
def _():
    return _mm(64, 64, 64, torch.bfloat16)


@case("cublas_bf16_awkward_1000x3000x77")
def _():
    return _mm(1000, 3000, 77, torch.bfloat16)


@case("cublas_bf16_small_mn_large_k")
def _():
    return _mm(256, 256, 65536, torch.bfloat16)


@case("cublas_bf16_bmm_attention_like")
def _():
    a, b = rnd(256, 512, 64, dtype=torch.bfloat16), rnd(256, 64, 512, dtype=torch.bfloat16)
    return lambda: torch.bmm(a, b)


@case("cublas_fp32_small_k16")
def _():
    torch.backends.cuda.matmul.allow_tf32 = False
    return _mm(8192, 8192, 16, torch.float32)


# ------------------------------------------------------------------ cuDNN: convolution, attention
@case("cudnn_conv3x3_bf16_nhwc")
def _():
    torch.backends.cudnn.benchmark = True
    x = rnd(64, 256, 56, 56, dtype=torch.bfloat16).contiguous(memory_format=torch.channels_last)
    w = rnd(256, 256, 3, 3, dtype=torch.bfloat16).contiguous(memory_format=torch.channels_last)
    return lambda: F.conv2d(x, w, padding=1)


@case("cudnn_conv1x1_fp32_nchw")
def _():
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    x = rnd(64, 256, 56, 56)
    w = rnd(64, 256, 1, 1)
    return lambda: F.conv2d(x, w)


@case("cudnn_depthwise_conv_fp32")
def _():
    torch.backends.cudnn.benchmark = True
    x = rnd(64, 256, 56, 56)
    w = rnd(256, 1, 3, 3)
    return lambda: F.conv2d(x, w, padding=1, groups=256)


def _sdpa(backend):
    from torch.nn.attention import sdpa_kernel

    q, k, v = (rnd(8, 16, 4096, 128, dtype=torch.bfloat16) for _ in range(3))

    def run():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=False)
    return run


@case("cudnn_sdpa_bf16")
def _():
    from torch.nn.attention import SDPBackend
    return _sdpa(SDPBackend.CUDNN_ATTENTION)


@case("flash_sdpa_bf16")
def _():
    from torch.nn.attention import SDPBackend
    return _sdpa(SDPBackend.FLASH_ATTENTION)


@case("efficient_sdpa_fp32")
def _():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q, k, v = (rnd(4, 16, 2048, 64) for _ in range(3))

    def run():
        with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v)
    return run


# ------------------------------------------------------------------ Triton
def _triton():
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    @triton.jit
    def softmax_kernel(x, out, cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        m = offs < cols
        v = tl.load(x + row * cols + offs, mask=m, other=-float("inf"))
        v = v - tl.max(v, 0)
        e = tl.exp(v)
        tl.store(out + row * cols + offs, e / tl.sum(e, 0), mask=m)

    @triton.jit
    def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k0 + rk)[None, :])
            y = tl.load(b + (k0 + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))

    return triton, add_kernel, softmax_kernel, matmul_kernel


@case("triton_add_fp32")
def _():
    triton, add_kernel, _, _ = _triton()
    x, y = rnd(E), rnd(E)
    out = torch.empty_like(x)
    return lambda: add_kernel[(triton.cdiv(E, 1024),)](x, y, out, E, BLOCK=1024)


@case("triton_softmax_fp32")
def _():
    triton, _, softmax_kernel, _ = _triton()
    x = rnd(ROWS, COLS)
    out = torch.empty_like(x)
    return lambda: softmax_kernel[(ROWS,)](x, out, COLS, BLOCK=COLS, num_warps=16)


@case("triton_matmul_fp16_4096")
def _():
    triton, _, _, matmul_kernel = _triton()
    n = 4096
    a, b = rnd(n, n, dtype=torch.float16), rnd(n, n, dtype=torch.float16)
    c = torch.empty(n, n, device=DEV, dtype=torch.float16)
    return lambda: matmul_kernel[(n // 128, n // 128)](a, b, c, n, n, n, BM=128, BN=128, BK=64,
                                                        num_warps=8, num_stages=3)


# ------------------------------------------------------------------ gemmlab's FP32 ladder (2048³)
LADDER = ("naive_uncoalesced", "coalesced", "smem_tiled", "smem_tiled_unroll", "blocktile_1d", "blocktile_2d",
          "vectorized", "bank_conflict_free", "warptiling", "double_buffered")


def _ladder(rung: str):
    def setup():
        import cupy
        from gemmlab.runtime.launch import prepare

        n = 2048
        rng = cupy.random.default_rng()
        a = rng.standard_normal((n, n), dtype=cupy.float32)
        b = rng.standard_normal((n, n), dtype=cupy.float32)
        c = cupy.full((n, n), cupy.nan, dtype=cupy.float32)
        launch = prepare(rung, n, n, n)
        return lambda: launch(a, b, c)
    return setup


for _r in LADDER:
    case(f"gemmlab_{_r}_2048")(_ladder(_r))


# ------------------------------------------------------------------ planted bottlenecks (CuPy)
def _planted(name):
    import cupy

    return cupy, cupy.RawKernel((HERE / "planted.cu").read_text(), name, options=("-std=c++17",))


def _sms() -> int:
    return torch.cuda.get_device_properties(0).multi_processor_count


@case("planted_divergence")
def _():
    cupy, k = _planted("planted_divergence")
    n = 16 * 1024 * 1024
    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    y = cupy.empty_like(x)
    return lambda: k((n // 256,), (256,), (x, y, cupy.int32(n), cupy.int32(512)))


@case("planted_fma_bound")
def _():
    cupy, k = _planted("planted_fma")
    blocks = _sms() * 8
    y = cupy.empty(blocks * 256, dtype=cupy.float32)
    return lambda: k((blocks,), (256,), (y, cupy.int32(4096)))


@case("planted_fp64_bound")
def _():
    cupy, k = _planted("planted_dfma")
    blocks = _sms() * 8
    y = cupy.empty(blocks * 256, dtype=cupy.float64)
    return lambda: k((blocks,), (256,), (y, cupy.int32(2048)))


@case("planted_sfu_bound")
def _():
    cupy, k = _planted("planted_sfu")
    blocks = _sms() * 8
    y = cupy.empty(blocks * 256, dtype=cupy.float32)
    return lambda: k((blocks,), (256,), (y, cupy.int32(2048)))


@case("planted_tail_effect")
def _():
    cupy, k = _planted("planted_tail")
    smem = 150 * 1024  # one block per SM
    k.max_dynamic_shared_size_bytes = smem
    blocks = _sms() + _sms() // 4  # 1.25 waves
    y = cupy.empty(blocks * 1024, dtype=cupy.float32)
    return lambda: k((blocks,), (1024,), (y, cupy.int32(8192)), shared_mem=smem)


@case("planted_small_grid")
def _():
    cupy, k = _planted("planted_small_grid")
    n4 = E // 4
    x = cupy.random.standard_normal(E, dtype=cupy.float32)
    y = cupy.empty_like(x)
    return lambda: k((8,), (256,), (x, y, cupy.int64(n4)))


@case("planted_local_memory")
def _():
    cupy, k = _planted("planted_local")
    n = 8 * 1024 * 1024
    idx = cupy.random.randint(0, 1 << 20, n, dtype=cupy.int32)
    y = cupy.empty(n, dtype=cupy.float32)
    return lambda: k((n // 256,), (256,), (idx, y, cupy.int32(n), cupy.int32(256)))


@case("planted_bank_conflicts")
def _():
    cupy, k = _planted("planted_bank_conflicts")
    blocks = _sms() * 16
    y = cupy.empty(blocks * 1024, dtype=cupy.float32)
    return lambda: k((blocks,), (1024,), (y, cupy.int32(1024)))


@case("planted_bank_padded")
def _():
    cupy, k = _planted("planted_bank_padded")
    blocks = _sms() * 16
    y = cupy.empty(blocks * 1024, dtype=cupy.float32)
    return lambda: k((blocks,), (1024,), (y, cupy.int32(1024)))


def _count_input(cupy, n, match_fraction):
    # values 0..R-1 uniformly; K = 0 matches a fraction 1/R of them (the article's sweep knob)
    r = max(1, int(round(1 / match_fraction)))
    return cupy.random.randint(0, r, n, dtype=cupy.int32)


@case("planted_atomic_hotspot")
def _():
    cupy, k = _planted("planted_atomic_hotspot")
    n = E
    x = _count_input(cupy, n, 0.5)
    cnt = cupy.zeros(1, dtype=cupy.int32)
    return lambda: k((n // 256,), (256,), (x, cupy.int32(0), cnt, cupy.int32(n)))


@case("planted_atomic_block_reduce")
def _():
    cupy, k = _planted("planted_atomic_block")
    n = E
    x = _count_input(cupy, n, 0.5)
    cnt = cupy.zeros(1, dtype=cupy.int32)
    return lambda: k((_sms() * 8,), (256,), (x, cupy.int32(0), cnt, cupy.int32(n)))


@case("planted_strided_loads")
def _():
    cupy, k = _planted("planted_strided")
    n = 8 * 1024 * 1024
    x = cupy.random.standard_normal(n * 32, dtype=cupy.float32)  # stride 32 floats = 128 B
    y = cupy.empty(n, dtype=cupy.float32)
    return lambda: k((n // 256,), (256,), (x, y, cupy.int32(n), cupy.int32(32)))


@case("planted_transpose_naive")
def _():
    cupy, k = _planted("planted_transpose_naive")
    n = 8192
    x = cupy.random.standard_normal((n, n), dtype=cupy.float32)
    y = cupy.empty_like(x)
    return lambda: k((n // 32, n // 8), (256,), (x, y, cupy.int32(n)))


@case("planted_occupancy_smem")
def _():
    cupy, k = _planted("planted_occupancy_smem")
    smem = 100 * 1024  # two blocks per SM
    k.max_dynamic_shared_size_bytes = smem
    x = cupy.random.standard_normal(E, dtype=cupy.float32)
    y = cupy.empty(_sms() * 2 * 128, dtype=cupy.float32)
    return lambda: k((_sms() * 2,), (128,), (x, y, cupy.int64(E // 4)), shared_mem=smem)


@case("planted_occupancy_regs")
def _():
    cupy, k = _planted("planted_occupancy_regs")
    x = cupy.random.standard_normal(E, dtype=cupy.float32)
    blocks = _sms()
    y = cupy.empty(blocks * 256, dtype=cupy.float32)
    return lambda: k((blocks,), (256,), (x, y, cupy.int64(E)))


@case("planted_barrier_stalls")
def _():
    cupy, k = _planted("planted_barrier")
    blocks = _sms() * 2
    y = cupy.empty(blocks * 1024, dtype=cupy.float32)
    return lambda: k((blocks,), (1024,), (y, cupy.int32(256), cupy.int32(64)))


# ------------------------------------------------------------------ driver
def _profiler(on: bool) -> None:
    rt = torch.cuda.cudart()
    (rt.cudaProfilerStart if on else rt.cudaProfilerStop)()


def main(argv=None, cases=None) -> int:
    """Run ``cases`` (default: this module's) one warm launch each; workload_grown.py passes its own."""
    cases = CASES if cases is None else cases
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=None, help="regular expression: run only the cases it matches")
    p.add_argument("--list", action="store_true", help="print the case names and exit")
    args = p.parse_args(argv)
    chosen = [(n, f) for n, f in cases if args.only is None or re.search(args.only, n)]
    if args.list:
        print("\n".join(n for n, _ in chosen))
        return 0
    torch.manual_seed(0)
    ran = failed = 0
    for name, setup in chosen:
        try:
            thunk = setup()
            for _ in range(2):
                thunk()
            torch.cuda.synchronize()
            _profiler(True)
            torch.cuda.nvtx.range_push(name)
            # a start/end range too: push/pop ranges belong to one thread, and a backward pass launches
            # from autograd's own thread (ncu records the launching thread's push/pop stack)
            rid = torch.cuda.nvtx.range_start(name)
            try:
                thunk()
                torch.cuda.synchronize()
            finally:
                torch.cuda.nvtx.range_end(rid)
                torch.cuda.nvtx.range_pop()
                _profiler(False)
            ran += 1
            print(f"case {name}: ran", flush=True)
        except Exception as e:  # one case that cannot run here must not lose the others
            failed += 1
            print(f"case {name}: SKIPPED ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})",
                  file=sys.stderr, flush=True)
            if "-v" in sys.argv:
                traceback.print_exc()
        finally:
            torch.cuda.empty_cache()
    print(f"{ran} cases ran, {failed} skipped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
