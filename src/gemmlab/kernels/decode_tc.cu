// Decode products on the tensor dtypes (dispatch_bf16 / dispatch_fp8, issue #20): a few tokens
// (M <= 16) through a weight matrix B, C = alpha * A @ B + beta * C, bf16 C, FP32 accumulation.
//
// Such a product reads B once and does 2 * M flops per element of it: at M <= 16 that is at
// most 32 flop per bf16 weight (16 per byte), far under the H100's ~295 flop/B BF16 ridge, so
// the time is the time to stream B from DRAM. A 64-row TMA tile puts N / 128 CTAs on that
// stream (32 at N = 4096: a quarter of the SMs, each with one pipeline of loads in flight); these
// kernels cut B into narrow column (bf16) or row (fp8) strips so that every SM streams, each
// thread with several 16-byte loads in flight, and split K among the warps of a block, whose
// partial sums meet in shared memory in a fixed order (deterministic, one launch, no workspace).
//
//   gemv_bf16<MR, COLS>: B is K x N row-major bf16 (the ladder's "NN" layout). Block = 256
//     threads owning COLS columns of C (8 per thread: one 16-byte load per row of B) and every
//     k. Thread t takes column chunk t % (COLS / 8) and rows 8 * (g + RG * i) .. + 7, g = t /
//     (COLS / 8), RG = 256 / (COLS / 8); two such 8-row steps are loaded before either is used
//     (16 loads of 16 bytes in flight per thread; one step at MR = 16, for registers). A's row pieces (A[m][k .. k + 7]) are 16-byte
//     loads that the threads of a row group share through L1. CUDA-core FMAs: at MR tokens a
//     16-byte load of B feeds 8 * MR FMAs. Grid: ceil(N / COLS). M <= MR.
//     Needs K % 8 == 0, N % 8 == 0 and 16-byte aligned A and B (the launcher checks).
//   gemv_fp8<MT>: B is N x K row-major e4m3 ("TN"), A is M x K e4m3. Each warp runs
//     mma.sync.m16n8k32 (e4m3, sm_89+) with B's rows as the 16-row operand and the tokens as
//     the 8 columns (MT groups of 8 tokens; M <= 8 * MT): C^T (16 x 8) += B (16 x 32) A^T. The
//     sum over k is order-free, so each lane loads 16 contiguous bytes of a row (k = 64c + 16q,
//     q = lane % 4) and feeds bytes 0-7 to one mma and bytes 8-15 to the next, the tokens'
//     bytes permuted alike; a warp reads 8 rows x 64 bytes per load instruction. Block = 8
//     warps owning 16 rows of B (16 columns of C); warp w takes the 64-byte k-chunks w, w + 8,
//     ..., four chunks loaded before any is used. Grid: ceil(N / 16).
//     Needs K % 16 == 0 and 16-byte aligned A and B (the launcher checks).
#include "tc_common.cuh"

