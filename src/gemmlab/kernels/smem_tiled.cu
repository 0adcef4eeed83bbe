// Rung 3: smem_tiled -- the block stages a BY x BK tile of A and a BK x BX tile of B in shared
// memory, and each thread computes one element of C from the staged tiles.
//
// Each element fetched from global memory is now reused BX (A) or BY (B) times from shared
// memory instead of being re-read from L2/DRAM. The first seed article's variants are template
// parameters:
//   BX x BY     block shape (= the C tile); BK the K-depth of a tile step;
//   EXTRA_SYNC  1: a __syncthreads() after every multiply-add (the article's "extra barriers");
//               0: only the two barriers a tile step needs (after the loads, before the reuse);
//   UNROLL      1: the inner loop over the tile is fully unrolled;
//               0: `#pragma unroll 1` keeps it a loop, so the loop overhead is really there.
#include "gemm_common.cuh"

namespace gemmlab {

template <int BX, int BY, int BK, int EXTRA_SYNC, int UNROLL>
__device__ __forceinline__ void smem_tiled(int M, int N, int K, float alpha,
                                           const float* __restrict__ A,
                                           const float* __restrict__ B, float beta,
                                           float* __restrict__ C) {
    constexpr int NT = BX * BY;
    __shared__ float As[BY][BK];
    __shared__ float Bs[BK][BX];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * BX + tx;
    const int row0 = blockIdx.y * BY, col0 = blockIdx.x * BX;
    float acc = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Cooperative, guarded loads; zeros outside the matrices.
#pragma unroll
        for (int j = 0; j < cdiv(BY * BK, NT); ++j) {
            const int i = tid + j * NT;
            if ((BY * BK) % NT == 0 || i < BY * BK) {
                const int r = i / BK, c = i % BK;
                const int gr = row0 + r, gc = k0 + c;
                As[r][c] = (gr < M && gc < K) ? A[gr * K + gc] : 0.0f;
            }
        }
#pragma unroll
        for (int j = 0; j < cdiv(BK * BX, NT); ++j) {
            const int i = tid + j * NT;
            if ((BK * BX) % NT == 0 || i < BK * BX) {
                const int r = i / BX, c = i % BX;
                const int gr = k0 + r, gc = col0 + c;
                Bs[r][c] = (gr < K && gc < N) ? B[gr * N + gc] : 0.0f;
            }
        }
        __syncthreads();  // the tiles are complete before anyone reads them

        if constexpr (UNROLL) {
#pragma unroll
            for (int k = 0; k < BK; ++k) {
                acc += As[ty][k] * Bs[k][tx];
                if constexpr (EXTRA_SYNC) __syncthreads();
            }
        } else {
#pragma unroll 1
            for (int k = 0; k < BK; ++k) {
                acc += As[ty][k] * Bs[k][tx];
                if constexpr (EXTRA_SYNC) __syncthreads();
            }
        }
        __syncthreads();  // everyone is done reading before the next step overwrites the tiles
    }

    const int row = row0 + ty, col = col0 + tx;
    if (row < M && col < N) store_c(C, row * N + col, acc, alpha, beta);
}

}  // namespace gemmlab
