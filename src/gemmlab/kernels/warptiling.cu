// Rung 8: warptiling -- a level of tiling between the block and the thread: the warp.
//
// Each warp owns a WM x WN (64 x 64) piece of the block's 128 x 128 tile and walks it in
// WNITER sub-tiles; a lane computes WMITER * TM x WNITER * TN = 8 x 16 elements. Fewer threads
// (128) each doing more work means more independent FMAs per shared-memory load (6 x 16-byte
// loads per 128 FMAs), and a warp's shared-memory reads stay within one small, conflict-free
// region. BK = 16 halves the barriers per FMA compared with rung 7's BK = 8.
// Global loads are rung 7's (float4, A transposed into a padded tile, bank-conflict free).
#include "warptile.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NT, int VEC>
__device__ __forceinline__ void warptiling(int M, int N, int K, float alpha,
                                           const float* __restrict__ A,
                                           const float* __restrict__ B, float beta,
                                           float* __restrict__ C) {
    using WT = WarpTile<BM, BN, BK, WM, WN, WNITER, TM, TN, NT>;
    constexpr int BMP = WT::BMP;
    static_assert(BK % 8 == 0 && (BM * BK / 4) % NT == 0 && (BK * BN / 4) % NT == 0, "loads");
    __shared__ __align__(16) float As[BK * BMP];
    __shared__ __align__(16) float Bs[BK * BN];

    const WT wt;
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[WT::WMITER * TM][WNITER * TN] = {};

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int j = 0; j < BM * BK / 4 / NT; ++j) {
            // 16 rows x 2 float4 per warp: full sectors from global, 32 distinct store banks.
            const int i = tid + j * NT;
            const int lane = i % 32, grp = i / 32;
            const int r = (grp % (BM / 16)) * 16 + lane % 16;
            const int c = (2 * (grp / (BM / 16)) + lane / 16) * 4;
            const float4 v = load4_guarded<VEC>(A, row0 + r, k0 + c, M, K, K);
            As[(c + 0) * BMP + r] = v.x;
            As[(c + 1) * BMP + r] = v.y;
            As[(c + 2) * BMP + r] = v.z;
            As[(c + 3) * BMP + r] = v.w;
        }
#pragma unroll
        for (int j = 0; j < BK * BN / 4 / NT; ++j) {
            const int i = tid + j * NT;
            const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
            sts4(&Bs[r * BN + c], load4_guarded<VEC>(B, k0 + r, col0 + c, K, N, N));
        }
        __syncthreads();
        wt.compute(As, Bs, acc);
        __syncthreads();
    }
    wt.template store<VEC>(C, M, N, row0, col0, alpha, beta, acc);
}

}  // namespace gemmlab