namespace gemmlab {

// A 16-byte streaming load of data read once (B), through the non-coherent path.
__device__ __forceinline__ uint4 ld_stream(const void* p) {
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// A 16-byte load of data read by many threads (A's rows): cached in L1.
__device__ __forceinline__ uint4 ld_shared_ro(const void* p) {
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

// The two bf16 of a 32-bit word as floats (low half first): exact, two integer ops.
__device__ __forceinline__ void bf16x2_to_f32(unsigned w, float& lo, float& hi) {
    asm("mov.b32 %0, %1;" : "=f"(lo) : "r"(w << 16));
    asm("mov.b32 %0, %1;" : "=f"(hi) : "r"(w & 0xffff0000u));
}

__device__ __forceinline__ void uint4_to_f32x8(const uint4& v, float (&f)[8]) {
    bf16x2_to_f32(v.x, f[0], f[1]);
    bf16x2_to_f32(v.y, f[2], f[3]);
    bf16x2_to_f32(v.z, f[4], f[5]);
    bf16x2_to_f32(v.w, f[6], f[7]);
}

// Element j (0..7) of eight bf16 packed in a uint4, as a float.
__device__ __forceinline__ float bf16_at(const uint4& v, int j) {
    const unsigned w = j < 2 ? v.x : j < 4 ? v.y : j < 6 ? v.z : v.w;
    float f;
    asm("mov.b32 %0, %1;" : "=f"(f) : "r"(j % 2 ? (w & 0xffff0000u) : (w << 16)));
    return f;
}

template <int MR, int COLS>
__device__ __forceinline__ void gemv_bf16(int M, int N, int K, float alpha,
                                          const tc::bf16* __restrict__ A,
                                          const tc::bf16* __restrict__ B, float beta,
                                          tc::bf16* __restrict__ C) {
    constexpr int THREADS = 256, CPR = COLS / 8, RG = THREADS / CPR, WARPS = THREADS / 32;
    constexpr int H = MR <= 8 ? 2 : 1;  // 8-row steps loaded together (registers: 12 MR + 32 H)
    static_assert(COLS % 8 == 0 && CPR >= 1 && CPR <= 32 && 32 % CPR == 0, "COLS: 8 .. 256");
    __shared__ float red[WARPS][MR][COLS];
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int chunk = t % CPR, group = t / CPR;
    const int n0 = blockIdx.x * COLS + chunk * 8;
    const bool live = n0 < N;  // N % 8 == 0: a chunk is wholly inside or wholly out
    const int steps = K / 8;

    float acc[MR][8];
#pragma unroll
    for (int m = 0; m < MR; ++m)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[m][e] = 0.0f;

    for (int s0 = group; s0 < steps; s0 += H * RG) {
        uint4 b[H][8];
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const int s = s0 + h * RG;
#pragma unroll
            for (int j = 0; j < 8; ++j)
                b[h][j] = (live && s < steps)
                              ? ld_stream(B + static_cast<long long>(8 * s + j) * N + n0)
                              : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (int h = 0; h < H; ++h) {
            const int s = s0 + h * RG;
            if (s >= steps) break;
            uint4 a[MR];  // A[m][8s .. 8s + 7], raw bf16
#pragma unroll
            for (int m = 0; m < MR; ++m)
                a[m] = m < M ? ld_shared_ro(A + static_cast<long long>(m) * K + 8 * s)
                             : make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                float bv[8];
                uint4_to_f32x8(b[h][j], bv);
#pragma unroll
                for (int m = 0; m < MR; ++m) {
                    const float av = bf16_at(a[m], j);
#pragma unroll
                    for (int e = 0; e < 8; ++e) acc[m][e] = fmaf(av, bv[e], acc[m][e]);
                }
            }
        }
    }

    // Lanes with the same column chunk (lane % CPR) hold partial sums of the same 8 columns:
    // add them across the warp's row groups (butterfly), then across warps in shared memory.
#pragma unroll
    for (int m = 0; m < MR; ++m)
#pragma unroll
        for (int e = 0; e < 8; ++e)
#pragma unroll
            for (int off = CPR; off < 32; off *= 2)
                acc[m][e] += __shfl_xor_sync(0xffffffffu, acc[m][e], off);
    if (lane < CPR) {
#pragma unroll
        for (int m = 0; m < MR; ++m)
#pragma unroll
            for (int e = 0; e < 8; ++e) red[warp][m][lane * 8 + e] = acc[m][e];
    }
    __syncthreads();
    for (int i = t; i < MR * COLS; i += THREADS) {
        const int m = i / COLS, col = i % COLS, n = blockIdx.x * COLS + col;
        if (m >= M || n >= N) continue;
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += red[w][m][col];
        tc::store_out<0>(C, m * N + n, sum, alpha, beta);
    }
}

// mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32: d (16 x 8) += a (16 x 32) * b (32 x 8).
__device__ __forceinline__ void mma_e4m3_16832(float (&d)[4], unsigned a0, unsigned a1,
                                               unsigned a2, unsigned a3, unsigned b0,
                                               unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <int MT>
__device__ __forceinline__ void gemv_fp8(int M, int N, int K, float alpha,
                                         const unsigned char* __restrict__ A,
                                         const unsigned char* __restrict__ B, float beta,
                                         tc::bf16* __restrict__ C) {
    constexpr int WARPS = 8, U = 4, TOK = 8 * MT;
    __shared__ float red[WARPS][16][TOK];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int gid = lane / 4, q = lane % 4;
    const int r0 = blockIdx.x * 16 + gid, r1 = r0 + 8;
    const int chunks = (K + 63) / 64;

    float acc[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[mt][i] = 0.0f;

    for (int c0 = warp; c0 < chunks; c0 += WARPS * U) {
        uint4 b0[U], b1[U], a[MT][U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int k = (c0 + u * WARPS) * 64 + q * 16;
            const bool in = k < K;  // K % 16 == 0: a 16-byte piece is wholly inside or out
            const uint4 z = make_uint4(0u, 0u, 0u, 0u);
            b0[u] = (in && r0 < N) ? ld_stream(B + static_cast<long long>(r0) * K + k) : z;
            b1[u] = (in && r1 < N) ? ld_stream(B + static_cast<long long>(r1) * K + k) : z;
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                const int tok = mt * 8 + gid;
                a[mt][u] = (in && tok < M)
                               ? ld_shared_ro(A + static_cast<long long>(tok) * K + k) : z;
            }
        }
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                mma_e4m3_16832(acc[mt], b0[u].x, b1[u].x, b0[u].y, b1[u].y, a[mt][u].x,
                               a[mt][u].y);
                mma_e4m3_16832(acc[mt], b0[u].z, b1[u].z, b0[u].w, b1[u].w, a[mt][u].z,
                               a[mt][u].w);
            }
    }

    // Accumulator of lane (gid, q): rows (of B, columns of C) gid and gid + 8, tokens 2q, 2q + 1.
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
        red[warp][gid][mt * 8 + 2 * q] = acc[mt][0];
        red[warp][gid][mt * 8 + 2 * q + 1] = acc[mt][1];
        red[warp][gid + 8][mt * 8 + 2 * q] = acc[mt][2];
        red[warp][gid + 8][mt * 8 + 2 * q + 1] = acc[mt][3];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 16 * TOK; i += 32 * WARPS) {
        const int row = i / TOK, tok = i % TOK, n = blockIdx.x * 16 + row;
        if (tok >= M || n >= N) continue;
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += red[w][row][tok];
        tc::store_out<0>(C, tok * N + n, sum, alpha, beta);
    }
}

}  // namespace gemmlab
