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
//   gemv_bf16<MR, COLS, KS>: B is K x N row-major bf16 (the ladder's "NN" layout). Block = 256
//     threads owning COLS columns of C (8 per thread: one 16-byte load per row of B) and every
//     k. Thread t takes column chunk t % (COLS / 8) and rows 8 * (g + RG * i) .. + 7, g = t /
//     (COLS / 8), RG = 256 / (COLS / 8); two such 8-row steps are loaded before either is used
//     (16 loads of 16 bytes in flight per thread; one step at MR = 16, for registers). A's row pieces (A[m][k .. k + 7]) are 16-byte
//     loads that the threads of a row group share through L1. CUDA-core FMAs: at MR tokens a
//     16-byte load of B feeds 8 * MR FMAs. KS > 1: a cluster of KS blocks (grid.y) shares the
//     strip, block y taking the y-th contiguous run of its 8-row steps, and the blocks add their
//     partial sums through distributed shared memory (cluster_reduce). Grid: (ceil(N / COLS),
//     KS). M <= MR.
//     Needs K % 8 == 0, N % 8 == 0 and 16-byte aligned A and B (the launcher checks).
//   gemv_fp8<MT, KS>: B is N x K row-major e4m3 ("TN"), A is M x K e4m3. Each warp runs
//     mma.sync.m16n8k32 (e4m3, sm_89+) with B's rows as the 16-row operand and the tokens as
//     the 8 columns (MT groups of 8 tokens; M <= 8 * MT): C^T (16 x 8) += B (16 x 32) A^T. The
//     sum over k is order-free, so each lane loads 16 contiguous bytes of a row (k = 64c + 16q,
//     q = lane % 4) and feeds bytes 0-7 to one mma and bytes 8-15 to the next, the tokens'
//     bytes permuted alike; a warp reads 8 rows x 64 bytes per load instruction. Block = 8
//     warps owning 16 rows of B (16 columns of C); warp w takes the 64-byte k-chunks w, w + 8,
//     ..., in two register stages of two chunks: one stage's loads fly while the other's MMAs
//     run. KS > 1: a cluster of KS blocks (grid.y) shares the 16 rows, block y taking chunks
//     8 y + w, + 8 KS, ..., their sums added as gemv_bf16's. Grid: (ceil(N / 16), KS).
//     Needs K % 16 == 0 and 16-byte aligned A and B (the launcher checks).
//   gemv_bf16_tc<MT, NW, KS>: bf16 on the tensor cores, B K x N row-major as in gemv_bf16,
//     up to 16 * MT tokens. mma.sync.m16n8k16 with the tokens as the 16-row operand (A's rows,
//     read as they lie) and B as the k16 x n8 operand. That operand wants pairs of consecutive
//     k for one n, and B's rows hold consecutive n: each lane loads 16 bytes of a row (8 n) and
//     movmatrix.trans (sm_75+) turns the warp's 8 rows x 32 n into the fragment, in registers.
//     The sum over k is order-free, so a warp's 32-row chunk of B is permuted so that lane q's
//     k-values are one 16-byte run of A (A[m][32c + 8q .. + 7]): load (s, g) reads rows
//     32c + 8 * (r / 2) + 4s + 2g + r % 2, r = lane / 4, and feeds k-step s's half g. A block =
//     8 warps owning 32 * NW columns of C (a warp reads 64 NW contiguous bytes of each row);
//     warp w takes chunks w, w + 8 KS, ... of its slice, in two register stages of U chunks
//     (8 loads of 16 bytes per stage per lane): one stage's loads fly while the other's MMAs run. KS > 1: a cluster of KS blocks (grid.y)
//     shares the strip's chunks, and the blocks add their partial sums through distributed
//     shared memory, each one its share of the outputs, in rank order (deterministic, one
//     launch, no workspace). Grid: (ceil(N / (32 NW)), KS).
//     Needs K % 8 == 0, N % 8 == 0 and 16-byte aligned A and B (the launcher checks).
#include "tc_common.cuh"
#include "cluster_reduce.cuh"

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

