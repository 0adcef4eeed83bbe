// Rung 2: coalesced -- same work as rung 1, threadIdx.x now walks the COLUMNS of C.
//
// Consecutive lanes read consecutive elements of a row of B and write consecutive elements of
// a row of C (one 64-byte run per half-warp), and all lanes of a half-warp share one element of
// A (a broadcast). Same arithmetic, far fewer memory transactions.
#include "gemm_common.cuh"

namespace gemmlab {

template <int BX, int BY>
__device__ __forceinline__ void coalesced(int M, int N, int K, float alpha,
                                          const float* __restrict__ A,
                                          const float* __restrict__ B, float beta,
                                          float* __restrict__ C) {
    const int row = blockIdx.y * BY + threadIdx.y;
    const int col = blockIdx.x * BX + threadIdx.x;  // x -> columns: contiguous in row-major
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    store_c(C, row * N + col, acc, alpha, beta);
}

}  // namespace gemmlab
