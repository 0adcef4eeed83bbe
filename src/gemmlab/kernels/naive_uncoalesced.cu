// Rung 1: naive_uncoalesced -- the first seed article's bad kernel.
//
// One thread per element of C, no reuse. threadIdx.x walks the ROWS of C, so the 16 lanes of a
// half-warp read 16 different rows of A (addresses K floats apart: one 32-byte sector per lane)
// and write 16 different rows of C. Only B's reads are shared (2 distinct addresses per warp).
#include "gemm_common.cuh"

namespace gemmlab {

template <int BX, int BY>
__device__ __forceinline__ void naive_uncoalesced(int M, int N, int K, float alpha,
                                                  const float* __restrict__ A,
                                                  const float* __restrict__ B, float beta,
                                                  float* __restrict__ C) {
    const int row = blockIdx.x * BX + threadIdx.x;  // x -> rows: the mistake this rung shows
    const int col = blockIdx.y * BY + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}

}  // namespace gemmlab
