// Rung 4: blocktile_1d -- each thread computes TM elements of one column of C.
//
// In smem_tiled every multiply-add needed two shared-memory loads. Here a thread loads one
// element of B's tile into a register and reuses it for TM multiply-adds against TM elements of
// A's tile, so shared-memory traffic per FMA drops by almost half and the block covers a
// BM x BN = 64 x 64 tile with BM * BN / TM threads.
#include "gemm_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int TM>
__device__ __forceinline__ void blocktile_1d(int M, int N, int K, float alpha,
                                             const float* __restrict__ A,
                                             const float* __restrict__ B, float beta,
                                             float* __restrict__ C) {
    constexpr int NT = BM * BN / TM;
    static_assert(BM % TM == 0, "TM must divide BM");
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];

    const int tid = threadIdx.x;
    const int tCol = tid % BN;  // this thread's column of the C tile
    const int tRow = tid / BN;  // and its group of TM rows
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM] = {};

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int j = 0; j < cdiv(BM * BK, NT); ++j) {
            const int i = tid + j * NT;
            if ((BM * BK) % NT == 0 || i < BM * BK) {
                const int r = i / BK, c = i % BK;
                const int gr = row0 + r, gc = k0 + c;
                As[i] = (gr < M && gc < K) ? A[gr * K + gc] : 0.0f;
            }
        }
#pragma unroll
        for (int j = 0; j < cdiv(BK * BN, NT); ++j) {
            const int i = tid + j * NT;
            if ((BK * BN) % NT == 0 || i < BK * BN) {
                const int r = i / BN, c = i % BN;
                const int gr = k0 + r, gc = col0 + c;
                Bs[i] = (gr < K && gc < N) ? B[gr * N + gc] : 0.0f;
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k * BN + tCol];  // one shared load, reused TM times
#pragma unroll
            for (int m = 0; m < TM; ++m) acc[m] += As[(tRow * TM + m) * BK + k] * b;
        }
        __syncthreads();
    }

    const int col = col0 + tCol;
    if (col < N) {
#pragma unroll
        for (int m = 0; m < TM; ++m) {
            const int row = row0 + tRow * TM + m;
            if (row < M) store_c(C, row * N + col, acc[m], alpha, beta);
        }
    }
}

}  // namespace gemmlab
