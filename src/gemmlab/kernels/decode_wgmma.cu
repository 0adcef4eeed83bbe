// Decode on Hopper's wgmma with the operands swapped (dispatch_bf16 / dispatch_fp8, issue #20):
// C = alpha * A @ B + beta * C for a few tokens (TN: 8, 16, 32, 64 or 128 a tile; M > TN takes
// cdiv(M, TN) token tiles, each CTA one - forced only: each re-reads the strip's B from L2, and
// 16 tokens as 2 x 8 lost or tied, docs/results/tc-tokens-2026-11-29), bf16 C, FP32 accumulation.
//
// wgmma's M side is 64 rows, at least; a 64-row tile over 16 tokens computes 48 rows of zeros
// and - worse for a product that only streams B - gives each CTA 64 or 128 columns of B, so at
// N = 4096-6144 the tiles cover a third to three quarters of the SMs. Swapping the operands
// (C^T = B^T A^T, what cuBLAS's small-M kernels do) puts 64 of B's columns on the M side and the
// tokens on the N side (n16; n8, or n32-n128 for more): no MMA is wasted on missing tokens, and a
// cluster of KS CTAs (grid.y, cluster dims (1, KS, 1)) shares one 64-column strip's K, so
// N / 64 x KS CTAs stream B - as many as it takes to fill the SMs. The KS partial sums meet
// through distributed shared memory in rank order (cluster_reduce: deterministic, one launch, no
// workspace).
//
// CTA = one consumer warpgroup (threads 0-127: wgmma) + one producer warp (thread 128: TMA), a
// ring of STAGES stages, each 128 bytes of K: B's 64 x 128-byte tile (8 KB) and the tokens' TN x
// 128-byte tile, both copied by TMA with the 128-byte swizzle; TMA writes zeros past N and K (and
// past M in the 16- and 32-token tiles; from 64 tokens on, TRIM, the tokens' boxes hold min(M,
// TN) rows and the rows past them are zeroed once), so ragged shapes need no guards until C.
//  * bf16 (DT = 0): B is K x N row-major (N-major), read as an (N, K) map in 64 x 64 boxes - the
//    wgmma A operand transposed (TRANS_A = 1: M-major, one 64-column chunk, SBO = 1024 between
//    8-row groups of K, 2048 bytes per k16 step). The tokens A (M x K row-major) are the B
//    operand, K-major: a (K, M) map in 64 x TN boxes, + 32 bytes per k16 step.
//  * fp8 (DT = 1): B is given N x K ("TN"): K-major as wgmma's A operand wants, a (K, N) map in
//    128 x 64 boxes; the tokens K-major as well (128 x TN boxes); m64nTNk32, + 32 bytes per step.
// The accumulator d[4j + e] of thread t (w = t / 32, g = (t % 32) / 4, q = 2 (t % 4)) holds
// column n_base + 16 w + g (+ 8 for e >= 2) of C and token 8 j + q + (e & 1): once the last
// stage is read, it goes to the ring's first bytes token-major (TN rows of 64 floats, pitch RED_LD
// = 68: the four q of a store land in four bank groups) and cluster_reduce stores C four
// columns at a time. The ring holding the partials leaves no static shared memory: at 128 tokens
// a ring of 4 stages is 97 KB, two CTAs an SM.
// Needs the TMA pitches (bf16: K % 8 == 0 and N % 8 == 0; fp8: K % 16 == 0) and 16-byte aligned A
// and B (the launcher checks; the dispatch rules route other shapes elsewhere).
#include "tc_common.cuh"
#include "cluster_reduce.cuh"

namespace gemmlab {

template <int DT, int TN>
__device__ __forceinline__ void swap_mma(float (&d)[TN / 2], unsigned sw, unsigned sx) {
    using namespace tc;
    static_assert(TN == 8 || TN == 16 || TN == 32 || TN == 64 || TN == 128,
                  "m64n8 / 16 / 32 / 64 / 128");
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        const unsigned long long b = wgmma_desc(sx + 32 * kk, 16, 1024);
        if constexpr (DT == 0) {
            const unsigned long long a = wgmma_desc(sw + 2048 * kk, 8192, 1024);
            if constexpr (TN == 8) wgmma_m64n8k16_bf16<0, 1>(d, a, b, 1);
            else if constexpr (TN == 16) wgmma_m64n16k16_bf16<0, 1>(d, a, b, 1);
            else if constexpr (TN == 32) wgmma_m64n32k16_bf16<0, 1>(d, a, b, 1);
            else if constexpr (TN == 64) wgmma_m64n64k16_bf16<0, 1>(d, a, b, 1);
            else wgmma_m64n128k16_bf16<0, 1>(d, a, b, 1);
        } else {
            const unsigned long long a = wgmma_desc(sw + 32 * kk, 16, 1024);
            if constexpr (TN == 8) wgmma_m64n8k32_e4m3(d, a, b, 1);
            else if constexpr (TN == 16) wgmma_m64n16k32_e4m3(d, a, b, 1);
            else if constexpr (TN == 32) wgmma_m64n32k32_e4m3(d, a, b, 1);
            else if constexpr (TN == 64) wgmma_m64n64k32_e4m3(d, a, b, 1);
            else wgmma_m64n128k32_e4m3(d, a, b, 1);
        }
    }
}

