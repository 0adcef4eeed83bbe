// Skinny products (issue #12): M <= 16 or N <= 16, GEMV-like and memory-bound.
//
// With M <= 16 a 128-row tile is at least 87% empty, and the product does 2·M·N·K flops on
// 4·(M·K + K·N + M·N) bytes: about M/2 flop per byte, under the FP32 ridge point of any recent GPU
// (H100: 67 TFLOP/s over ~3 TB/s, 22 flop/B). The time is the time to read the large operand once,
// so these kernels are judged against the DRAM copy ceiling: stream the big matrix with coalesced
// (16-byte where alignment allows) loads, keep the small one in registers, L1 or shared memory.
//
// Both kernels use 256 threads (8 warps) and split K two ways: inside a block (warps or lanes walk
// different k) and, when the launcher asks (gridDim.y = S > 1), across blocks: block y covers
// k in [y * kc, y * kc + kc) and writes its raw partial sums to W + y * ws (the workspace), which
// splitk_reduce (dispatch_helpers.cu) sums in slice order and scales by alpha / beta. With S = 1 the
// kernel writes C itself. Every sum runs in a fixed order: results are deterministic.
//
//   skinny_m<MR, VEC>: C (M x N) = A (M x K, small) B (K x N, streamed). Block = 128 columns of C
//     (32 lanes x 4 columns) and MR rows; warp w reads rows k..k+3 of B for k = k0 + 4w + 32i, so
//     the 8 warps read 32 consecutive rows, 512 contiguous bytes each per instruction; the rows of A
//     are warp-uniform loads (L1 broadcasts). The 8 warps' partial sums meet in shared memory.
//     Grid: (ceil(N / 128), S, ceil(M / MR)).
//     VEC = 1: 16-byte loads of B and A; needs N % 4 == 0, K % 4 == 0, kc % 4 == 0, 16-byte aligned
//     A and B. VEC = 0: lane l takes columns l, l + 32, l + 64, l + 96 (each 4-byte load instruction
//     still reads 128 contiguous bytes), any alignment.
//   skinny_n<NR, VEC>: C (M x N) = A (M x K, streamed) B (K x N, small). Each warp owns 4 rows of A,
//     the block 32; lane l reads A[m][k .. k+3] for k = kb + 4l (+128): 512 contiguous bytes per
//     row per instruction. B's rows kb .. kb + 255 are staged in shared memory transposed (Bs[n][k],
//     row pitch 260 floats) so a lane reads its 4 values of column n with one conflict-free 16-byte
//     load; each staged value serves the block's 32 rows. Lanes' partial dot products are summed by
//     a butterfly reduce-scatter (62 shuffles for 64 values instead of 320).
//     Grid: (ceil(M / 32), S). NR >= N columns (a power of two <= 16). VEC = 1: 16-byte loads of A;
//     needs K % 4 == 0, kc % 4 == 0 and a 16-byte aligned A (B is staged with 4-byte loads).
#include "gemm_common.cuh"

