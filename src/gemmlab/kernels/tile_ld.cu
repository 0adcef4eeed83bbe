// The tile kernel of the shape-dispatching rung (issue #12): double_buffered's pipelined warp
// tiles with explicit leading dimensions, one K-slice per blockIdx.z.
//
// Launched by gemmlab.runtime.dispatch in three ways:
//   plain:   gridDim.z = 1, kc = K, lda = K, ldb = ldc = N           (C = alpha A B + beta C)
//   padded:  A and/or B are zero-padded copies (lda = K rounded up to 4, ldb = N rounded up to 4),
//            so VEC = 1 runs for any K and N; C is written in place with ldc = N (VEC_C = 0 when N
//            is not a multiple of 4: 4-byte stores at the right edge).
//   split-K: gridDim.z = S slices of kc rows of K (kc a multiple of BK, so a 16-byte chunk of A
//            never straddles two slices), slice z writes its raw partial product (alpha = 1,
//            beta = 0) to C + z * c_stride, an FP32 workspace; splitk_reduce (dispatch_helpers.cu)
//            then sums the slices in order and applies alpha and beta.
#include "double_buffered.cu"

namespace gemmlab {

template <int BM, int BN, int BK, int WM, int WN, int WNITER, int TM, int TN, int NT, int STAGES,
          int GROUP, int VEC, int VEC_C>
__device__ __forceinline__ void tile_ld(int M, int N, int K, int lda, int ldb, int ldc, int kc,
                                        long long c_stride, float alpha,
                                        const float* __restrict__ A, const float* __restrict__ B,
                                        float beta, float* __restrict__ C) {
    const int k0 = int(blockIdx.z) * kc;
    const int kz = min(kc, K - k0);  // >= 1: the launcher makes every slice non-empty
    double_buffered_ld<BM, BN, BK, WM, WN, WNITER, TM, TN, NT, STAGES, GROUP, VEC, VEC_C>(
        M, N, kz, lda, ldb, ldc, alpha, A + k0, B + (long long)k0 * ldb, beta,
        C + (long long)blockIdx.z * c_stride);
}

}  // namespace gemmlab
