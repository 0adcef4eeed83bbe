// Rung 9: double_buffered -- cp.async pipelining: the copies of tile t + STAGES - 1 are in flight
// while tile t is computed.
//
// In rung 8 every tile step is load -> barrier -> compute -> barrier: while a block loads, its
// FMA units idle, and only other resident blocks hide that latency. Here global -> shared copies
// go through cp.async (sm_80+), which writes shared memory without passing through registers, into
// a ring of STAGES buffers: the block waits only for the oldest copy group and issues the next one
// before computing. Copies of out-of-range elements use src-size 0, so shared memory is
// zero-filled without branching around the copy.
//
// A's tile is no longer transposed: a copy engine cannot transpose, and 4-byte copies that could
// would cost 4x the instructions and a register per address. It is stored k-contiguous, 16 bytes
// at a time, and the inner loop reads a lane's TM rows as float4s along k (4 values of k per
// load). Rows m and m + 8, which the two row-groups of a quarter-warp read together, would sit
// in the same banks (row stride BK floats), so the 16-byte chunk c of row m is stored at chunk
// c ^ ((m / 8) % (BK / 4)): an XOR swizzle, conflict-free for the copies and the reads.
//   B: 16-byte cp.async.cg (VEC = 1: N % 4 == 0 and aligned B), else 4-byte cp.async.ca.
//   A: 16-byte cp.async.cg (VEC = 1: K % 4 == 0 and aligned A), else 4-byte cp.async.ca.
// Shared memory is dynamic (STAGES * BK * (BM + BN) floats; over 48 KB needs the opt-in the
// launcher sets), and the kernel traps if launched with less than it needs.
#include "warptile.cuh"
#include "cp_async.cuh"

namespace gemmlab {

// The kernel with explicit leading dimensions: A is M x K with row pitch lda, B is K x N with row
// pitch ldb, C is M x N with row pitch ldc (all in elements). VEC = 1 (16-byte copies) needs lda
// and ldb multiples of 4 and 16-byte aligned A and B; VEC_C = 1 (16-byte epilogue) needs ldc a
// multiple of 4 and an aligned C. Guards use the logical M, N, K only, so a zero-padded copy of A
// (lda = K rounded up to 4) or of B (ldb = N rounded up to 4) runs the 16-byte path for any K, N:
// a 16-byte chunk that starts inside the matrix ends inside the padded row, and the padding is 0.
// The split-K and padded paths of gemmlab.runtime.dispatch launch this (kernels/tile_ld.cu);
// double_buffered below is the same code with lda = K, ldb = ldc = N.
template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NT, int STAGES,
          int GROUP, int VEC, int VEC_C>
__device__ __forceinline__ void double_buffered_ld(int M, int N, int K, int lda, int ldb, int ldc,
                                                   float alpha, const float* __restrict__ A,
                                                   const float* __restrict__ B, float beta,
                                                   float* __restrict__ C) {
    using WT = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, NT>;
    constexpr int WMITER = WT::WMITER;
    constexpr int KC = BK / 4;  // 16-byte chunks per row of A's tile
    constexpr int A_FLOATS = BM * BK;
    constexpr int STAGE_FLOATS = A_FLOATS + BK * BN;
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    static_assert(TM == 8, "the swizzle separates rows 8 apart (two row-groups per quarter-warp)");
    static_assert((KC & (KC - 1)) == 0 && KC >= 2, "BK / 4 must be a power of two >= 2");
    static_assert((WT::WSUBM % 8) == 0 && (WM % 8) == 0, "row groups aligned to 8");
    static_assert((BM * BK / 4) % NT == 0 && (BM * BK) % NT == 0, "A copies");
    static_assert((BK * BN / 4) % NT == 0 && (BK * BN) % NT == 0, "B copies");

#ifndef GEMMLAB_HOST_EMULATION
    extern __shared__ float4 smem4[];
#else
    float4* smem4 = emu::dynamic_smem<float4>();
#endif
    float* smem = reinterpret_cast<float*>(smem4);
    if (dynamic_smem_bytes() < unsigned(STAGES * STAGE_FLOATS * 4)) __trap();  // launched with too little

    const WT wt;
    const int tid = threadIdx.x;
    int tile_m, tile_n;  // which tile of C (GROUP > 0: banded order for L2 reuse)
    block_tile<GROUP>(tile_m, tile_n);
    const int row0 = tile_m * BM, col0 = tile_n * BN;

    // Element (m, k) of A's tile lives at As[m * BK + swz(m, k / 4) * 4 + k % 4].
    auto a_chunk = [](int m, int c) { return m * BK + ((c ^ ((m >> 3) & (KC - 1))) << 2); };

    // 16-byte copies (VEC). Thread tid always copies chunk a_c of rows a_r + j * A_RS of A's tile
    // and chunk b_c of rows b_r + j * B_RS of B's tile, so everything but k0 is computed once
    // here: per tile a copy costs a pointer add, a predicate and the cp.async itself. (Left to the
    // compiler, the index math was redone for every copy of every tile: ~25 instructions each.)
    constexpr int A_J = BM * BK / 4 / NT, A_RS = NT / KC;
    constexpr int B_J = BK * BN / 4 / NT, B_RS = NT / (BN / 4);
    static_assert(NT % KC == 0 && NT % (BN / 4) == 0, "whole rows of chunks per pass");
    const int a_c = tid % KC, a_r = tid / KC;
    const int b_c = (tid % (BN / 4)) * 4, b_r = tid / (BN / 4);
    const float* a_src = A + (long long)(row0 + a_r) * lda + 4 * a_c;  // + k0, + j * A_RS * lda
    const float* b_src = B + b_r * ldb + col0 + b_c;                  // + k0 * ldb, + j * B_RS * ldb
    const int a_soff = a_chunk(a_r, a_c);
    const int a_step = A_RS * lda, b_step = B_RS * ldb;
    unsigned a_rows_ok = 0;  // bit j: row a_r + j * A_RS of the tile is inside A
#pragma unroll
    for (int j = 0; j < A_J; ++j) a_rows_ok |= unsigned(row0 + a_r + j * A_RS < M) << j;
    const bool b_col_ok = col0 + b_c < N;

    const unsigned smem_base = smem_addr(smem);
    auto load_tile = [&](int stage, int k0) {
        const unsigned As = smem_base + stage * (STAGE_FLOATS * 4);  // byte addresses
        const unsigned Bs = As + A_FLOATS * 4;
        if constexpr (VEC) {
            const bool a_k_ok = k0 + 4 * a_c < K;
            const float* pa = a_src + k0;
#pragma unroll
            for (int j = 0; j < A_J; ++j) {
                // Rows A_RS apart share their swizzle when A_RS % (8 * KC) == 0: offsets fold
                // to immediates.
                const int soff = (A_RS % (8 * KC) == 0) ? a_soff + j * A_RS * BK
                                                        : a_chunk(a_r + j * A_RS, a_c);
                cp_async16(As + 4 * soff, pa + j * a_step, a_k_ok && ((a_rows_ok >> j) & 1u));
            }
            const float* pb = b_src + k0 * ldb;
#pragma unroll
            for (int j = 0; j < B_J; ++j) {
                cp_async16(Bs + 4 * ((b_r + j * B_RS) * BN + b_c), pb + j * b_step,
                           b_col_ok && (k0 + b_r + j * B_RS < K));
            }
        } else {
            // Rolled loops: 4-byte copies of the unaligned path would otherwise hold dozens of
            // addresses live across the tile and spill the accumulators.
#pragma unroll 1
            for (int j = 0; j < BM * BK / NT; ++j) {
                const int i = tid + j * NT;
                const int r = i / BK, k = i % BK;
                const bool ok = (row0 + r < M) && (k0 + k < K);
                cp_async4(As + 4 * (a_chunk(r, k / 4) + k % 4),
                          ok ? A + (row0 + r) * lda + k0 + k : A, ok);
            }
#pragma unroll 1
            for (int j = 0; j < BK * BN / NT; ++j) {
                const int i = tid + j * NT;
                const int r = i / BN, c = i % BN;
                const bool ok = (k0 + r < K) && (col0 + c < N);
                cp_async4(Bs + 4 * (r * BN + c), ok ? B + (k0 + r) * ldb + col0 + c : B, ok);
            }
        }
    };

    // This lane's rows of A's tile: m = mbase[wm] + i (i < TM); the swizzle is the same for all i.
    int a_row[WMITER], a_xor[WMITER];
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm) {
        a_row[wm] = wt.warpRow * WM + wm * WT::WSUBM + wt.tRowW * TM;
        a_xor[wm] = (a_row[wm] >> 3) & (KC - 1);
    }
    const int b_col = wt.warpCol * WN + wt.tColW * TN;