template <int DT, int TN, int STAGES, int KS, int TRIM>
__device__ __forceinline__ void swap_decode(const tc::TensorMap& tmW, const tc::TensorMap& tmX,
                                            int M, int N, int K, float alpha, float beta,
                                            tc::bf16* __restrict__ C) {
    using namespace tc;
    constexpr int ROWS = 64;                 // columns of C per CTA: wgmma's M side
    constexpr int BK = DT == 0 ? 64 : 128;   // elements of K per stage: 128 bytes
    constexpr unsigned W_BYTES = ROWS * 128, X_BYTES = TN * 128, STAGE = W_BYTES + X_BYTES;
    static_assert(STAGE % 1024 == 0, "every tile on a 1024-byte swizzle-atom boundary");
    static_assert(KS >= 1 && KS <= 8, "KS: a portable cluster (at most 8 blocks)");
    constexpr int RED_LD = ROWS + 4;
    static_assert(TN * RED_LD * 4 <= STAGES * STAGE, "the partial sums fit in the ring");
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023u) & ~1023u;
    const unsigned bars = base + STAGES * STAGE;
    auto full = [&](int s) { return bars + 8u * s; };
    auto empty = [&](int s) { return bars + 8u * (STAGES + s); };
    // blockIdx.x: the strip and, where M holds more tokens than the tile (token tiles), which TN
    // of them - the tiles of one strip neighbours in launch order, so they stream its B together
    // and L2 serves the later ones
    const int token_tiles = cdiv(M, TN);
    const int n_base = (blockIdx.x / token_tiles) * ROWS;
    const int tok0 = (blockIdx.x % token_tiles) * TN, rows_here = M - tok0;
    const int nk = cdiv(K, BK);
    // this block's contiguous run of the strip's k-tiles (rank y of the cluster)
    const int kt0 = static_cast<int>(static_cast<long long>(nk) * blockIdx.y / KS);
    const int kt1 = static_cast<int>(static_cast<long long>(nk) * (blockIdx.y + 1) / KS);
    // TRIM (paths.SWAP_TRIM_TN) and fewer tokens than the tile: the tokens' boxes copy M rows
    // (tma.box_rows), the rest stay zero
    // (a TRIM kernel runs one token tile: the host's boxes hold min(M, TN) rows)
    const int x_rows = TRIM ? box_rows<TN>(rows_here) : TN;
    if constexpr (TRIM)
        if (x_rows < TN) zero_rows<STAGES, STAGE>(base + W_BYTES, x_rows, TN, threadIdx.x, blockDim.x);
    const unsigned stage_tx = W_BYTES + x_rows * 128u;
    if (threadIdx.x == 0) {
        prefetch_tensormap(&tmW);
        prefetch_tensormap(&tmX);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), 1);
        }
        fence_mbar_init();
    }
    __syncthreads();
    if (threadIdx.x >= 128) {  // producer warp: one thread issues the copies
        if (threadIdx.x == 128) {
            for (int kt = kt0, it = 0; kt < kt1; ++kt, ++it) {
                const int s = it % STAGES;
                if (it >= STAGES) mbar_wait(empty(s), ((it / STAGES) - 1) & 1);
                const unsigned sw = base + s * STAGE;
                mbar_arrive_expect_tx(full(s), stage_tx);
                if constexpr (DT == 0) tma_load_2d(sw, &tmW, full(s), n_base, kt * BK);
                else tma_load_2d(sw, &tmW, full(s), kt * BK, n_base);
                tma_load_2d(sw + W_BYTES, &tmX, full(s), kt * BK, tok0);
            }
        }
    } else {  // consumer warpgroup
        const int t = threadIdx.x;
        float d[TN / 2];
#pragma unroll
        for (int i = 0; i < TN / 2; ++i) d[i] = 0.0f;
        for (int kt = kt0, it = 0; kt < kt1; ++kt, ++it) {
            const int s = it % STAGES;
            mbar_wait(full(s), (it / STAGES) & 1);
            const unsigned sw = base + s * STAGE;
            wgmma_fence();
            swap_mma<DT, TN>(d, sw, sw + W_BYTES);
            wgmma_commit();
            wgmma_wait<1>();  // the stage before this one is read: back to the producer
            if (it > 0 && t == 0) mbar_arrive(empty((it - 1) % STAGES));
        }
        wgmma_wait<0>();
        fence_regs(d);
        // every warp's MMAs done reading the ring (and every TMA write landed: each full
        // barrier was waited on) before any partial sum overwrites it
        named_barrier(1, 128);
        float* red = reinterpret_cast<float*>(smem_raw + (base - smem_addr(smem_raw)));
        const int w = t / 32, g = (t % 32) / 4, q = 2 * (t % 4);
#pragma unroll
        for (int j = 0; j < TN / 8; ++j) {
            red[(8 * j + q) * RED_LD + 16 * w + g] = d[4 * j];
            red[(8 * j + q + 1) * RED_LD + 16 * w + g] = d[4 * j + 1];
            red[(8 * j + q) * RED_LD + 16 * w + g + 8] = d[4 * j + 2];
            red[(8 * j + q + 1) * RED_LD + 16 * w + g + 8] = d[4 * j + 3];
        }
    }
    __syncwarp();  // the producer warp whole again: the cluster barrier is .aligned
    // every thread of every block of the cluster: the sums, in rank order, to C
    const float* red = reinterpret_cast<const float*>(smem_raw + (base - smem_addr(smem_raw)));
    cluster_reduce<KS>(red, TN, ROWS, RED_LD, rows_here, N, n_base, alpha, beta,
                       C + static_cast<long long>(tok0) * N);
}

}  // namespace gemmlab
