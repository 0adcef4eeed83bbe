// BF16 tensor-core rung 5: TMA copies completing on mbarriers.
//
// What changes from wgmma_bf16: no thread copies tiles any more. One thread hands the TMA unit
// a box (cp.async.bulk.tensor with a tensor map made on the host by cuTensorMapEncodeTiled) and
// the copy engine writes it into shared memory already in the 128-byte swizzle wgmma reads,
// announcing its bytes on the stage's mbarrier; the warpgroups wait on that barrier instead of
// on cp.async groups. Address arithmetic, per-thread copy instructions and the zero-fill
// guards disappear (TMA fills out-of-range box elements with zeros), so the warps issue little
// besides wgmma. Still one role for everyone: every warpgroup computes, and thread 0 refills a
// stage after a __syncthreads says all of them are done with it.
//
// Tensor maps: A is a (K, M) tensor (K innermost) cut in 64 x BM boxes; B a (N, K) tensor cut
// in 64 x 64 boxes (BN / 64 per stage). TMA needs 16-byte row pitches and bases: K % 8 == 0,
// N % 8 == 0 and 16-byte aligned A and B; any M.
#include "tc_common.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int STAGES, int OUT_F32>
__device__ __forceinline__ void tma_bf16(const tc::TensorMap& tmA, const tc::TensorMap& tmB,
                                         int M, int N, int K, float alpha, float beta,
                                         void* __restrict__ C) {
    using namespace tc;
    static_assert(BK == 64 && BM % 64 == 0 && BN % 64 == 0 && BN <= 256, "tile shape");
    constexpr unsigned A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;
    constexpr unsigned STAGE_BYTES = A_BYTES + B_BYTES;
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023u) & ~1023u;
    const unsigned bars = base + STAGES * STAGE_BYTES;
    auto full = [&](int s) { return bars + 8u * s; };

    const int wg = threadIdx.x / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int nk = cdiv(K, BK);
    auto load = [&](int kt) {  // thread 0: stage kt % STAGES <- k-tile kt
        const int s = kt % STAGES;
        const unsigned sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
        mbar_arrive_expect_tx(full(s), STAGE_BYTES);
        tma_load_2d(sa, &tmA, full(s), kt * BK, row0);
#pragma unroll
        for (int c = 0; c < BN / 64; ++c)
            tma_load_2d(sb + c * BK * 128, &tmB, full(s), col0 + 64 * c, kt * BK);
    };
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(full(s), 1);
        fence_mbar_init();
        for (int kt = 0; kt < STAGES && kt < nk; ++kt) load(kt);
    }
    __syncthreads();

    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    for (int kt = 0; kt < nk; ++kt) {
        const int s = kt % STAGES;
        mbar_wait(full(s), (kt / STAGES) & 1);
        const unsigned sa = base + s * STAGE_BYTES + wg * 64 * 128;
        const unsigned sb = base + s * STAGE_BYTES + A_BYTES;
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
        __syncthreads();  // every warpgroup is done with stage s: refill it
        if (threadIdx.x == 0 && kt + STAGES < nk) load(kt + STAGES);
    }
    fence_regs(d);
    store_wgmma_tile<BN, OUT_F32>(C, M, N, row0 + 64 * wg, col0, d, alpha, beta);
}

}  // namespace gemmlab
