// Split-K across a thread-block cluster (sm_90): the blocks of a cluster (grid.y, cluster dims
// (1, KS, 1)) each hold a partial sum of the same outputs in shared memory, and add them through
// distributed shared memory in rank order (deterministic, one launch, no workspace), four columns
// per 16-byte load: the decode kernels (decode_tc.cu) and the swapped-operand wgmma decode kernel
// (decode_wgmma.cu), where loads of one float had cost ~3 us at 128 tokens
// (docs/results/tc-swap-epilogue-2026-11-27/).
#pragma once
#include "tc_common.cuh"

namespace gemmlab {

// Four consecutive floats (16-byte aligned) at `addr` of CTA `rank` of this cluster.
__device__ __forceinline__ float4 ld_dsmem_f32x4(unsigned addr, unsigned rank) {
    float4 v;
    asm volatile(
        "{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %4, %5;\n"
        "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [ra]; }"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr), "r"(rank) : "memory");
    return v;
}

// The KS partial sums of rows x cols outputs (columns n_base .. of C, rows the tokens) to C. red
// holds this block's sums, row-major with a pitch of `ld` floats (cols % 4 == 0, ld % 4 == 0,
// 16-byte aligned), written by this block's threads before the call. Each block takes a
// contiguous KS-th of the float4s - a warp covers whole 128-byte runs of C - loads the KS
// partials of four columns with one 16-byte load per rank, adds them in rank order and stores
// four bf16 at once where C's row pitch and base allow (N % 4 == 0, 8-byte aligned C; else one at
// a time); then waits until no block reads its shared memory any more. KS = 1: a block barrier
// and the block's own shared memory, no cluster barrier.
template <int KS>
__device__ __forceinline__ void cluster_reduce(const float* red, int rows, int cols, int ld, int M,
                                               int N, int n_base, float alpha, float beta,
                                               tc::bf16* __restrict__ C) {
    if constexpr (KS == 1) __syncthreads();
    else tc::cluster_sync();
    const unsigned base = tc::smem_addr(red);
    const int per_row = cols / 4, total = rows * per_row;
    const int i0 = total * static_cast<int>(blockIdx.y) / KS;
    const int i1 = total * (static_cast<int>(blockIdx.y) + 1) / KS;
    const bool vec = (N % 4 == 0) && (reinterpret_cast<unsigned long long>(C) % 8 == 0);
    for (int i = i0 + threadIdx.x; i < i1; i += blockDim.x) {
        const int tok = i / per_row, n = n_base + 4 * (i % per_row);
        if (tok >= M || n >= N) continue;
        const int off = tok * ld + 4 * (i % per_row);
        float4 part[KS];
        if constexpr (KS == 1) {
            part[0] = *reinterpret_cast<const float4*>(red + off);
        } else {
#pragma unroll
            for (int rk = 0; rk < KS; ++rk) part[rk] = ld_dsmem_f32x4(base + 4u * off, rk);
        }
        float s[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int rk = 0; rk < KS; ++rk) {
            s[0] += part[rk].x;
            s[1] += part[rk].y;
            s[2] += part[rk].z;
            s[3] += part[rk].w;
        }
        tc::bf16* c = C + static_cast<long long>(tok) * N + n;
        if (vec && n + 3 < N) {
            unsigned long long* c8 = reinterpret_cast<unsigned long long*>(c);
            unsigned long long old = beta == 0.0f ? 0ull : *c8, out = 0ull;
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float v = alpha * s[e];
                if (beta != 0.0f)
                    v += beta * tc::bf16_to_f32(static_cast<tc::bf16>((old >> (16 * e)) & 0xFFFFu));
                out |= static_cast<unsigned long long>(tc::f32_to_bf16(v)) << (16 * e);
            }
            *c8 = out;
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
                if (n + e < N) tc::store_out<0>(c, e, s[e], alpha, beta);
        }
    }
    if constexpr (KS > 1) tc::cluster_sync();
}

}  // namespace gemmlab