// The decode kernels' main loop: two register stages of type Stage in turn, so the loads of the
// next step's chunks fly while the MMAs of this step's run and a warp always has loads
// outstanding (one stage, loaded then used, waited a full memory latency per step: ncu found the
// warps stalled on the scoreboard). load(stage, c) issues the loads of the step starting at chunk
// c, mma(stage, c) adds them; steps are `step` chunks apart, from `c` until `chunks`.
template <typename Stage, typename Load, typename Mma>
__device__ __forceinline__ void two_stages(int c, int step, int chunks, Load load, Mma mma) {
    Stage x, y;
    load(x, c);
    while (c < chunks) {
        load(y, c + step);
        mma(x, c);
        c += step;
        if (c >= chunks) break;
        load(x, c + step);
        mma(y, c);
        c += step;
    }
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

template <int MR, int COLS, int KS>
__device__ __forceinline__ void gemv_bf16(int M, int N, int K, float alpha,
                                          const tc::bf16* __restrict__ A,
                                          const tc::bf16* __restrict__ B, float beta,
                                          tc::bf16* __restrict__ C) {
    constexpr int THREADS = 256, CPR = COLS / 8, RG = THREADS / CPR, WARPS = THREADS / 32;
    constexpr int H = MR <= 8 ? 2 : 1;  // 8-row steps loaded together (registers: 12 MR + 32 H)
    static_assert(COLS % 8 == 0 && CPR >= 1 && CPR <= 32 && 32 % CPR == 0, "COLS: 8 .. 256");
    static_assert(KS >= 1 && KS <= 8, "KS: a portable cluster (at most 8 blocks)");
    __shared__ alignas(16) float red[WARPS][MR][COLS];
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int chunk = t % CPR, group = t / CPR;
    const int n0 = blockIdx.x * COLS + chunk * 8;
    const bool live = n0 < N;  // N % 8 == 0: a chunk is wholly inside or wholly out
    // block y of the strip's cluster takes a contiguous run of the 8-row steps: [lo, steps)
    const int per = (K / 8 + KS - 1) / KS, lo = blockIdx.y * per, steps = min(K / 8, lo + per);

    float acc[MR][8];
#pragma unroll
    for (int m = 0; m < MR; ++m)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[m][e] = 0.0f;

    for (int s0 = lo + group; s0 < steps; s0 += H * RG) {
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
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += red[w][m][col];
        if (KS > 1)
            red[0][m][col] = sum;
        else if (m < M && n < N)
            tc::store_out<0>(C, m * N + n, sum, alpha, beta);
    }
    if (KS > 1)
        cluster_reduce<KS>(&red[0][0][0], MR, COLS, COLS, M, N, blockIdx.x * COLS, alpha, beta, C);
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

// One stage of gemv_fp8's pipeline: U 64-byte k-chunks of the block's 16 rows of B (rows gid and
// gid + 8) and of the tokens' rows of A, as loaded by one lane.
template <int MT, int U>
struct Fp8Stage {
    uint4 b0[U], b1[U], a[MT][U];
};

template <int MT, int U>
__device__ __forceinline__ void fp8_load(Fp8Stage<MT, U>& st, int c, int stride, int M, int N,
                                         int K, const unsigned char* __restrict__ A,
                                         const unsigned char* __restrict__ B, int r0, int gid,
                                         int q) {
    const uint4 z = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int k = (c + u * stride) * 64 + q * 16;
        const bool in = k < K;  // K % 16 == 0: a 16-byte piece is wholly inside or out
        st.b0[u] = (in && r0 < N) ? ld_stream(B + static_cast<long long>(r0) * K + k) : z;
        st.b1[u] = (in && r0 + 8 < N) ? ld_stream(B + static_cast<long long>(r0 + 8) * K + k) : z;
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            const int tok = mt * 8 + gid;
            st.a[mt][u] = (in && tok < M) ? ld_shared_ro(A + static_cast<long long>(tok) * K + k) : z;
        }
    }
}

template <int MT, int U>
__device__ __forceinline__ void fp8_mma(const Fp8Stage<MT, U>& st, float (&acc)[MT][4]) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            mma_e4m3_16832(acc[mt], st.b0[u].x, st.b1[u].x, st.b0[u].y, st.b1[u].y, st.a[mt][u].x,
                           st.a[mt][u].y);
            mma_e4m3_16832(acc[mt], st.b0[u].z, st.b1[u].z, st.b0[u].w, st.b1[u].w, st.a[mt][u].z,
                           st.a[mt][u].w);
        }
}