namespace gemmlab {

constexpr int SKINNY_THREADS = 256;
constexpr int SKINNY_WARPS = SKINNY_THREADS / 32;

// Result of element idx: C with alpha and beta when the launch has one K-slice, else the raw
// partial sum into this slice's part of the workspace.
__device__ __forceinline__ void skinny_out(float* __restrict__ C, float* W, long long ws, int idx,
                                           float v, float alpha, float beta) {
    if (gridDim.y == 1) {
        store_c(C, idx, v, alpha, beta);
    } else {
        W[(long long)blockIdx.y * ws + idx] = v;
    }
}

// acc + a.x bx + a.y by + a.z bz + a.w bw, in that order: four FFMAs (the compiler contracts each
// multiply-add; no math header is needed under NVRTC).
__device__ __forceinline__ float dot4(float4 a, float bx, float by, float bz, float bw, float acc) {
    acc += a.x * bx;
    acc += a.y * by;
    acc += a.z * bz;
    acc += a.w * bw;
    return acc;
}

template <int MR, int VEC>
__device__ __forceinline__ void skinny_m(int M, int N, int K, int kc, long long ws, float alpha,
                                         const float* __restrict__ A,
                                         const float* __restrict__ B, float beta,
                                         float* __restrict__ C, float* W) {
    static_assert(MR == 1 || MR == 2 || MR == 4 || MR == 8 || MR == 16, "MR: 1, 2, 4, 8 or 16");
    constexpr int MC = MR < 4 ? MR : 4;  // rows of C reduced per pass through shared memory
    __shared__ __align__(16) float red[SKINNY_WARPS][MC][128];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int col0 = blockIdx.x * 128, m0 = blockIdx.z * MR;
    const int k_begin = blockIdx.y * kc, k_end = min(K, k_begin + kc);
    // This lane's columns: VEC: col0 + 4 lane + j; scalar: col0 + lane + 32 j.
    const int cstep = VEC ? 1 : 32;
    const int cfirst = col0 + (VEC ? 4 * lane : lane);

    float acc[MR][4];
#pragma unroll
    for (int i = 0; i < MR; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;

    for (int k = k_begin + 4 * warp; k < k_end; k += 4 * SKINNY_WARPS) {
        float4 b[4];  // rows k .. k+3 of B at this lane's four columns (0 outside B)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            if constexpr (VEC) {
                // VEC: k_end % 4 == 0 and N % 4 == 0, so rows k..k+3 and the 4 columns are all in.
                b[r] = cfirst < N ? *reinterpret_cast<const float4*>(B + (k + r) * N + cfirst)
                                  : make_float4(0.f, 0.f, 0.f, 0.f);
            } else {
                b[r] = make_float4(0.f, 0.f, 0.f, 0.f);
                if (k + r < k_end) {
                    const float* row = B + (k + r) * N;
                    if (cfirst + 0 * cstep < N) b[r].x = row[cfirst + 0 * cstep];
                    if (cfirst + 1 * cstep < N) b[r].y = row[cfirst + 1 * cstep];
                    if (cfirst + 2 * cstep < N) b[r].z = row[cfirst + 2 * cstep];
                    if (cfirst + 3 * cstep < N) b[r].w = row[cfirst + 3 * cstep];
                }
            }
        }
#pragma unroll
        for (int i = 0; i < MR; ++i) {
            const int m = m0 + i;
            float4 a = make_float4(0.f, 0.f, 0.f, 0.f);  // A[m][k .. k+3], warp-uniform
            if (m < M) {
                const float* row = A + m * K;
                if constexpr (VEC) {
                    a = *reinterpret_cast<const float4*>(row + k);
                } else {
                    a.x = row[k];
                    if (k + 1 < k_end) a.y = row[k + 1];
                    if (k + 2 < k_end) a.z = row[k + 2];
                    if (k + 3 < k_end) a.w = row[k + 3];
                }
            }
            acc[i][0] = dot4(a, b[0].x, b[1].x, b[2].x, b[3].x, acc[i][0]);
            acc[i][1] = dot4(a, b[0].y, b[1].y, b[2].y, b[3].y, acc[i][1]);
            acc[i][2] = dot4(a, b[0].z, b[1].z, b[2].z, b[3].z, acc[i][2]);
            acc[i][3] = dot4(a, b[0].w, b[1].w, b[2].w, b[3].w, acc[i][3]);
        }
    }

    // The 8 warps' sums, MC rows at a time: red[w][i][c] for column c of the block's 128.
#pragma unroll
    for (int i0 = 0; i0 < MR; i0 += MC) {
#pragma unroll
        for (int i = 0; i < MC; ++i) {
            if constexpr (VEC) {
                sts4(&red[warp][i][4 * lane], make_float4(acc[i0 + i][0], acc[i0 + i][1],
                                                           acc[i0 + i][2], acc[i0 + i][3]));
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) red[warp][i][lane + 32 * j] = acc[i0 + i][j];
            }
        }
        __syncthreads();
        for (int o = threadIdx.x; o < MC * 128; o += SKINNY_THREADS) {
            const int i = o / 128, c = o % 128;
            float s = 0.f;
#pragma unroll
            for (int w = 0; w < SKINNY_WARPS; ++w) s += red[w][i][c];
            const int m = m0 + i0 + i, col = col0 + c;
            if (m < M && col < N) skinny_out(C, W, ws, m * N + col, s, alpha, beta);
        }
        __syncthreads();  // red is rewritten by the next pass
    }
}

