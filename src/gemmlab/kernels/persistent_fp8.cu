// FP8 tensor-core rung: persistent_bf16 with e4m3 inputs.
//
// Layout ("TN"): A is M x K row-major e4m3; B is given as N x K row-major e4m3 - B transposed,
// row n of B holding the K values of C's column n - so both operands are K-major. 8-bit wgmma has
// no transpose (only 16-bit inputs may read B N-major), and cuBLASLt's FP8 kernels take the same
// layout. e4m3 values travel as their 8-bit patterns (unsigned char; gemmlab.numerics.fp8). C is
// M x N row-major bfloat16. alpha, beta float32; beta == 0 does not read C.
// Products accumulate in the wgmma accumulator (.f32 registers, but Hopper's FP8 MMA keeps about
// 13 mantissa bits of the running sum: no promotion to FP32 registers here, as cuBLASLt's
// FAST_ACCUM mode; the bound in gemmlab.numerics.fp8 says what that costs).
//
// What changes from persistent_bf16 (same warp specialisation, persistent grouped tiles, clusters
// of CLUSTER CTAs along M sharing B - times CLUSTER_N along N sharing A - through TMA multicast,
// TMA-store bf16 epilogue, and its ping-pong form: PINGPONG = 1):
//  * 1-byte elements: BK = 128, so one k-tile row is 128 bytes - one row of the 128-byte swizzle,
//    as BK = 64 bf16 is - and a stage holds the same bytes as the bf16 rung's (A 128 x 128 B =
//    16 KB, B 256 x 128 B = 32 KB): the same shared-memory budget for twice the K per stage.
//  * B's tile is stored K-major, like A's: BN rows of 128 bytes, 8-row atoms of 1024 bytes. Each
//    CTA of a cluster copies B_ROWS = BN / CLUSTER of them with one TMA box of 128 (K) x B_ROWS
//    (N) and multicasts it to the cluster.
//  * wgmma.mma_async.m64n256k32.f32.e4m3.e4m3 with both descriptors built alike: K-major, start
//    address + 32 bytes per k32 step (32 e4m3 - the same byte step as bf16's 16 elements), SBO =
//    1024 (next 8 rows), LBO unused (one step's 32 bytes of K lie inside the 128-byte row).
//  * The TMA-store epilogue needs C's pitch (N bf16) to be a multiple of 16 bytes: for N % 8 != 0
//    the kernel takes the direct epilogue (the host passes an unused, zeroed map for C).
//
// Shapes and alignment: K % 16 == 0 (A's and B's rows are K bytes apart: TMA needs 16-byte
// pitches), any M and N; A, B 16-byte aligned (C too for the TMA store).
// Split-K (SPLITK = 1, the dispatch rungs' path when the tiles cannot fill the SMs): `splits`
// (a runtime argument) work units per tile, each over a near-equal run of the K-tiles
// (block_order.cuh's for_each_work). Each parks its float32 partial tile in its slot of the
// workspace W; the slice that arrives last adds them all in slice order (tc::streamk_fixup: one
// launch, deterministic) and stores C through the usual epilogue, TMA stores included. The
// pipeline, clusters and multicast are unchanged.
#include "tile_finish.cuh"

namespace gemmlab {

// One k32 step of the consumer warpgroup's 64 x BN tile: both operands K-major.
template <int BN>
__device__ __forceinline__ void wgmma_fp8_tn(float (&d)[BN / 2], unsigned long long a,
                                             unsigned long long b) {
    if constexpr (BN == 256) tc::wgmma_m64n256k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 200) tc::wgmma_m64n200k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 192) tc::wgmma_m64n192k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 176) tc::wgmma_m64n176k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 168) tc::wgmma_m64n168k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 160) tc::wgmma_m64n160k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 144) tc::wgmma_m64n144k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 128) tc::wgmma_m64n128k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 112) tc::wgmma_m64n112k32_e4m3(d, a, b, 1);
    else if constexpr (BN == 64) tc::wgmma_m64n64k32_e4m3(d, a, b, 1);
    else tc::wgmma_m64n32k32_e4m3(d, a, b, 1);
}

template <int BM, int BN, int BK, int STAGES, int CLUSTER, int GROUP, int EPI_PIECE,
          int SPLITK = 0, int CLUSTER_N = 1, int PINGPONG = 0>