template <int MT, int KS>
__device__ __forceinline__ void gemv_fp8(int M, int N, int K, float alpha,
                                         const unsigned char* __restrict__ A,
                                         const unsigned char* __restrict__ B, float beta,
                                         tc::bf16* __restrict__ C) {
    constexpr int WARPS = 8, U = 2, TOK = 8 * MT;
    static_assert(KS >= 1 && KS <= 8, "KS: a portable cluster (at most 8 blocks)");
    __shared__ float red[WARPS][16][TOK];
    // KS > 1: the block's sums, token-major (16-byte aligned: cluster_reduce's float4 loads)
    __shared__ alignas(16) float part[KS > 1 ? TOK * 16 : 1];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int gid = lane / 4, q = lane % 4;
    const int r0 = blockIdx.x * 16 + gid;
    // block y of the cluster takes chunks y * WARPS + w, + KS * WARPS, ... (warp w)
    const int chunks = (K + 63) / 64, stride = KS * WARPS, step = stride * U;

    float acc[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[mt][i] = 0.0f;

    // Two register stages of U chunks (chunks past K load nothing and add zeros).
    two_stages<Fp8Stage<MT, U>>(
        blockIdx.y * WARPS + warp, step, chunks,
        [&](Fp8Stage<MT, U>& st, int c) { fp8_load(st, c, stride, M, N, K, A, B, r0, gid, q); },
        [&](const Fp8Stage<MT, U>& st, int) { fp8_mma(st, acc); });

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
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) sum += red[w][row][tok];
        if (KS > 1)
            part[tok * 16 + row] = sum;
        else if (tok < M && n < N)
            tc::store_out<0>(C, tok * N + n, sum, alpha, beta);
    }
    if (KS > 1) cluster_reduce<KS>(part, TOK, 16, 16, M, N, blockIdx.x * 16, alpha, beta, C);
}

// movmatrix.sync.aligned.m8n8.trans.b16: the warp's 8 x 8 matrix of 16-bit values (lane l holds
// row l / 4, columns 2 (l % 4) and + 1) transposed, in the same layout.
__device__ __forceinline__ unsigned movmatrix_trans(unsigned x) {
    unsigned y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
    return y;
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: d (16 x 8) += a (16 x 16) * b (16 x 8).
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], unsigned a0, unsigned a1,
                                               unsigned a2, unsigned a3, unsigned b0,
                                               unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned word(const uint4& v, int i) {
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// One stage of gemv_bf16_tc's pipeline: U chunks of 32 rows of B (NW groups of 32 columns)
// and the matching 16-byte runs of A, as loaded by one lane.
template <int MT, int NW, int U>
struct TcStage {
    uint4 b[U][NW][2][2];
    uint4 a[U][MT][2];
};

// Issues every load of the U chunks c, c + stride, ... (zeros past K or N; nothing is read
// there: the loads are predicated off).
template <int MT, int NW, int U>
__device__ __forceinline__ void tc_load(TcStage<MT, NW, U>& st, int c, int stride, int M, int N,
                                        int K, const tc::bf16* __restrict__ A,
                                        const tc::bf16* __restrict__ B, int gid, int q, int rrow,
                                        int n0) {
    const uint4 z = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int ka = (c + u * stride) * 32 + 8 * q;  // K % 8 == 0: wholly in or out
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int tok = mt * 16 + gid + 8 * h;
                st.a[u][mt][h] = (tok < M && ka < K)
                                     ? ld_shared_ro(A + static_cast<long long>(tok) * K + ka) : z;
            }
        const int k0 = (c + u * stride) * 32 + rrow;
#pragma unroll
        for (int w = 0; w < NW; ++w) {
            const int n = n0 + 32 * w;
#pragma unroll
            for (int s = 0; s < 2; ++s)
#pragma unroll
                for (int g = 0; g < 2; ++g) {
                    const int k = k0 + 4 * s + 2 * g;  // K % 8 == 0: past K means past chunks too
                    st.b[u][w][s][g] = (k < K && n < N)
                                           ? ld_stream(B + static_cast<long long>(k) * N + n) : z;
                }
        }
    }
}

