// Split-K across a thread-block cluster (sm_90): the blocks of a cluster (grid.y, cluster dims
// (1, KS, 1)) each hold a partial sum of the same outputs in shared memory, and add them through
// distributed shared memory in rank order (deterministic, one launch, no workspace):
// cluster_reduce one float at a time (the decode kernels, decode_tc.cu), cluster_reduce_x4 four
// columns per 16-byte load (the swapped-operand wgmma decode kernel, decode_wgmma.cu, where the
// scalar loads had cost ~3 us at 128 tokens: docs/results/tc-swap-epilogue-2026-11-27/).
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

// Four consecutive floats (16-byte aligned) at `addr` of CTA `rank` of this cluster.
__device__ __forceinline__ float4 ld_dsmem_f32x4(unsigned addr, unsigned rank) {
    float4 v;
    asm volatile(
        "{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %4, %5;\n"
        "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [ra]; }"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr), "r"(rank) : "memory");
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

// cluster_reduce four columns at a time (the swapped decode kernel, whose strips are 64 columns
// wide): red holds rows x cols floats with a row pitch of `ld` floats (cols % 4 == 0, ld % 4 ==
// 0, 16-byte aligned). Each block takes a contiguous KS-th of the float4s - a warp covers whole
// 128-byte runs of C - loads the KS partials of four columns with one 16-byte load per rank,
// adds them in rank order (the same sums as cluster_reduce) and stores four bf16 at once where C's
// row pitch and base allow (N % 4 == 0, 8-byte aligned C; else one at a time).
template <int KS>
__device__ __forceinline__ void cluster_reduce_x4(const float* red, int rows, int cols, int ld,
                                                  int M, int N, int n_base, float alpha, float beta,
                                                  tc::bf16* __restrict__ C) {
    tc::cluster_sync();
    const unsigned base = tc::smem_addr(red);
    const int per_row = cols / 4, total = rows * per_row;
    const int i0 = total * static_cast<int>(blockIdx.y) / KS;
    const int i1 = total * (static_cast<int>(blockIdx.y) + 1) / KS;
    const bool vec = (N % 4 == 0) && (reinterpret_cast<unsigned long long>(C) % 8 == 0);
    for (int i = i0 + threadIdx.x; i < i1; i += blockDim.x) {
        const int tok = i / per_row, n = n_base + 4 * (i % per_row);
        if (tok >= M || n >= N) continue;
        const unsigned addr = base + 4u * (tok * ld + 4 * (i % per_row));
        float4 part[KS];
#pragma unroll
        for (int rk = 0; rk < KS; ++rk) part[rk] = ld_dsmem_f32x4(addr, rk);
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
    tc::cluster_sync();
}

}  // namespace gemmlab