// Sum v over the warp's 32 lanes by halving: at the step with lane offset o a lane keeps the half
// of its values picked by bit o of its lane id and adds its partner's copy of that half. With
// V >= 32 values lane l ends with the sums of values l * V/32 .. l * V/32 + V/32 - 1; with fewer,
// lane l holds value l / (32 / V) (lanes with the same value hold the same sum).
// (One step per template level, so every index is a compile-time constant: no local memory.)
template <int V, int STEP = 0>
__device__ __forceinline__ void warp_reduce_scatter(float (&v)[V], int lane) {
    constexpr int o = 16 >> STEP;
    constexpr int half = V >> (STEP + 1);
    if constexpr (half >= 1) {
        const bool upper = (lane & o) != 0;
#pragma unroll
        for (int i = 0; i < half; ++i) {
            const float send = upper ? v[i] : v[i + half];
            const float keep = upper ? v[i + half] : v[i];
            v[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
        }
    } else {
        v[0] += __shfl_xor_sync(0xffffffffu, v[0], o);
    }
    if constexpr (STEP < 4) warp_reduce_scatter<V, STEP + 1>(v, lane);
}

template <int NR, int VEC>
__device__ __forceinline__ void skinny_n(int M, int N, int K, int kc, long long ws, float alpha,
                                         const float* __restrict__ A,
                                         const float* __restrict__ B, float beta,
                                         float* __restrict__ C, float* W) {
    static_assert(NR == 1 || NR == 2 || NR == 4 || NR == 8 || NR == 16, "NR: 1, 2, 4, 8 or 16");
    constexpr int RM = 4;                // rows of A per warp
    constexpr int KCH = 256;             // rows of B staged per chunk
    constexpr int PITCH = KCH + 4;       // staged row pitch: 16-byte aligned, 2-way staging stores
    constexpr int U = KCH / 128;         // 128 values of k per lane step
    constexpr int V = RM * NR;           // partial sums per lane
    __shared__ __align__(16) float Bs[NR][PITCH];

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int m0 = blockIdx.x * (RM * SKINNY_WARPS) + warp * RM;
    const int k_begin = blockIdx.y * kc, k_end = min(K, k_begin + kc);

    float acc[V];
#pragma unroll
    for (int i = 0; i < V; ++i) acc[i] = 0.f;

    for (int kb = k_begin; kb < k_end; kb += KCH) {
        // This lane's A values for the chunk, issued first so their latency overlaps the staging.
        float4 a[U][RM];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int k = kb + 128 * u + 4 * lane;
#pragma unroll
            for (int r = 0; r < RM; ++r) {
                const int m = m0 + r;
                a[u][r] = make_float4(0.f, 0.f, 0.f, 0.f);
                if (m < M && k < k_end) {
                    const float* row = A + (long long)m * K;
                    if constexpr (VEC) {
                        a[u][r] = *reinterpret_cast<const float4*>(row + k);  // k_end % 4 == 0
                    } else {
                        a[u][r].x = row[k];
                        if (k + 1 < k_end) a[u][r].y = row[k + 1];
                        if (k + 2 < k_end) a[u][r].z = row[k + 2];
                        if (k + 3 < k_end) a[u][r].w = row[k + 3];
                    }
                }
            }
        }
        __syncthreads();  // every warp is done reading the previous chunk
        for (int e = threadIdx.x; e < KCH * NR; e += SKINNY_THREADS) {
            const int kk = e / NR, n = e % NR, k = kb + kk;
            Bs[n][kk] = (n < N && k < k_end) ? B[k * N + n] : 0.f;
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < U; ++u) {
#pragma unroll
            for (int n = 0; n < NR; ++n) {
                const float4 b = lds4(&Bs[n][128 * u + 4 * lane]);
#pragma unroll
                for (int r = 0; r < RM; ++r)
                    acc[r * NR + n] = dot4(a[u][r], b.x, b.y, b.z, b.w, acc[r * NR + n]);
            }
        }
    }

    warp_reduce_scatter<V>(acc, lane);
    constexpr int PER = V >= 32 ? V / 32 : 1;   // sums this lane holds
    constexpr int SHARE = V >= 32 ? 1 : 32 / V;  // lanes holding the same sum
    if (lane % SHARE == 0) {
#pragma unroll
        for (int i = 0; i < PER; ++i) {
            const int idx = (V >= 32 ? lane * PER : lane / SHARE) + i;
            const int m = m0 + idx / NR, n = idx % NR;
            if (m < M && n < N) skinny_out(C, W, ws, m * N + n, acc[i], alpha, beta);
        }
    }
}

}  // namespace gemmlab
