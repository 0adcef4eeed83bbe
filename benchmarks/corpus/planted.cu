// Planted-bottleneck kernels for the diagnosis corpus (benchmarks/corpus/workload.py).
// Each kernel has one problem on purpose, so its truth follows from how it was built and is then
// confirmed from the capture's own numbers (docs/results/diagnosis-accuracy.md). Several are the
// fourth seed article's examples (strided access, column access of float[32][32], one atomic per match).

extern "C" {

// One lane in eight runs the long loop: ~4 of 32 threads active per executed instruction.
__global__ void planted_divergence(const float* __restrict__ x, float* __restrict__ y, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if ((threadIdx.x & 7) == 0) {
        float a = v, b = v + 1.f, c = v + 2.f, d = v + 3.f;
        for (int k = 0; k < iters; ++k) {
            a = fmaf(a, 1.0001f, 0.5f); b = fmaf(b, 0.9999f, 0.25f);
            c = fmaf(c, 1.0002f, 0.125f); d = fmaf(d, 0.9998f, 0.0625f);
        }
        v = a + b + c + d;
    }
    y[i] = v;
}

// Eight independent FMA chains per thread: the FMA pipe, nothing else.
__global__ void planted_fma(float* __restrict__ y, int iters) {
    float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
    for (int k = 0; k < iters; ++k) {
        a0 = fmaf(a0, 1.0000001f, 0.3f); a1 = fmaf(a1, 1.0000001f, 0.3f);
        a2 = fmaf(a2, 1.0000001f, 0.3f); a3 = fmaf(a3, 1.0000001f, 0.3f);
        a4 = fmaf(a4, 1.0000001f, 0.3f); a5 = fmaf(a5, 1.0000001f, 0.3f);
        a6 = fmaf(a6, 1.0000001f, 0.3f); a7 = fmaf(a7, 1.0000001f, 0.3f);
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

// The same in double precision: the FP64 pipe.
__global__ void planted_dfma(double* __restrict__ y, int iters) {
    double a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
    for (int k = 0; k < iters; ++k) {
        a0 = fma(a0, 1.0000001, 0.3); a1 = fma(a1, 1.0000001, 0.3);
        a2 = fma(a2, 1.0000001, 0.3); a3 = fma(a3, 1.0000001, 0.3);
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3;
}

// Special functions: the XU (MUFU) pipe.
__global__ void planted_sfu(float* __restrict__ y, int iters) {
    float a0 = threadIdx.x * 1e-3f, a1 = a0 + 0.1f, a2 = a0 + 0.2f, a3 = a0 + 0.3f;
    for (int k = 0; k < iters; ++k) {
        a0 = __sinf(a0); a1 = __expf(-a1); a2 = __cosf(a2); a3 = __frsqrt_rn(a3 + 1.f);
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3;
}

// Compute-heavy blocks, one per SM (the caller asks for enough dynamic shared memory), and a grid of
// 1.25 waves: the last quarter-wave keeps three SMs in four idle.
__global__ void planted_tail(float* __restrict__ y, int iters) {
    extern __shared__ float pad[];
    float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
    for (int k = 0; k < iters; ++k) {
        a0 = fmaf(a0, 1.0000001f, 0.3f); a1 = fmaf(a1, 1.0000001f, 0.3f);
        a2 = fmaf(a2, 1.0000001f, 0.3f); a3 = fmaf(a3, 1.0000001f, 0.3f);
        a4 = fmaf(a4, 1.0000001f, 0.3f); a5 = fmaf(a5, 1.0000001f, 0.3f);
        a6 = fmaf(a6, 1.0000001f, 0.3f); a7 = fmaf(a7, 1.0000001f, 0.3f);
    }
    float v = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    if (threadIdx.x == 0) pad[0] = v;
    y[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// A grid-stride copy launched with a handful of blocks: most SMs have nothing to do.
__global__ void planted_small_grid(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        v.x *= 2.f; v.y *= 2.f; v.z *= 2.f; v.w *= 2.f;
        y[i] = v;
    }
}

// A per-thread array indexed at run time lives in local memory.
__global__ void planted_local(const int* __restrict__ idx, float* __restrict__ y, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a[64];
    int t = idx[i];
    for (int k = 0; k < 64; ++k) a[k] = (float)(k * t);
    float s = 0.f;
    for (int k = 0; k < iters; ++k) {
        int j = (t + k * 7) & 63;
        s += a[j];
        a[(j + 13) & 63] = s;
    }
    y[i] = s;
}

// Column access of a float[32][32] tile: all 32 lanes of a warp hit one bank (the article's example).
__global__ void planted_bank_conflicts(float* __restrict__ out, int iters) {
    __shared__ float tile[32][32];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    tile[ty][tx] = (float)(tx + ty);
    __syncthreads();
    float s = 0.f;
    for (int k = 0; k < iters; ++k) s += tile[tx][(ty + k) & 31];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The article's fix: pad each row by one word, so a column walks all 32 banks.
__global__ void planted_bank_padded(float* __restrict__ out, int iters) {
    __shared__ float tile[32][33];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    tile[ty][tx] = (float)(tx + ty);
    __syncthreads();
    float s = 0.f;
    for (int k = 0; k < iters; ++k) s += tile[tx][(ty + k) & 31];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// The article's count of elements equal to K: one global atomicAdd on one counter per match.
__global__ void planted_atomic_hotspot(const int* __restrict__ x, int k, int* __restrict__ count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] == k) atomicAdd(count, 1);
}

// The article's fix: grid-stride count in registers, a shared-memory reduction, one atomic per block.
__global__ void planted_atomic_block(const int* __restrict__ x, int k, int* __restrict__ count, int n) {
    __shared__ int partial[256];
    int c = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) c += (x[i] == k);
    partial[threadIdx.x] = c;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(count, partial[0]);
}

// The article's strided access, A[idx * stride]: each thread of a warp reads its own 32-byte sector.
__global__ void planted_strided(const float* __restrict__ x, float* __restrict__ y, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[(long)i * stride % ((long)n * stride)] * 2.f;
}

// Naive transpose: coalesced reads, each lane's store lands in its own row (its own sector).
__global__ void planted_transpose_naive(const float* __restrict__ x, float* __restrict__ y, int n) {
    int c = blockIdx.x * 32 + (threadIdx.x & 31);
    int r = blockIdx.y * 8 + (threadIdx.x >> 5);
    if (r < n && c < n) y[(long)c * n + r] = x[(long)r * n + c];
}

// Streaming reads with a hundred-odd KiB of shared memory per block: two blocks of 128 threads per SM,
// 8 warps, too few loads in flight to cover DRAM latency.
__global__ void planted_occupancy_smem(const float4* __restrict__ x, float* __restrict__ y, long n4) {
    extern __shared__ float pad[];
    float s = 0.f;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        s += v.x + v.y + v.z + v.w;
    }
    if (threadIdx.x == 0) pad[0] = s;
    y[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// Warp 0 works while the other warps of the block wait at the barrier, every iteration.
__global__ void planted_barrier(float* __restrict__ y, int iters, int work) {
    __shared__ float s[1024];
    float v = threadIdx.x;
    for (int k = 0; k < iters; ++k) {
        if (threadIdx.x < 32) {
            for (int j = 0; j < work; ++j) v = fmaf(v, 1.0000001f, 0.3f);
        }
        s[threadIdx.x] = v;
        __syncthreads();
        v += s[(threadIdx.x + 1) & 1023];
        __syncthreads();
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

}  // extern "C"

// Registers: 128 floats live across a streaming loop (compile-time indexing keeps them in registers);
// the launch bounds allow 255 registers, so few 256-thread blocks fit an SM and few loads are in flight.
extern "C" __global__ void __launch_bounds__(256, 1)
planted_occupancy_regs(const float* __restrict__ x, float* __restrict__ y, long n) {
    float r[128];
#pragma unroll
    for (int j = 0; j < 128; ++j) r[j] = x[(blockIdx.x * (long)blockDim.x + threadIdx.x + j * 4096L) % n];
    float s = 0.f;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        s += x[i];
    }
    // r[] is live across the loop: the compiler keeps all 128 values in registers
#pragma unroll
    for (int j = 0; j < 128; ++j) s = fmaf(r[j], s, r[(j + 1) & 127]);
    y[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// ---- grown corpus (2026-11-25) -------------------------------------------------------------------
extern "C" {

// A long FMA chain per thread in a grid of half the SMs: half the GPU sits idle for the whole run.
__global__ void planted_half_grid(float* __restrict__ y, int iters) {
    float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
    for (int k = 0; k < iters; ++k) {
        a0 = fmaf(a0, 1.0000001f, 0.3f); a1 = fmaf(a1, 1.0000001f, 0.3f);
        a2 = fmaf(a2, 1.0000001f, 0.3f); a3 = fmaf(a3, 1.0000001f, 0.3f);
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3;
}

// An init (fill) kernel, grid-stride, launched with a fixed 125 blocks on a 132-SM GPU.
__global__ void planted_init(float4* __restrict__ y, long n4, float v) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x)
        y[i] = make_float4(v, v, v, v);
}

// Coalesced loads, stores with a stride of 8 floats (32 B): each store request touches 32 sectors
// for 4 useful bytes per lane, 87.5% of the written sector bytes are not the kernel's.
__global__ void planted_strided_store(const float* __restrict__ x, float* __restrict__ y, long n, int stride) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i * stride] = x[i] * 2.f;
}

// A dependent chain of warp shuffles and shared-memory round trips: one warp per block, nothing to
// hide the latency with (4 warps per SM).
__global__ void planted_dependent_chain(float* __restrict__ y, int iters) {
    __shared__ float s[32];
    float v = threadIdx.x;
    for (int k = 0; k < iters; ++k) {
        s[threadIdx.x] = v;
        __syncwarp();
        v = s[(threadIdx.x + 1) & 31] * 1.0001f + 0.5f;
        __syncwarp();
    }
    y[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

}
