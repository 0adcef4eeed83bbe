// Rung 6: vectorized -- 16-byte (float4) global loads and stores; A transposed into shared memory.
//
// blocktile_2d issued one 4-byte load per element. Here each global load and store of C moves
// four floats, and A's tile is written transposed (As[k][m]) so that a thread's TM values of A
// for one k are contiguous and come out of shared memory as two 16-byte loads, like B's.
// The 16-byte global path needs K % 4 == 0, N % 4 == 0 and 16-byte aligned A, B, C; the
// launcher checks that and otherwise picks VEC = 0, the same kernel with 4-byte global accesses.
// Shared-memory layout and thread mapping are the tutorial's (siboehm kernel 6); their bank
// conflicts are left in on purpose: rung 7 removes them.
#include "gemm_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int TM, int TN, int VEC>
__device__ __forceinline__ void vectorized(int M, int N, int K, float alpha,
                                           const float* __restrict__ A,
                                           const float* __restrict__ B, float beta,
                                           float* __restrict__ C) {
    constexpr int NT = (BM / TM) * (BN / TN);
    static_assert(BK % 4 == 0 && BN % 4 == 0 && TM % 4 == 0 && TN % 4 == 0, "float4 tiling");
    static_assert((BM * BK / 4) % NT == 0 && (BK * BN / 4) % NT == 0, "whole float4 loads");
    __shared__ __align__(16) float As[BK * BM];  // transposed: As[k * BM + m]
    __shared__ __align__(16) float Bs[BK * BN];

    const int tid = threadIdx.x;
    const int tCol = tid % (BN / TN);
    const int tRow = tid / (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {};
    float regM[TM];
    float regN[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int j = 0; j < BM * BK / 4 / NT; ++j) {
            const int i = tid + j * NT;
            const int r = i / (BK / 4), c = (i % (BK / 4)) * 4;
            const float4 v = load4_guarded<VEC>(A, row0 + r, k0 + c, M, K, K);
            As[(c + 0) * BM + r] = v.x;
            As[(c + 1) * BM + r] = v.y;
            As[(c + 2) * BM + r] = v.z;
            As[(c + 3) * BM + r] = v.w;
        }
#pragma unroll
        for (int j = 0; j < BK * BN / 4 / NT; ++j) {
            const int i = tid + j * NT;
            const int r = i / (BN / 4), c = (i % (BN / 4)) * 4;
            sts4(&Bs[r * BN + c], load4_guarded<VEC>(B, k0 + r, col0 + c, K, N, N));
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int m = 0; m < TM; m += 4) {
                const float4 a = lds4(&As[k * BM + tRow * TM + m]);
                regM[m] = a.x; regM[m + 1] = a.y; regM[m + 2] = a.z; regM[m + 3] = a.w;
            }
#pragma unroll
            for (int n = 0; n < TN; n += 4) {
                const float4 b = lds4(&Bs[k * BN + tCol * TN + n]);
                regN[n] = b.x; regN[n + 1] = b.y; regN[n + 2] = b.z; regN[n + 3] = b.w;
            }
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] += regM[m] * regN[n];
        }
        __syncthreads();
    }

#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int row = row0 + tRow * TM + m;
        if (row >= M) continue;
#pragma unroll
        for (int n = 0; n < TN; n += 4) {
            const int col = col0 + tCol * TN + n;
            const float4 v = make_float4(acc[m][n], acc[m][n + 1], acc[m][n + 2], acc[m][n + 3]);
            if constexpr (VEC) {
                if (col < N) store_c4(C, row * N + col, v, alpha, beta);
            } else {
                store_c4_guarded(C, row * N + col, col, N, v, alpha, beta);
            }
        }
    }
}

}  // namespace gemmlab
