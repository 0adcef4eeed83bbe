// BF16 tensor-core rung 7: persistent, clustered, multicast.
//
// What changes from ws_bf16:
//  * Persistent: one CTA per SM (grid = SMs, rounded down to whole clusters); each walks the
//    output tiles (tile = blockIdx-derived start, stride = CTAs in the grid). Barrier phases run
//    on across tiles, so the producer is loading the next tile while the consumers still
//    compute - or store - the current one: no launch or prologue per tile, no tail of idle SMs
//    waiting for a last wave of whole CTAs.
//  * Grouped tile order: tiles are visited in bands of GROUP cluster-rows, so the B columns and
//    A rows that neighbouring CTAs need at the same time are shared in L2.
//  * Clusters of CLUSTER CTAs stacked along M share each B tile: every CTA copies 1/CLUSTER of
//    it with TMA .multicast::cluster into the shared memory of all of them, which divides B's
//    L2->SM traffic by CLUSTER. With CLUSTER_N > 1 the cluster is 2-D (tc::ClusterGrid): the
//    CLUSTER_N CTAs of a row share A's tile the same way. A stage may be overwritten only when
//    the consumers of every CTA that receives the copies are done with it, so each consumer
//    warpgroup arrives on the "empty" barrier of every CTA of its row and column.
//  * Epilogue through shared memory and TMA stores (beta == 0, bf16 C, EPI_PIECE > 0): each
//    consumer warpgroup stages its tile in pieces of EPI_PIECE columns and one thread hands
//    them to TMA, so the stores drain while the warpgroup is already on its next tile's
//    main loop (tc::store_tile_tma). beta != 0 and float32 C keep the direct epilogue.
//
//  * Ping-pong (PINGPONG = 1, whole tiles only): the two consumer warpgroups take alternate
//    tiles, each computing all BM rows (two 64-row wgmma blocks for BM = 128), so one's epilogue
//    runs while the other's MMAs do. Each stage then has one reader, and a warpgroup starts
//    waiting on its tile's stages only once the other has passed all of the previous tile's
//    (PingPongTurn, tile_finish.cuh). The rules' unclustered 128 x 128 tile.
//
//  * BN = 192 (three 64-column chunks; shared by rows of K in clusters of 2): the wide tile where
//    192 columns waste less than 256 past N (the dispatch rule's 128 x 192).
//  * BN = 160 (no MMA wasted at N = 1600 / 4800): B arrives in three 64-column chunks, the third
//    half past the tile (B_SPAN), C in 32-column boxes.
// Shapes and alignment: as ws_bf16 (K % 8 == 0, N % 8 == 0, 16-byte aligned A and B, any M).
// With N % 8 != 0 or C off a 16-byte boundary, C leaves through the direct epilogue (the dispatch
// rung gets there by copying A or B to 16-byte pitches first: tc_helpers.cu's repitch).
// Split-K (SPLITK = 1, the dispatch rungs' path when the tiles cannot fill the SMs): `splits`
// (a runtime argument) work units per tile, each over a near-equal run of the K-tiles
// (block_order.cuh's for_each_work). Each parks its float32 partial tile in its slot of the
// workspace W; the slice that arrives last adds them all in slice order (tc::streamk_fixup: one
// launch, deterministic) and stores C through the usual epilogue, TMA stores included. The
// pipeline, clusters and multicast are unchanged.
#include "tile_finish.cuh"

