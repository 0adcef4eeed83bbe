// BF16 tensor-core rung 2: mma.sync.m16n8k16 fed by ldmatrix from swizzled shared tiles.
//
// What changes from wmma_bf16: the fragments are explicit. Each warp owns a WM x WN sub-tile
// held as (WM/16) x (WN/8) m16n8 accumulators in registers (register blocking: one A fragment
// feeds WN/8 MMAs, one B fragment WM/16), loaded with ldmatrix.x4 (A) and ldmatrix.x4.trans
// (B is row-major K x N; .trans yields the K-major "col" fragment mma.sync wants). Shared tiles
// are unpadded and XOR-swizzled in 16-byte chunks (tc::swz_chunk) so each 8-row ldmatrix phase
// hits 8 distinct bank groups: no bank conflicts, no padding. The epilogue writes straight from
// the accumulators (no shared round trip). Tiles move global -> shared in 16-byte chunks.
//
// VEC = 1: each chunk is one 16-byte global load; needs K % 8 == 0, N % 8 == 0 and A, B
// 16-byte aligned (every row then starts on a chunk). VEC = 0 (the scalar twin): the chunk is
// gathered element by element with guards - any M, N, K >= 1 and any alignment.
#include "tc_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int WM, int WN, int VEC, int OUT_F32>
__device__ __forceinline__ void mma_sync_bf16(int M, int N, int K, float alpha,
                                              const tc::bf16* __restrict__ A,
                                              const tc::bf16* __restrict__ B, float beta,
                                              void* __restrict__ C) {
    using namespace tc;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warp tiles");
    static_assert(BK == 32 || BK % 64 == 0, "A rows must be 4 or 8k chunks (swizzle)");
    static_assert(BN % 64 == 0, "B rows must be 8k chunks (swizzle)");
    constexpr int WARPS_N = BN / WN;
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int MI = WM / 16, NI = WN / 8;
    constexpr int ACH = BK / 8, BCH = BN / 8;  // 16-byte chunks per shared row
    static_assert((BM * ACH) % NT == 0 && (BK * BCH) % NT == 0, "whole chunks per thread");
    __shared__ __align__(128) bf16 As[BM * BK];
    __shared__ __align__(128) bf16 Bs[BK * BN];

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const unsigned as = smem_addr(As), bs = smem_addr(Bs);

    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // global -> shared: 8 consecutive bf16 (one chunk) at a time, stored swizzled.
#pragma unroll
        for (int t = 0; t < BM * ACH / NT; ++t) {
            const int i = tid + t * NT, r = i / ACH, c = i % ACH;
            const uint4 v = load_chunk<VEC>(A, row0 + r, k0 + c * 8, M, K);
            *reinterpret_cast<uint4*>(&As[r * BK + swz_chunk<ACH>(r, c) * 8]) = v;
        }
#pragma unroll
        for (int t = 0; t < BK * BCH / NT; ++t) {
            const int i = tid + t * NT, r = i / BCH, c = i % BCH;
            const uint4 v = load_chunk<VEC>(B, k0 + r, col0 + c * 8, K, N);
            *reinterpret_cast<uint4*>(&Bs[r * BN + swz_chunk<BCH>(r, c) * 8]) = v;
        }
        __syncthreads();
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
        __syncthreads();
    }

    const int g = lane / 4, q2 = (lane % 4) * 2;
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const int r = row0 + wm * WM + i * 16 + g, c = col0 + wn * WN + j * 8 + q2;
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // h = 0: row r, h = 1: row r + 8
                const int rr = r + h * 8;
                if (rr < M) {
                    if (c < N) store_out<OUT_F32>(C, rr * N + c, acc[i][j][2 * h], alpha, beta);
                    if (c + 1 < N)
                        store_out<OUT_F32>(C, rr * N + c + 1, acc[i][j][2 * h + 1], alpha, beta);
                }
            }
        }
    }
}

}  // namespace gemmlab
