// BF16 tensor-core rung 4: wgmma (Hopper's warpgroup MMA), sm_90a.
//
// What changes from cp_async_bf16: the multiply moves from warps to warpgroups. Four warps
// (128 threads) issue one asynchronous wgmma.mma_async.m64nBNk16 that reads both operands
// straight from shared memory through 64-bit descriptors - no ldmatrix, no A/B fragments in
// registers, one instruction where mma.sync needed (BN / 8) x 4 - and keep a 64 x BN f32
// accumulator in registers. Tiles still arrive by cp.async (16-byte copies, STAGES deep), now
// written in the 128-byte swizzle the descriptors describe: row r of a 128-byte-wide tile keeps
// its 16-byte chunk c at chunk c ^ (r % 8). A is K-major (BM rows x 64 k); B stays a row-major
// K x N tile read N-major (TRANS_B = 1), in 64-column chunks of 64 k-rows.
// cp.async writes through the generic proxy and wgmma reads through the async proxy, so each
// thread fences (fence.proxy.async) before the barrier that hands a stage to wgmma.
//
// VEC = 1: 16-byte copies; K % 8 == 0, N % 8 == 0, 16-byte aligned A and B. VEC = 0 (the
// scalar twin): guarded 2-byte loads into the same layout - any M, N, K >= 1, any alignment.
#include "tc_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int STAGES, int VEC, int OUT_F32>
__device__ __forceinline__ void wgmma_bf16(int M, int N, int K, float alpha,
                                           const tc::bf16* __restrict__ A,
                                           const tc::bf16* __restrict__ B, float beta,
                                           void* __restrict__ C) {
    using namespace tc;
    static_assert(BK == 64 && BM % 64 == 0 && BN % 64 == 0 && BN <= 256, "tile shape");
    static_assert(STAGES >= 2, "at least double buffering");
    constexpr int NT = BM / 64 * 128;
    constexpr unsigned A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;
    constexpr unsigned STAGE_BYTES = A_BYTES + B_BYTES;
    static_assert((BM * 8) % NT == 0 && (BK * BN / 8) % NT == 0, "whole chunks per thread");
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023u) & ~1023u;
    unsigned char* const gbase = smem_raw + (base - smem_addr(smem_raw));

    const int tid = threadIdx.x, wg = tid / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int nk = cdiv(K, BK);
    auto load = [&](int kt) {  // every thread: its chunks of k-tile kt into stage kt % STAGES
        const unsigned so = (kt % STAGES) * STAGE_BYTES;
        const int k0 = kt * BK;
#pragma unroll
        for (int i = 0; i < BM * 8 / NT; ++i) {  // A: BM rows x 8 chunks of 8 k
            const int q = tid + i * NT, r = q / 8, c = q % 8;
            const unsigned off = so + r * 128 + ((c ^ (r & 7)) * 16);
            const int gr = row0 + r, gk = k0 + c * 8;
            if (VEC) {
                const bool in = gr < M && gk < K;
                cp_async16(base + off, A + (in ? gr * K + gk : 0), in ? 16 : 0);
            } else {
                *reinterpret_cast<uint4*>(gbase + off) = load_chunk<0>(A, gr, gk, M, K);
            }
        }
#pragma unroll
        for (int i = 0; i < BK * BN / 8 / NT; ++i) {  // B: 64 k-rows x BN/8 chunks of 8 n
            const int q = tid + i * NT, r = q / (BN / 8), c = q % (BN / 8);
            const unsigned off = so + A_BYTES + (c / 8) * (BK * 128) + r * 128 +
                                 (((c % 8) ^ (r & 7)) * 16);
            const int gk = k0 + r, gn = col0 + c * 8;
            if (VEC) {
                const bool in = gk < K && gn < N;
                cp_async16(base + off, B + (in ? gk * N + gn : 0), in ? 16 : 0);
            } else {
                *reinterpret_cast<uint4*>(gbase + off) = load_chunk<0>(B, gk, gn, K, N);
            }
        }
    };

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) load(s);
        cp_async_commit();
    }
    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    for (int kt = 0; kt < nk; ++kt) {
        cp_async_wait<STAGES - 2>();  // k-tile kt has landed (for this thread's copies)
        fence_proxy_async();
        __syncthreads();  // ... for everyone's; and stage (kt - 1) % STAGES is free again
        if (kt + STAGES - 1 < nk) load(kt + STAGES - 1);
        cp_async_commit();
        const unsigned sa = base + (kt % STAGES) * STAGE_BYTES + wg * 64 * 128;
        const unsigned sb = base + (kt % STAGES) * STAGE_BYTES + A_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            const unsigned long long a = wgmma_desc(sa + 32 * kk, 16, 1024);
            const unsigned long long b = wgmma_desc(sb + 2048 * kk, BK * 128, 1024);
            if constexpr (BN == 256) wgmma_m64n256k16_bf16<1>(d, a, b, 1);
            else if constexpr (BN == 128) wgmma_m64n128k16_bf16<1>(d, a, b, 1);
            else wgmma_m64n64k16_bf16<1>(d, a, b, 1);
        }
        wgmma_commit();
        wgmma_wait<0>();
    }
    fence_regs(d);
    store_wgmma_tile<BN, OUT_F32>(C, M, N, row0 + 64 * wg, col0, d, alpha, beta);
}

}  // namespace gemmlab