// The MMAs of a loaded stage (chunks past the end are skipped: the same for the whole warp,
// as movmatrix and mma.sync, .aligned, need).
template <int MT, int NW, int U>
__device__ __forceinline__ void tc_mma(const TcStage<MT, NW, U>& st, int c, int stride,
                                       int chunks, float (&acc)[MT][NW][4][4]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
        if (c + u * stride >= chunks) break;
#pragma unroll
        for (int w = 0; w < NW; ++w)
#pragma unroll
            for (int s = 0; s < 2; ++s)
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const unsigned b0 = movmatrix_trans(word(st.b[u][w][s][0], j));
                    const unsigned b1 = movmatrix_trans(word(st.b[u][w][s][1], j));
#pragma unroll
                    for (int mt = 0; mt < MT; ++mt)
                        mma_bf16_16816(acc[mt][w][j], word(st.a[u][mt][0], 2 * s),
                                       word(st.a[u][mt][1], 2 * s),
                                       word(st.a[u][mt][0], 2 * s + 1),
                                       word(st.a[u][mt][1], 2 * s + 1), b0, b1);
                }
    }
}

template <int MT, int NW, int KS>
__device__ __forceinline__ void gemv_bf16_tc(int M, int N, int K, float alpha,
                                             const tc::bf16* __restrict__ A,
                                             const tc::bf16* __restrict__ B, float beta,
                                             tc::bf16* __restrict__ C) {
    constexpr int WARPS = 8, COLS = 32 * NW, TOK = 16 * MT, U = NW == 1 ? 2 : 1;
    static_assert(MT * NW <= 2, "the warps' partial sums must fit 32 KB of shared memory");
    static_assert(KS >= 1 && KS <= 8, "KS: a portable cluster (at most 8 blocks)");
    __shared__ alignas(16) float red[WARPS][TOK][COLS];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int gid = lane / 4, q = lane % 4;
    const int n_base = blockIdx.x * COLS;
    const int chunks = (K + 31) / 32;
    const int stride = KS * WARPS, step = stride * U;
    // this lane's load: row 8 (r / 2) + r % 2 (+ 4s + 2g) of a chunk, columns n0 .. n0 + 7
    const int r = lane / 4, rrow = 8 * (r / 2) + r % 2, n0 = n_base + 8 * (lane % 4);

    float acc[MT][NW][4][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int w = 0; w < NW; ++w)
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[mt][w][j][e] = 0.0f;

    // Two register stages of U chunks.
    two_stages<TcStage<MT, NW, U>>(
        blockIdx.y * WARPS + warp, step, chunks,
        [&](TcStage<MT, NW, U>& st, int c) {
            tc_load(st, c, stride, M, N, K, A, B, gid, q, rrow, n0);
        },
        [&](const TcStage<MT, NW, U>& st, int c) { tc_mma(st, c, stride, chunks, acc); });

    // Accumulator (mt, w, j) of lane (gid, q): tokens 16 mt + gid (+ 8), columns 32 w + 8 q + 2 j
    // and + 1 of the strip (movmatrix's column gid is n = 8 (gid / 2) + 2 j + gid % 2).
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int w = 0; w < NW; ++w)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int col = 32 * w + 8 * q + 2 * j, tok = mt * 16 + gid;
                red[warp][tok][col] = acc[mt][w][j][0];
                red[warp][tok][col + 1] = acc[mt][w][j][1];
                red[warp][tok + 8][col] = acc[mt][w][j][2];
                red[warp][tok + 8][col + 1] = acc[mt][w][j][3];
            }
    __syncthreads();
    // The block's sum over its warps, in warp order, into red[0].
    for (int i = threadIdx.x; i < TOK * COLS; i += 32 * WARPS) {
        const int tok = i / COLS, col = i % COLS;
        float sum = red[0][tok][col];
#pragma unroll
        for (int w = 1; w < WARPS; ++w) sum += red[w][tok][col];
        if (KS == 1) {
            const int n = n_base + col;
            if (tok < M && n < N) tc::store_out<0>(C, tok * N + n, sum, alpha, beta);
        } else {
            red[0][tok][col] = sum;
        }
    }
    if (KS > 1) cluster_reduce<KS>(&red[0][0][0], TOK, COLS, COLS, M, N, n_base, alpha, beta, C);
}

}  // namespace gemmlab
