// The two small kernels around the shape-dispatching rung's main kernels (issue #12).
//
// pad2: zero-padded, 16-byte aligned copies of A and/or B in one launch, so the 16-byte tile kernel
//   runs at shapes whose K or N is not a multiple of 4 (or whose pointers are not 16-byte aligned).
//   A (rows x cols, row pitch cols) becomes rows x ld with ld = cols rounded up to 4; columns
//   cols .. ld-1 are written as 0. Blocks 0 .. blocks_a-1 copy A, the rest copy B. One thread writes
//   one 16-byte chunk of the copy (4 loads from consecutive addresses: a warp's loads cover 512
//   contiguous bytes). The copies are part of every call, so their cost is in the timed region.
//
// splitk_reduce<VEC>: C = alpha * (W_0 + W_1 + ... + W_{S-1}) + beta * C over count = M * N
//   elements, W_s = W + s * ws (ws a multiple of 4). Sums run in a fixed order, so the result is
//   deterministic: warp g of a block adds slices g, g + 8, g + 16, ... for 32 consecutive units (4
//   elements with VEC, 1 without), then warp 0 adds the 8 warps' sums in order. A unit of 4 needs a
//   16-byte aligned C (VEC = 1); the last count % 4 elements are added by block 0 one by one.
//   beta == 0: C is not read.
#include "gemm_common.cuh"

namespace gemmlab {

__device__ __forceinline__ void pad_rows(int rows, int cols, int ld, const float* __restrict__ src,
                                         float* __restrict__ dst, int first, int step) {
    const int per_row = ld / 4;  // 16-byte chunks per row of the copy
    const int chunks = rows * per_row;  // the launcher keeps rows * ld within 32 bits
    for (int q = first; q < chunks; q += step) {
        const int r = q / per_row, c = (q - r * per_row) * 4;
        const float* s = src + (long long)r * cols;
        float4 v;
        v.x = c + 0 < cols ? s[c + 0] : 0.f;
        v.y = c + 1 < cols ? s[c + 1] : 0.f;
        v.z = c + 2 < cols ? s[c + 2] : 0.f;
        v.w = c + 3 < cols ? s[c + 3] : 0.f;
        sts4(dst + (long long)r * ld + c, v);  // the copy is 16-byte aligned, ld % 4 == 0
    }
}

__device__ __forceinline__ void pad2(int rows_a, int cols_a, int ld_a,
                                     const float* __restrict__ A, float* __restrict__ Ap,
                                     int blocks_a, int rows_b, int cols_b, int ld_b,
                                     const float* __restrict__ B, float* __restrict__ Bp) {
    const int b = blockIdx.x;
    if (b < blocks_a) {
        pad_rows(rows_a, cols_a, ld_a, A, Ap, b * blockDim.x + threadIdx.x, blocks_a * blockDim.x);
    } else {
        pad_rows(rows_b, cols_b, ld_b, B, Bp, (b - blocks_a) * blockDim.x + threadIdx.x,
                 (gridDim.x - blocks_a) * blockDim.x);
    }
}

__device__ __forceinline__ float4 add4(float4 a, float4 b) {
    return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

template <int VEC>
__device__ __forceinline__ void splitk_reduce(int count, int S, long long ws, float alpha,
                                              const float* __restrict__ W, float beta,
                                              float* __restrict__ C) {
    constexpr int G = 8;  // warps per block: slice groups
    __shared__ __align__(16) float4 red[G][32];
    const int lane = threadIdx.x & 31, g = threadIdx.x >> 5;
    const int units = VEC ? count / 4 : count;
    const int u = blockIdx.x * 32 + lane;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    if (u < units) {
        for (int z = g; z < S; z += G) {
            if constexpr (VEC) {
                s = add4(s, lds4(W + z * ws + 4 * u));  // a generic 16-byte load (W is global)
            } else {
                s.x += W[z * ws + u];
            }
        }
    }
    red[g][lane] = s;
    __syncthreads();
    if (g == 0 && u < units) {
        float4 t = red[0][lane];
#pragma unroll
        for (int w = 1; w < G; ++w) t = add4(t, red[w][lane]);
        if constexpr (VEC) {
            store_c4(C, 4 * u, t, alpha, beta);
        } else {
            store_c(C, u, t.x, alpha, beta);
        }
    }
    if (VEC && blockIdx.x == 0 && threadIdx.x < count - 4 * units) {
        const int i = 4 * units + threadIdx.x;  // the last count % 4 elements
        float t = 0.f;
        for (int z = 0; z < S; ++z) t += W[z * ws + i];
        store_c(C, i, t, alpha, beta);
    }
}

}  // namespace gemmlab
