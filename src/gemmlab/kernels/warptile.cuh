// The warp-tile inner loop and epilogue shared by warptiling.cu and double_buffered.cu.
//
// Geometry: a block of NT threads computes a BM x BN tile of C; each warp a WM x WN piece of it,
// split into WMITER x WNITER sub-tiles of WSUBM x WSUBN; inside a sub-tile each lane computes
// TM x TN elements. A's tile is stored transposed (As[k * (BM + 4) + m]), B's as it is
// (Bs[k * BN + n]).
#pragma once
#include "gemm_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NT>
struct WarpTile {
    static constexpr int NWARPS = NT / 32;
    static constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
    static constexpr int WSUBM = WM / WMITER;
    static constexpr int WSUBN = WN / WNITER;
    static constexpr int BMP = BM + 4;  // padded row of the transposed A tile
    static_assert(NT % 32 == 0 && (BM / WM) * (BN / WN) == NWARPS, "one warp per warp tile");
    static_assert(WMITER >= 1 && WM % WMITER == 0 && WN % WNITER == 0, "warp sub-tiles");
    static_assert((WSUBM / TM) * (WSUBN / TN) == 32, "32 lanes per warp sub-tile");
    static_assert(TM % 4 == 0 && TN % 4 == 0 && BM % 32 == 0, "float4 fragments, padding");

    int warpRow, warpCol, tRowW, tColW;

    __device__ __forceinline__ WarpTile() {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        warpRow = warp / (BN / WN);
        warpCol = warp % (BN / WN);
        tRowW = lane / (WSUBN / TN);
        tColW = lane % (WSUBN / TN);
    }

    // acc += As^T(BK x BM slice) * Bs(BK x BN slice) for this lane's fragments.
    __device__ __forceinline__ void compute(const float* __restrict__ As,
                                            const float* __restrict__ Bs,
                                            float (&acc)[WMITER * TM][WNITER * TN]) const {
        float regM[WMITER * TM];
        float regN[WNITER * TN];
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                for (int m = 0; m < TM; m += 4) {
                    const float4 a =
                        lds4(&As[k * BMP + warpRow * WM + wm * WSUBM + tRowW * TM + m]);
                    regM[wm * TM + m + 0] = a.x;
                    regM[wm * TM + m + 1] = a.y;
                    regM[wm * TM + m + 2] = a.z;
                    regM[wm * TM + m + 3] = a.w;
                }
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int n = 0; n < TN; n += 4) {
                    const float4 b =
                        lds4(&Bs[k * BN + warpCol * WN + wn * WSUBN + tColW * TN + n]);
                    regN[wn * TN + n + 0] = b.x;
                    regN[wn * TN + n + 1] = b.y;
                    regN[wn * TN + n + 2] = b.z;
                    regN[wn * TN + n + 3] = b.w;
                }
#pragma unroll
            for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
                for (int n = 0; n < WNITER * TN; ++n) acc[m][n] += regM[m] * regN[n];
        }
    }

    // C = alpha * acc + beta * C for this lane's elements, guarded against M and N.
    template <int VEC>
    __device__ __forceinline__ void store(float* __restrict__ C, int M, int N, int row0,
                                          int col0, float alpha, float beta,
                                          const float (&acc)[WMITER * TM][WNITER * TN]) const {
        store_ld<VEC>(C, M, N, N, row0, col0, alpha, beta, acc);
    }

    // The same with C's row pitch ldc (elements) apart from its width N; VEC needs ldc % 4 == 0.
    template <int VEC>
    __device__ __forceinline__ void store_ld(float* __restrict__ C, int M, int N, int ldc,
                                             int row0, int col0, float alpha, float beta,
                                             const float (&acc)[WMITER * TM][WNITER * TN]) const {
#pragma unroll
        for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
            for (int m = 0; m < TM; ++m) {
                const int row = row0 + warpRow * WM + wm * WSUBM + tRowW * TM + m;
                if (row >= M) continue;
#pragma unroll
                for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                    for (int n = 0; n < TN; n += 4) {
                        const int col = col0 + warpCol * WN + wn * WSUBN + tColW * TN + n;
                        const float* a = &acc[wm * TM + m][wn * TN + n];
                        const float4 v = make_float4(a[0], a[1], a[2], a[3]);
                        if constexpr (VEC) {
                            if (col < N) store_c4(C, row * ldc + col, v, alpha, beta);
                        } else {
                            store_c4_guarded(C, row * ldc + col, col, N, v, alpha, beta);
                        }
                    }
            }
    }
};

}  // namespace gemmlab
