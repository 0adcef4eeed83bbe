// BF16 tensor-core rung 1: WMMA.
//
// The portable starting point of the tensor-core ladder. Each block computes a BM x BN tile of
// C; tiles of A (BM x BK) and B (BK x BN) are staged through shared memory (element by element,
// guarded, zero-filled past the matrix edges) and each warp multiplies its WM x WN sub-tile with
// m16n16k16 WMMA fragments (bf16 in, f32 accumulate). The accumulators go through a shared f32
// tile so the epilogue (alpha, beta, rounding to bf16) is a plain guarded loop: any M, N, K >= 1.
//
// The WMMA instructions are written as inline PTX (tc_common.cuh) - the same wmma.load /
// wmma.mma / wmma.store that nvcuda::wmma::load_matrix_sync / mma_sync / store_matrix_sync
// compile to - because NVRTC compiles these sources without CUDA headers (no <mma.h>).
// Shared rows are padded by 8 bf16 (16 bytes) so the fragment loads spread over the banks.
#include "tc_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int WM, int WN, int OUT_F32>
__device__ __forceinline__ void wmma_bf16(int M, int N, int K, float alpha,
                                          const tc::bf16* __restrict__ A,
                                          const tc::bf16* __restrict__ B, float beta,
                                          void* __restrict__ C) {
    using namespace tc;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0,
                  "wmma_bf16: tiles must be multiples of the 16x16x16 fragment");
    constexpr int WARPS_N = BN / WN;
    constexpr int NT = (BM / WM) * (BN / WN) * 32;
    constexpr int FM = WM / 16, FN = WN / 16;
    constexpr int LDA = BK + 8, LDB = BN + 8, LDC = BN + 4;  // padded leading dimensions
    __shared__ __align__(128) bf16 As[BM * LDA];
    __shared__ __align__(128) bf16 Bs[BK * LDB];
    __shared__ __align__(128) float Cs[BM * LDC];

    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    WmmaC acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[i][j].x[e] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += NT) {
            const int r = i / BK, c = i % BK, gr = row0 + r, gc = k0 + c;
            As[r * LDA + c] = (gr < M && gc < K) ? A[gr * K + gc] : bf16(0);
        }
        for (int i = tid; i < BK * BN; i += NT) {
            const int r = i / BN, c = i % BN, gr = k0 + r, gc = col0 + c;
            Bs[r * LDB + c] = (gr < K && gc < N) ? B[gr * N + gc] : bf16(0);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            WmmaA a[FM];
            WmmaB b[FN];
#pragma unroll
            for (int i = 0; i < FM; ++i) wmma_load_a(a[i], &As[(wm * WM + i * 16) * LDA + kk], LDA);
#pragma unroll
            for (int j = 0; j < FN; ++j) wmma_load_b(b[j], &Bs[kk * LDB + wn * WN + j * 16], LDB);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j) wmma_mma(acc[i][j], a[i], b[j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
            wmma_store(&Cs[(wm * WM + i * 16) * LDC + wn * WN + j * 16], acc[i][j], LDC);
    __syncthreads();
    for (int i = tid; i < BM * BN; i += NT) {
        const int r = i / BN, c = i % BN, gr = row0 + r, gc = col0 + c;
        if (gr < M && gc < N) store_out<OUT_F32>(C, gr * N + gc, Cs[r * LDC + c], alpha, beta);
    }
}

}  // namespace gemmlab
