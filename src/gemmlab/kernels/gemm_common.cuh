// Helpers shared by every rung of the gemmlab SGEMM ladder.
//
// Conventions for every kernel in this directory:
//   C = alpha * A * B + beta * C, all row-major float32; A is M x K, B is K x N, C is M x N.
//   Any M, N, K >= 1: every global load and store is guarded, and out-of-range elements of a
//   shared-memory tile are filled with zeros so they add nothing to the dot products.
//   beta == 0 follows BLAS: C is not read (a NaN already in C does not leak into the result).
//   Index arithmetic is 32-bit; the launcher refuses shapes with more than 2^31 - 1 elements.
// No CUDA headers are included: NVRTC compiles these sources as they are.
#pragma once
#include "block_order.cuh"

namespace gemmlab {

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }

// One element of the epilogue: alpha * acc + beta * C (C untouched when beta == 0).
__device__ __forceinline__ void store_c(float* __restrict__ C, int idx, float acc, float alpha,
                                        float beta) {
    C[idx] = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * C[idx];
}

// Four consecutive elements with one 16-byte load and one 16-byte store (C + idx 16-byte aligned).
__device__ __forceinline__ void store_c4(float* __restrict__ C, int idx, float4 acc, float alpha,
                                         float beta) {
    float4* p = reinterpret_cast<float4*>(C + idx);
    float4 out;
    if (beta == 0.0f) {
        out = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    } else {
        const float4 c = *p;
        out = make_float4(alpha * acc.x + beta * c.x, alpha * acc.y + beta * c.y,
                          alpha * acc.z + beta * c.z, alpha * acc.w + beta * c.w);
    }
    *p = out;
}

// Four consecutive elements starting at column `col` of a row, each guarded by `col + e < N`.
__device__ __forceinline__ void store_c4_guarded(float* __restrict__ C, int idx, int col, int N,
                                                 float4 acc, float alpha, float beta) {
    if (col + 0 < N) store_c(C, idx + 0, acc.x, alpha, beta);
    if (col + 1 < N) store_c(C, idx + 1, acc.y, alpha, beta);
    if (col + 2 < N) store_c(C, idx + 2, acc.z, alpha, beta);
    if (col + 3 < N) store_c(C, idx + 3, acc.w, alpha, beta);
}

// 16-byte load of A[row, col..col+3] or B[row, col..col+3]; zeros where out of range.
// VEC: the caller guarantees ld % 4 == 0 and a 16-byte aligned base, so the four elements are
// either all in range or all out of range (col is a multiple of 4). Scalar path otherwise.
template <int VEC>
__device__ __forceinline__ float4 load4_guarded(const float* __restrict__ p, int row, int col,
                                                int rows, int cols, int ld) {
    if constexpr (VEC) {
        if (row < rows && col < cols) {
            return *reinterpret_cast<const float4*>(p + row * ld + col);
        }
        return make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (row < rows) {
            const float* q = p + row * ld;
            if (col + 0 < cols) v.x = q[col + 0];
            if (col + 1 < cols) v.y = q[col + 1];
            if (col + 2 < cols) v.z = q[col + 2];
            if (col + 3 < cols) v.w = q[col + 3];
        }
        return v;
    }
}

__device__ __forceinline__ float4 lds4(const float* p) {
    return *reinterpret_cast<const float4*>(p);
}

__device__ __forceinline__ void sts4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }

__device__ __forceinline__ float get(const float4& v, int i) {
    // i is always a compile-time constant after unrolling, so this folds to one register.
    return i == 0 ? v.x : (i == 1 ? v.y : (i == 2 ? v.z : v.w));
}

}  // namespace gemmlab
