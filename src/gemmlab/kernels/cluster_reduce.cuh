// Split-K across a thread-block cluster (sm_90): the blocks of a cluster (grid.y, cluster dims
// (1, KS, 1)) each hold a partial sum of the same outputs in shared memory, and add them through
// distributed shared memory in rank order (deterministic, one launch, no workspace). Used by the
// decode kernels (decode_tc.cu) and the swapped-operand wgmma decode kernel (decode_wgmma.cu).
#pragma once
#include "tc_common.cuh"

namespace gemmlab {

// A float at shared-memory address `addr` of CTA `rank` of this cluster (mapa + ld.shared::cluster).
__device__ __forceinline__ float ld_dsmem_f32(unsigned addr, unsigned rank) {
    float v;
    asm volatile(
        "{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %1, %2;\n"
        "ld.shared::cluster.f32 %0, [ra]; }" : "=f"(v) : "r"(addr), "r"(rank) : "memory");
    return v;
}

// A cluster of KS blocks (grid.y) shares one strip's K: each block's sum over its warps lies in
// red (rows x cols floats, row-major: token, then column of the strip). Every block adds the KS
// partial sums of its share of the strip's outputs in rank order (deterministic) and stores them,
// then waits until no one reads its shared memory any more.
template <int KS>
__device__ __forceinline__ void cluster_reduce(const float* red, int rows, int cols, int M, int N,
                                               int n_base, float alpha, float beta,
                                               tc::bf16* __restrict__ C) {
    tc::cluster_sync();
    const unsigned base = tc::smem_addr(red);
    for (int i = blockIdx.y + KS * threadIdx.x; i < rows * cols; i += KS * blockDim.x) {
        const int tok = i / cols, n = n_base + i % cols;
        if (tok >= M || n >= N) continue;
        float sum = 0.0f;
#pragma unroll
        for (int rk = 0; rk < KS; ++rk) sum += ld_dsmem_f32(base + 4u * i, rk);
        tc::store_out<0>(C, tok * N + n, sum, alpha, beta);
    }
    tc::cluster_sync();
}

}  // namespace gemmlab
