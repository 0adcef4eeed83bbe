// BF16 tensor-core rung 3: cp.async multistage pipeline on top of rung 2 (the Ampere-style kernel).
//
// What changes from mma_sync_bf16, and why:
//  * Global -> shared goes through cp.async.cg (16-byte copies that write shared memory without
//    passing through registers, tc::cp_async16) into a ring of STAGES shared-memory stages: while
//    the warps multiply tile t, the copies of tiles t+1 .. t+STAGES-1 are in flight. Rung 2 loads
//    a tile into registers, stores it, waits at a barrier and only then computes, so every tile
//    pays the full global-memory latency; at 1-2 blocks per SM nothing else hides it.
//  * The stages live in dynamic shared memory (STAGES x (BM x BK + BK x BN) bf16: 96 KB for the
//    registered 128x256x32, 4 stages), so the launcher sets the >48 KB opt-in (runtime/compile.py).
//  * A bigger block and warp tile: 128x256 per block, 8 warps of 64x64. Per 16-wide k step a
//    warp issues 4 ldmatrix.x4 (A) + 4 ldmatrix.x4.trans (B) for 32 mma.sync (rung 2: 6 for 16):
//    4 KB of shared-memory reads per 64x64x16 step against rung 2's 3 KB per 64x32x16, i.e. two
//    thirds of the shared-memory traffic per MMA.
//  * Grouped block order (GROUP > 0): consecutive blocks walk down a band of GROUP tile-rows
//    before moving right, so the blocks resident at one time touch fewer distinct rows of A and
//    columns of B and find more of them in L2 (the FP32 ladder's double_buffered does the same).
//  * The epilogue writes pairs of adjacent outputs as one 4-byte (bf16x2) or 8-byte (float2)
//    store on the vector path; element by element otherwise.
// Shared tiles keep rung 2's unpadded XOR swizzle (tc::swz_chunk), so ldmatrix stays free of bank
// conflicts and the cp.async destinations are 16-byte chunks of that same layout.
//
// VEC = 1: K % 8 == 0, N % 8 == 0 and 16-byte aligned A, B, C (the launcher checks; every
// 16-byte chunk is then wholly inside or wholly outside its matrix): out-of-range chunks are
// cp.async'ed with src_bytes = 0, which writes zeros and reads nothing.
// VEC = 0 (the scalar twin, any M, N, K >= 1 and any alignment): each chunk is gathered with
// guarded 2-byte loads (tc::load_chunk<0>) and stored into the same swizzled slot synchronously;
// the ring, the barriers and the compute are identical, only the copies are not asynchronous.
#include "tc_common.cuh"
#include "block_order.cuh"

namespace gemmlab {
namespace cpa {

// Two adjacent outputs, columns c and c + 1 of one row (idx = row * N + c, idx even), as one
// store: float2 for float32 output, a bf16x2 word for bfloat16 (cvt.rn.bf16x2.f32 d, hi, lo
// rounds both halves to nearest even; hi goes to the upper 16 bits, i.e. column c + 1). Same
// arithmetic as tc::store_out, element for element. Needs idx even and C 8-byte (float) or
// 4-byte (bf16) aligned: the vector path's N % 8 == 0 and 16-byte aligned C guarantee it.
template <int OUT_F32>
__device__ __forceinline__ void store_out2(void* __restrict__ C, int idx, float v0, float v1,
                                           float alpha, float beta) {
    if (OUT_F32) {
        float2* p = reinterpret_cast<float2*>(static_cast<float*>(C) + idx);
        float2 o;
        if (beta == 0.0f) {
            o.x = alpha * v0;
            o.y = alpha * v1;
        } else {
            const float2 c = *p;
            o.x = alpha * v0 + beta * c.x;
            o.y = alpha * v1 + beta * c.y;
        }
        *p = o;
    } else {
        unsigned* p = reinterpret_cast<unsigned*>(static_cast<tc::bf16*>(C) + idx);
        float x0 = alpha * v0, x1 = alpha * v1;
        if (beta != 0.0f) {
            const unsigned c = *p;  // little-endian: column c in the low half
            x0 = alpha * v0 + beta * tc::bf16_to_f32(static_cast<tc::bf16>(c & 0xFFFFu));
            x1 = alpha * v1 + beta * tc::bf16_to_f32(static_cast<tc::bf16>(c >> 16));
        }
        unsigned packed;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(x1), "f"(x0));
        *p = packed;
    }
}

}  // namespace cpa