namespace gemmlab {

template <int BN>
__device__ __forceinline__ void wgmma_bf16_nn(float (&d)[BN / 2], unsigned long long a,
                                              unsigned long long b) {
    if constexpr (BN == 256) tc::wgmma_m64n256k16_bf16<1>(d, a, b, 1);
    else if constexpr (BN == 192) tc::wgmma_m64n192k16_bf16<1>(d, a, b, 1);
    else if constexpr (BN == 160) tc::wgmma_m64n160k16_bf16<1>(d, a, b, 1);
    else if constexpr (BN == 128) tc::wgmma_m64n128k16_bf16<1>(d, a, b, 1);
    else if constexpr (BN == 64) tc::wgmma_m64n64k16_bf16<1>(d, a, b, 1);
    else tc::wgmma_m64n32k16_bf16<1>(d, a, b, 1);
}

template <int BM, int BN, int BK, int STAGES, int CLUSTER, int GROUP, int EPI_PIECE, int OUT_F32,
          int SPLITK = 0, int CLUSTER_N = 1, int PINGPONG = 0>
__device__ __forceinline__ void persistent_bf16(const tc::TensorMap& tmA,
                                                const tc::TensorMap& tmA_last,
                                                const tc::TensorMap& tmB,
                                                const tc::TensorMap* tmC, int M, int N, int K,
                                                float alpha, float beta, void* __restrict__ C,
                                                int splits = 1, float* __restrict__ W = nullptr) {
    using namespace tc;
    static_assert(SPLITK >= 0 && SPLITK <= 2, "0: whole tiles, 1: split-K, 2: stream-K");
    static_assert(BK == 64, "one 128-byte swizzle atom of K per stage");
    // B (N-major) arrives in chunks of B_COLS columns x BK rows: 64 columns in the 128-byte
    // swizzle, or for BN = 32 one chunk of 32 in the 64-byte one. BN = 160 takes three 64-column
    // chunks (B_SPAN = 192 columns; the MMAs read the first 160): the third box reads 32 columns
    // past the tile, which five 32-column chunks of the 64-byte swizzle did not, but those ran
    // the tile at two-thirds of 128 x 256's speed (docs/results/tc-tile160-2026-11-27)
    constexpr int B_COLS = BN == 32 ? 32 : 64, B_SPAN = (BN + B_COLS - 1) / B_COLS * B_COLS;
    constexpr unsigned B_MODE = B_COLS == 64 ? 1u : 2u, B_CHUNK_BYTES = BK * B_COLS * 2;
    static_assert(BM % 64 == 0 && (BN % 64 == 0 || BN == 160 || BN == 32) && BN <= 256,
                  "64-row warpgroups, 64-column chunks of B (160: three; 32: one of 32)");
    static_assert(CLUSTER * CLUSTER_N <= 8, "clusters of CLUSTER x CLUSTER_N CTAs, at most 8");
    // The CLUSTER CTAs of a column share B's tile: each copies whole chunks when they split
    // evenly, otherwise (fewer chunks than CTAs) its BK / CLUSTER rows of K of every chunk. The
    // CLUSTER_N CTAs of a row share A's: BM / CLUSTER_N rows each. Shares are whole 8-row atoms.
    constexpr bool B_BY_K = (B_SPAN / B_COLS) % CLUSTER != 0;
    static_assert(!B_BY_K || (BK / CLUSTER) % 8 == 0, "B's share: whole 8-row swizzle atoms of K");
    static_assert((BM / CLUSTER_N) % 8 == 0, "A's share: whole 8-row swizzle atoms");
    using Grid = ClusterGrid<CLUSTER, CLUSTER_N>;
    constexpr int CTAS = Grid::CTAS;
    using Roles = Consumers<BM, BN, SPLITK, PINGPONG>;  // cooperative or ping-pong: tile_finish
    constexpr int CONSUMERS = Roles::WARPGROUPS;
    constexpr unsigned A_BYTES = BM * BK * 2, B_BYTES = BK * B_SPAN * 2;
    constexpr unsigned STAGE_BYTES = A_BYTES + B_BYTES;
    // chunks of B this CTA copies, and the rows of K of each
    constexpr int B_CHUNKS = B_BY_K ? B_SPAN / B_COLS : B_SPAN / B_COLS / CLUSTER;
    constexpr int B_KROWS = B_BY_K ? BK / CLUSTER : BK;
    constexpr int A_ROWS = BM / CLUSTER_N;  // rows of A this CTA copies
    constexpr bool TMA_EPI = EPI_PIECE > 0 && !OUT_F32;
    constexpr unsigned CBUF_BYTES = TMA_EPI ? 64 * EPI_PIECE * 2 : 0;  // per consumer
    extern __shared__ unsigned char smem_raw[];
    const StageRing<STAGES, STAGE_BYTES, CONSUMERS, CBUF_BYTES> ring(smem_raw);
    const unsigned base = ring.base, cbufs = ring.cbufs;
    auto full = [&](int s) { return ring.full(s); };
    auto empty = [&](int s) { return ring.empty(s); };

    // the warpgroup index as threadIdx.x / 128, not read from lane 0 as persistent_fp8 does: with
    // that, bf16's ping-pong 128 x 128 lost 7-9 points at 2048 x 11008 x 4096 on the H100 (same
    // run, interleaved; docs/results/tc-stage-loop-2026-11-27, runs 2, 5, 6), for a cause not
    // found (under Nsight Compute's locked clocks it ran faster, not slower). Ping-pong
    // tiles offset no descriptor by warpgroup, so theirs stay uniform either way.
    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
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
                    mbar_arrive_expect_tx(full(s), stage_tx);
                    cg.template load_a<A_ROWS>(sa, map_a, full(s), kt * BK, row0);
                    // this CTA's share of B: whole chunks, or its rows of K of every chunk
                    const int k_off = B_BY_K ? static_cast<int>(cg.rm) * B_KROWS : 0;
#pragma unroll
                    for (int c0 = 0; c0 < B_CHUNKS; ++c0) {
                        const int c = B_BY_K ? c0 : cg.rm * B_CHUNKS + c0;
                        const unsigned dst = sb + c * B_CHUNK_BYTES + k_off * B_COLS * 2;
                        if (CLUSTER > 1)
                            tma_load_2d_multicast(dst, &tmB, full(s), col0 + B_COLS * c,
                                                  kt * BK + k_off, cg.column_mask());
                        else
                            tma_load_2d(dst, &tmB, full(s), col0 + B_COLS * c, kt * BK);
                    }
                }
            });
            if (CTAS > 1) producer_tail<STAGES>(it, empty);  // no closing cluster barrier
        }
    } else {  // consumers
        setmaxnreg_inc<232>();
        const int cw = wg - 1;
        // C's map exists only for 16-byte row pitches and a 16-byte aligned C (otherwise the host
        // passes a zeroed one): the direct epilogue stores the rest
        const bool tma_c = N % 8 == 0 && reinterpret_cast<unsigned long long>(C) % 16 == 0;
        // K-tiles run whole but a last one whose K ends before its last K-step (k16) does
        const int tail = cdiv(K % BK, 16), whole = tail > 0 && tail < BK / 16 ? K / BK : nk;
        const TileLoop loop{cg.rank, cluster_id, clusters, units_m, units_n, nk, splits, W, whole,
                            tail};
        consume_tiles<BM, BN, STAGES, STAGE_BYTES, A_BYTES, CBUF_BYTES, CLUSTER, CLUSTER_N, GROUP,
                      EPI_PIECE, OUT_F32, SPLITK, PINGPONG, BK / 16>(
            ring, cg, loop, turn, cw, t, desc_low(base, 16), desc_low(base + A_BYTES, B_CHUNK_BYTES),
            [&](float (&d)[BN / 2], unsigned a, unsigned b, int kk) {
                // K-step kk of a stage: 32 bytes along A's rows, 16 rows of B's chunks
                wgmma_bf16_nn<BN>(d, desc_with(a + 2 * kk, 1024),
                                  desc_with(b + 2 * B_COLS * kk, 8 * B_COLS * 2, B_MODE));
            },
            [&] { return TMA_EPI && beta == 0.0f && tma_c; }, tmC, cbufs, C, M,
            N, alpha, beta);
        if (TMA_EPI && t == 0) bulk_wait<0>();  // the last tile's stores are in global memory
    }
}

}  // namespace gemmlab
