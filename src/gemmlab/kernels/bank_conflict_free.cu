// Rung 7: bank_conflict_free -- rung 6 with its two shared-memory bank conflicts removed.
//
// 1. Stores of A's transposed tile. In rung 6 the two lanes that load the two halves of one row
//    of A store to As[k][m] at addresses BM floats apart, i.e. the same bank (BM % 32 == 0):
//    2-way conflicts. Padding each row of As to BM + 4 floats shifts the second half by 16 banks,
//    and the load mapping is fixed at 16 rows x 2 float4 per warp so that the 32 lanes of every
//    store hit 32 different banks.
// 2. 16-byte loads of B's tile. In rung 6 a thread's TN = 8 columns are contiguous, so the 8 lanes
//    of a quarter-warp read 16-byte pieces 32 bytes apart: 2-way conflicts. Here a thread owns two
//    groups of 4 columns, BN / 2 apart, so a quarter-warp reads 128 contiguous bytes.
// Side effect: stores of C are now 256 contiguous bytes per half-warp instead of 16-byte pieces
// 32 bytes apart.
#include "gemm_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int TM, int TN, int VEC>
__device__ __forceinline__ void bank_conflict_free(int M, int N, int K, float alpha,
                                                   const float* __restrict__ A,
                                                   const float* __restrict__ B, float beta,
                                                   float* __restrict__ C) {
    constexpr int NT = (BM / TM) * (BN / TN);
    constexpr int BMP = BM + 4;          // padded row of the transposed A tile
    constexpr int NG = TN / 4;           // groups of 4 columns per thread
    constexpr int GSTRIDE = BN / NG;     // distance between a thread's column groups
    static_assert(BM % 32 == 0 && BK % 8 == 0 && TN % 4 == 0 && TM % 4 == 0, "tiling");
    static_assert((BM * BK / 4) % NT == 0 && (BK * BN / 4) % NT == 0 && NT % 32 == 0, "loads");
    __shared__ __align__(16) float As[BK * BMP];
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
            // A warp loads 16 rows x 2 float4: one full 32-byte sector per row, 32 store banks.
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
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int m = 0; m < TM; m += 4) {
                const float4 a = lds4(&As[k * BMP + tRow * TM + m]);
                regM[m] = a.x; regM[m + 1] = a.y; regM[m + 2] = a.z; regM[m + 3] = a.w;
            }
#pragma unroll
            for (int g = 0; g < NG; ++g) {
                const float4 b = lds4(&Bs[k * BN + g * GSTRIDE + tCol * 4]);
                regN[4 * g] = b.x; regN[4 * g + 1] = b.y; regN[4 * g + 2] = b.z;
                regN[4 * g + 3] = b.w;
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
        for (int g = 0; g < NG; ++g) {
            const int col = col0 + g * GSTRIDE + tCol * 4;
            const float4 v = make_float4(acc[m][4 * g], acc[m][4 * g + 1], acc[m][4 * g + 2],
                                         acc[m][4 * g + 3]);
            if constexpr (VEC) {
                if (col < N) store_c4(C, row * N + col, v, alpha, beta);
            } else {
                store_c4_guarded(C, row * N + col, col, N, v, alpha, beta);
            }
        }
    }
}

}  // namespace gemmlab