    float acc[WMITER * TM][WNITER * TN] = {};
    const int nTiles = cdiv(K, BK);
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nTiles) load_tile(s, s * BK);
        cp_async_commit();  // commit even when empty: group counting stays uniform
    }
    int read_stage = 0, write_stage = STAGES - 1;  // t % STAGES and (t + STAGES - 1) % STAGES
    for (int t = 0; t < nTiles; ++t) {
        cp_async_wait<STAGES - 2>();  // tile t has landed (this thread's copies) ...
        __syncthreads();              // ... everyone's; and tile t - 1 is no longer being read
        const int tn = t + STAGES - 1;
        if (tn < nTiles) load_tile(write_stage, tn * BK);  // refill the stage tile t - 1 used
        cp_async_commit();
        write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;

        const float* As = smem + read_stage * STAGE_FLOATS;
        read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
        const float* Bs = As + A_FLOATS;
#pragma unroll
        for (int c = 0; c < KC; ++c) {
            float4 a[WMITER * TM];  // TM rows x 4 consecutive k, per warp sub-tile
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                for (int i = 0; i < TM; ++i)
                    a[wm * TM + i] =
                        lds4(&As[(a_row[wm] + i) * BK + ((c ^ a_xor[wm]) << 2)]);
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {
                float regN[WNITER * TN];
#pragma unroll
                for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                    for (int n = 0; n < TN; n += 4) {
                        const float4 b =
                            lds4(&Bs[(4 * c + kk) * BN + b_col + wn * WT::WSUBN + n]);
                        regN[wn * TN + n + 0] = b.x;
                        regN[wn * TN + n + 1] = b.y;
                        regN[wn * TN + n + 2] = b.z;
                        regN[wn * TN + n + 3] = b.w;
                    }
#pragma unroll
                for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
                    for (int n = 0; n < WNITER * TN; ++n)
                        acc[m][n] += get(a[m], kk) * regN[n];
            }
        }
    }
    wt.template store_ld<VEC_C>(C, M, N, ldc, row0, col0, alpha, beta, acc);
}

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NT, int STAGES,
          int GROUP, int VEC>
__device__ __forceinline__ void double_buffered(int M, int N, int K, float alpha,
                                                const float* __restrict__ A,
                                                const float* __restrict__ B, float beta,
                                                float* __restrict__ C) {
    double_buffered_ld<BM, BN, BK, WM, WN, WNITER, TM, TN, NT, STAGES, GROUP, VEC, VEC>(
        M, N, K, K, N, N, alpha, A, B, beta, C);
}

}  // namespace gemmlab