__device__ __forceinline__ void persistent_fp8(const tc::TensorMap& tmA,
                                               const tc::TensorMap& tmA_last,
                                               const tc::TensorMap& tmB,
                                               const tc::TensorMap* tmC, int M, int N, int K,
                                               float alpha, float beta, void* __restrict__ C,
                                               int splits = 1, float* __restrict__ W = nullptr) {
    using namespace tc;
    static_assert(SPLITK >= 0 && SPLITK <= 2, "0: whole tiles, 1: split-K, 2: stream-K");
    static_assert(BK == 128, "one 128-byte swizzle row of K (128 e4m3) per stage");
    static_assert(BM % 64 == 0 &&
                      (BN == 32 || BN == 64 || BN == 112 || BN == 128 || BN == 144 || BN == 160 ||
                       BN == 168 || BN == 176 || BN == 192 || BN == 200 || BN == 256),
                  "64-row warpgroups, m64n32/64/112/128/144/160/168/176/192/200/256k32");
    static_assert(EPI_PIECE == 0 || BN % EPI_PIECE == 0, "whole epilogue pieces per tile");
    static_assert(CLUSTER * CLUSTER_N <= 8, "clusters of CLUSTER x CLUSTER_N CTAs, at most 8");
    static_assert((BN / CLUSTER) % 8 == 0 && BN / CLUSTER <= 256 && (BM / CLUSTER_N) % 8 == 0,
                  "A's and B's TMA boxes: whole 8-row swizzle atoms, at most 256 rows");
    using Grid = ClusterGrid<CLUSTER, CLUSTER_N>;
    constexpr int CTAS = Grid::CTAS;
    using Roles = Consumers<BM, BN, SPLITK, PINGPONG>;  // cooperative or ping-pong: tile_finish
    constexpr int CONSUMERS = Roles::WARPGROUPS;
    constexpr unsigned A_BYTES = BM * BK, B_BYTES = BN * BK;  // 1 byte per e4m3
    constexpr unsigned STAGE_BYTES = A_BYTES + B_BYTES;
    constexpr int B_ROWS = BN / CLUSTER;    // rows of B (columns of C) this CTA copies per stage
    constexpr int A_ROWS = BM / CLUSTER_N;  // rows of A this CTA copies per stage
    constexpr bool TMA_EPI = EPI_PIECE > 0;
    constexpr unsigned CBUF_BYTES = TMA_EPI ? 64 * EPI_PIECE * 2 : 0;  // bf16, per consumer
    extern __shared__ unsigned char smem_raw[];
    const StageRing<STAGES, STAGE_BYTES, CONSUMERS, CBUF_BYTES> ring(smem_raw);
    const unsigned base = ring.base, cbufs = ring.cbufs;
    auto full = [&](int s) { return ring.full(s); };
    auto empty = [&](int s) { return ring.empty(s); };

    // the warpgroup index read from lane 0: the compiler then knows it is warp-uniform, so the
    // addresses and wgmma descriptors built from it stay in uniform registers (CUTLASS's
    // canonical_warp_group_idx)
    const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0), t = threadIdx.x % 128;
    const Grid cg;
    const int tiles_m = cdiv(M, BM), tiles_n = cdiv(N, BN);
    const int units_m = cdiv(tiles_m, CLUSTER), units_n = cdiv(tiles_n, CLUSTER_N);
    const int cluster_id = blockIdx.x / CTAS, clusters = gridDim.x / CTAS;
    const int nk = cdiv(K, BK);
    __shared__ alignas(8) unsigned long long turn_bars[2];  // ping-pong: PingPongTurn
    const PingPongTurn turn{smem_addr(turn_bars)};
    if (PINGPONG && threadIdx.x == 0) turn.init();
    ring.template init<CTAS>(tmA, tmB, Roles::READERS * Grid::PEERS);

    if (wg == 0) {  // producer
        setmaxnreg_dec<40>();
        if (t == 0) {
            if (CTAS == 1) prefetch_tensormap(&tmA_last);
            int it = 0;  // stage uses so far, across tiles
            for_each_work<SPLITK>(cluster_id, clusters, units_m, units_n, GROUP, nk, splits,
                                  [&](const WorkItem& w) {
                const int row0 = (w.m * CLUSTER + cg.rm) * BM;
                const int col0 = (w.n * CLUSTER_N + cg.rn) * BN;
                // the last row-tile's boxes stop at M (tc::a_box)
                const TensorMap* map_a;
                const unsigned stage_tx =
                    a_box<BM, CTAS, STAGE_BYTES>(tmA, tmA_last, row0, M, map_a);
                for (int kt = w.kt0; kt < w.kt1; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) mbar_wait(empty(s), ((it / STAGES) - 1) & 1);
                    const unsigned sa = base + s * STAGE_BYTES, sb = sa + A_BYTES;
                    // the whole stage lands on this CTA's barrier: its own A and B rows and the
                    // rows the other CTAs of its row (A) and column (B) multicast
                    mbar_arrive_expect_tx(full(s), stage_tx);
                    cg.template load_a<A_ROWS>(sa, map_a, full(s), kt * BK, row0);
                    const unsigned dst = sb + cg.rm * B_ROWS * 128;
                    if (CLUSTER > 1)
                        tma_load_2d_multicast(dst, &tmB, full(s), kt * BK, col0 + cg.rm * B_ROWS,
                                              cg.column_mask());
                    else
                        tma_load_2d(dst, &tmB, full(s), kt * BK, col0);
                }
            });
            if (CTAS > 1) producer_tail<STAGES>(it, empty);  // no closing cluster barrier
        }
    } else {  // consumers
        setmaxnreg_inc<232>();
        const int cw = wg - 1;
        const bool tma_store = TMA_EPI && beta == 0.0f && N % 8 == 0 &&
                               reinterpret_cast<unsigned long long>(C) % 16 == 0;
        // K-tiles run whole but a last one whose K ends before its last K-step (k32) does
        const int tail = cdiv(K % BK, 32), whole = tail > 0 && tail < BK / 32 ? K / BK : nk;
        const TileLoop loop{cg.rank, cluster_id, clusters, units_m, units_n, nk, splits, W, whole,
                            tail};
        consume_tiles<BM, BN, STAGES, STAGE_BYTES, A_BYTES, CBUF_BYTES, CLUSTER, CLUSTER_N, GROUP,
                      EPI_PIECE, 0, SPLITK, PINGPONG, BK / 32>(
            ring, cg, loop, turn, cw, t, desc_low(base, 16), desc_low(base + A_BYTES, 16),
            [&](float (&d)[BN / 2], unsigned a, unsigned b, int kk) {
                // K-step kk of a stage: 32 bytes of K further along A's and B's 128-byte rows
                wgmma_fp8_tn<BN>(d, desc_with(a + 2 * kk, 1024), desc_with(b + 2 * kk, 1024));
            },
            [&] { return tma_store; }, tmC, cbufs, C, M, N, alpha, beta);
        if (TMA_EPI && t == 0) bulk_wait<0>();  // the last tile's stores are in global memory
    }
}

}  // namespace gemmlab
