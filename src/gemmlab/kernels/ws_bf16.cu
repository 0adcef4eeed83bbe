// BF16 tensor-core rung 6: warp specialisation.
//
// What changes from tma_bf16: the warpgroups stop taking turns. Warpgroup 0 is the producer:
// one of its threads only issues TMA copies, STAGES tiles ahead, gated per stage by an "empty"
// mbarrier; it gives registers away (setmaxnreg.dec to 40). Warpgroups 1..BM/64 are consumers:
// each waits on the stage's "full" mbarrier, issues wgmma for its 64 rows of the BM x BN tile,
// and releases the stage by arriving on "empty" as soon as the wgmma that read it retired
// (wgmma.wait_group 1 keeps one batch in flight). They take the registers (setmaxnreg.inc to
// 232) that a 64 x 256 f32 accumulator (128 per thread) needs. No __syncthreads in the main
// loop: the barriers are the only coupling, so copies, tensor-core work and the epilogue of
// one warpgroup overlap the others.
//
// Layouts, shapes, alignment: as tma_bf16 (A row-major K-major tiles, B row-major K x N tiles
// read N-major with TRANS_B = 1; TMA zero-fills edges; K % 8 == 0, N % 8 == 0, 16-byte
// aligned A and B, any M).
#include "tc_common.cuh"

namespace gemmlab {

template <int BN>
__device__ __forceinline__ void wgmma_bf16_n(float (&d)[BN / 2], unsigned long long a,
                                             unsigned long long b) {
    if constexpr (BN == 256) tc::wgmma_m64n256k16_bf16<1>(d, a, b, 1);
    else if constexpr (BN == 128) tc::wgmma_m64n128k16_bf16<1>(d, a, b, 1);
    else tc::wgmma_m64n64k16_bf16<1>(d, a, b, 1);
}

template <int BM, int BN, int BK, int STAGES, int OUT_F32>
__device__ __forceinline__ void ws_bf16(const tc::TensorMap& tmA, const tc::TensorMap& tmB,
                                        int M, int N, int K, float alpha, float beta,
                                        void* __restrict__ C) {
    using namespace tc;
    static_assert(BK == 64, "one 128-byte swizzle atom of K per stage");
    static_assert(BM % 64 == 0 && BN % 64 == 0 && BN <= 256, "64-row warpgroups, 64-col chunks");
    constexpr int CONSUMERS = BM / 64;
    constexpr unsigned A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2;
    constexpr unsigned STAGE_BYTES = A_BYTES + B_BYTES;
    extern __shared__ unsigned char smem_raw[];
    const unsigned base = (smem_addr(smem_raw) + 1023u) & ~1023u;  // 128B swizzle: 1 KB atoms
    const unsigned bars = base + STAGES * STAGE_BYTES;
    auto full = [&](int s) { return bars + 8u * s; };
    auto empty = [&](int s) { return bars + 8u * (STAGES + s); };

    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int nk = cdiv(K, BK);
    if (threadIdx.x == 0) {
        prefetch_tensormap(&tmA);
        prefetch_tensormap(&tmB);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), CONSUMERS);
        }
        fence_mbar_init();
    }
    __syncthreads();

    if (wg == 0) {  // producer
        setmaxnreg_dec<40>();
        if (t == 0) {
            for (int kt = 0; kt < nk; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) mbar_wait(empty(s), ((kt / STAGES) - 1) & 1);
                const unsigned sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
                mbar_arrive_expect_tx(full(s), STAGE_BYTES);
                tma_load_2d(sa, &tmA, full(s), kt * BK, row0);
#pragma unroll
                for (int c = 0; c < BN / 64; ++c)
                    tma_load_2d(sb + c * BK * 128, &tmB, full(s), col0 + 64 * c, kt * BK);
            }
        }
    } else {  // consumers
        setmaxnreg_inc<232>();
        const int cw = wg - 1;
        float d[BN / 2];
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
        for (int kt = 0; kt < nk; ++kt) {
            const int s = kt % STAGES;
            mbar_wait(full(s), (kt / STAGES) & 1);
            const unsigned sa = base + s * STAGE_BYTES + cw * 64 * 128, sb = base + s * STAGE_BYTES + A_BYTES;
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk)
                wgmma_bf16_n<BN>(d, wgmma_desc(sa + 32 * kk, 16, 1024),
                                 wgmma_desc(sb + 2048 * kk, BK * 128, 1024));
            wgmma_commit();
            wgmma_wait<1>();  // the batch before this one has retired: release its stage
            if (kt > 0 && t == 0) mbar_arrive(empty((kt - 1) % STAGES));
        }
        wgmma_wait<0>();
        fence_regs(d);
        store_wgmma_tile<BN, OUT_F32>(C, M, N, row0 + 64 * cw, col0, d, alpha, beta);
    }
}

}  // namespace gemmlab