extern __shared__ uint4 cpa_smem[];  // the stage ring (dynamic: sized by the launch)

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int GROUP, int VEC, int OUT_F32>
__device__ __forceinline__ void cp_async_bf16(int M, int N, int K, float alpha,
                                              const tc::bf16* __restrict__ A,
                                              const tc::bf16* __restrict__ B, float beta,
                                              void* __restrict__ C) {
    using namespace tc;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warp tiles");
    static_assert(BK == 32 || BK % 64 == 0, "A rows must be 4 or 8k chunks (swizzle)");
    static_assert(BN % 64 == 0, "B rows must be 8k chunks (swizzle)");
    static_assert(STAGES >= 2, "a pipeline needs at least two stages");
    constexpr int WARPS_N = BN / WN;
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int MI = WM / 16, NI = WN / 8;
    constexpr int ACH = BK / 8, BCH = BN / 8;  // 16-byte chunks per shared row
    static_assert((BM * ACH) % NT == 0 && (BK * BCH) % NT == 0, "whole chunks per thread");
    static_assert(NT % ACH == 0 && NT % BCH == 0, "a thread copies one chunk column");
    constexpr int A_ELEMS = BM * BK, STAGE_ELEMS = BM * BK + BK * BN;
    constexpr int STAGE_BYTES = STAGE_ELEMS * 2;
    // Thread tid copies chunk column a_c of rows a_r + j * A_RS of A's tile (j < A_J), and chunk
    // column b_c of rows b_r + j * B_RS of B's tile (j < B_J).
    constexpr int A_J = BM * ACH / NT, A_RS = NT / ACH;
    constexpr int B_J = BK * BCH / NT, B_RS = NT / BCH;

    unsigned dyn_bytes;  // %dynamic_smem_size: what this launch actually provided
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn_bytes));
    if (dyn_bytes < unsigned(STAGES * STAGE_BYTES)) __trap();  // launched with too little

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;

    int tile_m, tile_n;  // which tile of C (GROUP > 0: banded order for L2 reuse)
    block_tile<GROUP>(tile_m, tile_n);
    const int row0 = tile_m * BM, col0 = tile_n * BN;

    char* const smem = reinterpret_cast<char*>(cpa_smem);
    const unsigned sbase = smem_addr(cpa_smem);
    const int a_c = tid % ACH, a_r = tid / ACH;
    const int b_c = tid % BCH, b_r = tid / BCH;

    // Copy the (k0 / BK)-th k-tile into ring stage `stage`.
    auto load_tile = [&](int stage, int k0) {
        const int as = stage * STAGE_BYTES, bs = as + A_ELEMS * 2;  // byte offsets in the ring
#pragma unroll
        for (int j = 0; j < A_J; ++j) {
            const int r = a_r + j * A_RS;
            const int dst = as + (r * BK + swz_chunk<ACH>(r, a_c) * 8) * 2;
            const int gr = row0 + r, gk = k0 + a_c * 8;
            if constexpr (VEC) {
                const bool ok = gr < M && gk < K;
                cp_async16(sbase + dst, ok ? A + gr * K + gk : A, ok ? 16 : 0);
            } else {
                *reinterpret_cast<uint4*>(smem + dst) = load_chunk<0>(A, gr, gk, M, K);
            }
        }
#pragma unroll
        for (int j = 0; j < B_J; ++j) {
            const int r = b_r + j * B_RS;
            const int dst = bs + (r * BN + swz_chunk<BCH>(r, b_c) * 8) * 2;
            const int gk = k0 + r, gc = col0 + b_c * 8;
            if constexpr (VEC) {
                const bool ok = gk < K && gc < N;
                cp_async16(sbase + dst, ok ? B + gk * N + gc : B, ok ? 16 : 0);
            } else {
                *reinterpret_cast<uint4*>(smem + dst) = load_chunk<0>(B, gk, gc, K, N);
            }
        }
    };

    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    const int n_tiles = cdiv(K, BK);
    // Prologue: tiles 0 .. STAGES-2 in flight, one commit group each (empty groups too, so the
    // group count stays uniform and wait_group N always means "tile t has landed").
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < n_tiles) load_tile(s, s * BK);
        cp_async_commit();
    }

    int read_stage = 0, write_stage = STAGES - 1;  // t % STAGES and (t + STAGES - 1) % STAGES
    for (int t = 0; t < n_tiles; ++t) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of tile t have landed ...
        __syncthreads();              // ... everyone's; and nobody still reads tile t - 1's stage
        const int tn = t + STAGES - 1;
        if (tn < n_tiles) load_tile(write_stage, tn * BK);  // refill the stage tile t - 1 used
        cp_async_commit();
        write_stage = (write_stage + 1 == STAGES) ? 0 : write_stage + 1;

        const unsigned as = sbase + read_stage * STAGE_BYTES, bs = as + A_ELEMS * 2;
        read_stage = (read_stage + 1 == STAGES) ? 0 : read_stage + 1;
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            unsigned a[MI][4], b[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                // lanes 0-15: rows 0-15 at k 0-7; lanes 16-31: the same rows at k 8-15.
                const int r = wm * WM + i * 16 + (lane & 15), c = kk * 2 + (lane >> 4);
                ldmatrix_x4(a[i], as + (r * BK + swz_chunk<ACH>(r, c) * 8) * 2);
            }
#pragma unroll
            for (int j = 0; j < NI; j += 2) {
                // lanes 0-15: k rows 0-15 at columns n..n+7; lanes 16-31: columns n+8..n+15.
                const int r = kk * 16 + (lane & 15), c = (wn * WN + j * 8) / 8 + (lane >> 4);
                unsigned q[4];
                ldmatrix_x4_trans(q, bs + (r * BN + swz_chunk<BCH>(r, c) * 8) * 2);
                b[j][0] = q[0];
                b[j][1] = q[1];
                b[j + 1][0] = q[2];
                b[j + 1][1] = q[3];
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j) mma_bf16_16816(acc[i][j], a[i], b[j][0], b[j][1]);
        }
    }
    cp_async_wait<0>();  // nothing real is in flight by now (only empty groups); leave none behind

    const int g = lane / 4, q2 = (lane % 4) * 2;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const int r = row0 + wm * WM + i * 16 + g, c = col0 + wn * WN + j * 8 + q2;
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // h = 0: row r, h = 1: row r + 8
                const int rr = r + h * 8;
                if (rr >= M) continue;
                const float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
                if (VEC && c + 1 < N) {
                    cpa::store_out2<OUT_F32>(C, rr * N + c, v0, v1, alpha, beta);
                } else {
                    if (c < N) store_out<OUT_F32>(C, rr * N + c, v0, alpha, beta);
                    if (c + 1 < N) store_out<OUT_F32>(C, rr * N + c + 1, v1, alpha, beta);
                }
            }
        }
    }
}

}  // namespace gemmlab
