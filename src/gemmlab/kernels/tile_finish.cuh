// The consumer warpgroups of the persistent tensor-core kernels (persistent_bf16.cu,
// persistent_fp8.cu): their work loop (consume_tiles, at the end; cooperative or ping-pong), and
// what a warpgroup does with its 64 x BN accumulator once a work item's K-steps are done:
//  * split-K (SPLITK = 1): park the partial in its slice's slot; the slice that arrives last
//    adds the slices in order (tc::streamk_fixup, as stream-K's pieces), then stores C;
//  * stream-K (SPLITK = 2) on a tile two runs share: park the piece in the CTA's slot; the run
//    that arrives last adds the pieces in K order (tc::streamk_fixup), then stores C;
//  * C through TMA stores (tma_store: beta == 0, a 16-byte pitch, EPI_PIECE > 0) or the direct
//    epilogue.
#pragma once
#include "tc_common.cuh"
#include "block_order.cuh"

namespace gemmlab {

// The work loop's place: which CTA of which cluster, and the order's extents (for stream-K's
// slots), and the split-K / stream-K workspace W.
struct TileLoop {
    unsigned rank;
    int cluster_id, clusters, units_m, units_n, nk, splits;
    float* W;
    // the K-tiles whose every K-step holds K (nk, or nk - 1), and the K-steps of the last one
    // when it has fewer
    int nk_whole, tail_steps;
};

template <int BM, int BN, int CTAS, int EPI_PIECE, int OUT_F32, int SPLITK>
__device__ __forceinline__ void finish_tile(const TileLoop& L, const WorkItem& w, int cw,
                                            int* last, float (&d)[BN / 2],
                                            const tc::TensorMap* tmC, unsigned cbuf,
                                            bool tma_store, void* __restrict__ C, int M, int N,
                                            int row0, int col0, float alpha, float beta) {
    using namespace tc;
    constexpr int CONSUMERS = BM / 64;
    // one 64-row piece per consumer warpgroup of every CTA of the cluster unit w.key
    const int piece = (w.key * CTAS + static_cast<int>(L.rank)) * CONSUMERS + cw;
    const int r0 = row0 + 64 * cw;
    // the first of this thread's accumulator rows (wgmma's layout: r, r + 8) lies inside C
    const int t = threadIdx.x % 128;
    const bool live = r0 + 16 * (t / 32) + (t % 32) / 4 < M;
    if constexpr (SPLITK == 1) {  // the slice that arrives last adds the slices, then stores C
        // W: `splits` slots of 64 x BN floats per 64-row piece of every tile, then one counter
        // per piece (the slots of a piece are neighbours)
        const long long pieces = static_cast<long long>(L.units_m) * L.units_n * CTAS * CONSUMERS;
        unsigned* counters = reinterpret_cast<unsigned*>(L.W + pieces * L.splits * 64 * BN);
        auto slot = [&](int z) {
            return L.W + (piece * static_cast<long long>(L.splits) + z) * 64 * BN;
        };
        if (!streamk_fixup<BN>(slot, L.splits, w.own, counters + piece, last + cw, 1 + cw, d,
                               live))
            return;  // another slice of the tile arrives later and stores it
    }
    if (SPLITK == 2 && w.parts > 1) {  // a tile shared by two runs: the last adds the pieces
        // W: two slots of 64 x BN floats per consumer warpgroup of every CTA, then one counter
        // per 64-row piece of every stream-K tile
        const long long I = static_cast<long long>(min(L.splits, L.units_m * L.units_n)) * L.nk;
        unsigned* counters = reinterpret_cast<unsigned*>(L.W + gridDim.x * 2ll * BM * BN);
        auto slot = [&](int z) {
            const int g = L.cluster_id - w.own + z;
            const int cta = g * CTAS + static_cast<int>(L.rank);
            const int which = sk_slot(I, g, sk_runs(I, L.clusters), w.key, L.nk);
            return L.W + ((cta * 2ll + which) * CONSUMERS + cw) * 64 * BN;
        };
        if (!streamk_fixup<BN>(slot, w.parts, w.own, counters + piece, last + cw, 1 + cw, d,
                               live))
            return;  // another piece of the tile arrives later and stores it
    }
    if constexpr (EPI_PIECE > 0 && !OUT_F32) {
        if (tma_store) {
            store_tile_tma<BN, EPI_PIECE, tc::C_BOX<BN>>(tmC, cbuf, 1 + cw, r0, col0, d,
                                                                   alpha);
            return;
        }
    }
    store_wgmma_tile<BN, OUT_F32>(C, M, N, r0, col0, d, alpha, beta);
}

// The consumer warpgroups of a BM x BN tile: cooperative, BM / 64 of them share each tile, 64 rows
// each; ping-pong (PINGPONG = 1), two take alternate tiles, all BM rows each, so one's epilogue
// runs while the other's MMAs do (CUTLASS's KernelTmaWarpSpecializedPingpong).
template <int BM, int BN, int SPLITK, int PINGPONG>
struct Consumers {
    static_assert(!PINGPONG || (SPLITK == 0 && BM * BN <= 128 * 176),
                  "ping-pong: whole tiles, a BM x BN accumulator per warpgroup (at most 176 regs)");
    static constexpr int WARPGROUPS = PINGPONG ? 2 : BM / 64;
    static constexpr int READERS = PINGPONG ? 1 : WARPGROUPS;  // warpgroups reading each stage
    static constexpr int HALVES = PINGPONG ? BM / 64 : 1;      // 64-row wgmma blocks per warpgroup
};

// Ping-pong consumers (PINGPONG = 1): two warpgroups take alternate work items of the CTA, each
// computing all BM rows of its tile, so one's epilogue runs while the other's MMAs do. A
// warpgroup waits on item j's stages only once the other has waited on all of item j - 1's: a
// stage's "full" barrier is then at most one phase from the use awaited, so its parity cannot
// alias an older phase. Each warpgroup w marks its items done on mbarrier done(w) (one arrival
// per item); item j's owner waits for phase (j - 1) / 2 of the other's (CUTLASS's
// OrderedSequenceBarrier, two stages).
struct PingPongTurn {
    unsigned bars;  // two mbarriers (8 bytes each): warpgroup 0's items done, warpgroup 1's
    __device__ __forceinline__ unsigned done(int w) const { return bars + 8u * w; }
    __device__ __forceinline__ void init() const {  // one thread, before the block's first sync
        tc::mbar_init(done(0), 4);  // one arrival per warp of the warpgroup
        tc::mbar_init(done(1), 4);
    }
    // consumer warpgroup cw, before waiting on item j's stages (j % 2 == cw)
    __device__ __forceinline__ void wait(int cw, int j) const {
        if (j > 0) tc::mbar_wait(done(1 - cw), ((j - 1) / 2) & 1);
    }
    // lane 0 of each warp of warpgroup cw, the warp converged, once it is past item j's stage
    // waits
    __device__ __forceinline__ void pass(int cw) const { tc::mbar_arrive(done(cw)); }
};

// A ping-pong warpgroup's whole tile (HALVES blocks of 64 rows) to C: TMA stores through its
// staging buffer where C allows, the direct epilogue otherwise.
template <int HALVES, int BN, int EPI_PIECE, int OUT_F32>
__device__ __forceinline__ void store_pingpong_tile(float (&d)[HALVES][BN / 2],
                                                    const tc::TensorMap* tmC, unsigned cbuf,
                                                    unsigned bar_id, bool tma_store,
                                                    void* __restrict__ C, int M, int N, int row0,
                                                    int col0, float alpha, float beta) {
#pragma unroll
    for (int h = 0; h < HALVES; ++h) {
        if constexpr (EPI_PIECE > 0 && !OUT_F32) {
            if (tma_store) {
                tc::store_tile_tma<BN, EPI_PIECE, tc::C_BOX<BN>>(
                    tmC, cbuf, bar_id, row0 + 64 * h, col0, d[h], alpha);
                continue;
            }
        }
        tc::store_wgmma_tile<BN, OUT_F32>(C, M, N, row0 + 64 * h, col0, d[h], alpha, beta);
    }
}

// The consumer warpgroups' loop of persistent_bf16 and persistent_fp8: for each work item of the
// cluster (cooperative: every item, 64 rows each; ping-pong: warpgroup cw's own items, all BM
// rows), wait for each stage, issue its MMAs - mma(d[h], a, b, kk): K-step kk of the 64-row
// block h (KSTEPS of them, or fewer in a last K-tile that reaches past K: loop.tail_steps), a and
// b the low words of the wgmma descriptors of the stage's A rows and B tile - release it to the
// producers of the cluster, and finish the tile. desc_a and desc_b are those words for slot 0: a
// descriptor's start address is its low 14 bits in 16-byte units, and every shared address here
// lies under 2^18 bytes, so the other slots' are sums, with no carry out of the field (CUTLASS's
// GmmaDescriptor iterator steps alike); the high words (stride, swizzle) are the kernels'
// constants, so one register per operand stays live. tma_store() says whether C may leave by
// TMA stores, through the warpgroup's staging buffer (CBUF_BYTES each, from cbufs).
template <int BM, int BN, int STAGES, unsigned STAGE_BYTES, unsigned A_BYTES, unsigned CBUF_BYTES,
          int CLUSTER, int CLUSTER_N, int GROUP, int EPI_PIECE, int OUT_F32, int SPLITK,
          int PINGPONG, int KSTEPS, typename Ring, typename Grid, typename Mma, typename TmaStore>
__device__ __forceinline__ void consume_tiles(const Ring& ring, const Grid& cg,
                                              const TileLoop& loop, const PingPongTurn& turn,
                                              int cw, int t, unsigned desc_a, unsigned desc_b,
                                              Mma mma, TmaStore tma_store,
                                              const tc::TensorMap* tmC, unsigned cbufs,
                                              void* __restrict__ C, int M, int N, float alpha,
                                              float beta) {
    using namespace tc;
    using Roles = Consumers<BM, BN, SPLITK, PINGPONG>;
    constexpr int CONSUMERS = Roles::WARPGROUPS, HALVES = Roles::HALVES;
    auto full = [&](int s) { return ring.full(s); };
    auto empty = [&](int s) { return ring.empty(s); };
    int it = 0;
    __shared__ int last[CONSUMERS];
    int item = 0;  // ping-pong: this CTA's work items so far (warpgroup cw takes item % 2 == cw)
    for_each_work<SPLITK>(loop.cluster_id, loop.clusters, loop.units_m, loop.units_n, GROUP,
                          loop.nk, loop.splits, [&](const WorkItem& w) {
        const int kt0 = w.kt0, kt1 = w.kt1;
        const int j = item++;
        if (PINGPONG && (j & 1) != cw) {  // the other warpgroup's tile: skip its stages
            it += kt1 - kt0;
            return;
        }
        if (PINGPONG) turn.wait(cw, j);
        const int row0 = (w.m * CLUSTER + cg.rm) * BM;
        const int col0 = (w.n * CLUSTER_N + cg.rn) * BN;
        float d[HALVES][BN / 2];
#pragma unroll
        for (int h = 0; h < HALVES; ++h)
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[h][i] = 0.0f;
        // The stage use `it`'s slot and phase, stepped from here on rather than divided per stage,
        // and the slot of the stage before (released once this one's MMAs are issued and the
        // ones before them done). `ready`: the next stage's data seen in place while this one's
        // MMAs ran (test_wait, which does not block), so that stage starts without a try_wait -
        // the barrier's latency off the path from one stage's MMAs to the next's (cuBLASLt's
        // kernels test the next stage the same way).
        int s = it % STAGES, before = 0;
        unsigned phase = (it / STAGES) & 1;
        bool ready = false;
        // one stage: its MMAs (steps: Steps<n>, the K-steps that hold K), then the stage before
        // it back to the producers once those MMAs are done
        auto stage = [&](int kt, auto steps) {
            if (!ready) mbar_wait(full(s), phase);
            // descriptors count 16-byte units: slot s, and a cooperative warpgroup's 64 rows of A
            const unsigned off = s * (STAGE_BYTES >> 4), a_off = PINGPONG ? 0 : cw * (64 * 128 >> 4);
            wgmma_fence();
            // K-step by K-step, the 64-row blocks' MMAs alternating within each (CUTLASS's
            // order): a ping-pong warpgroup's two accumulators then make two independent chains
            // of MMAs rather than one after the other
#pragma unroll
            for (int kk = 0; kk < decltype(steps)::value; ++kk)
#pragma unroll
                for (int h = 0; h < HALVES; ++h)
                    mma(d[h], desc_a + off + a_off + h * (64 * 128 >> 4), desc_b + off, kk);
            wgmma_commit();
            const int used = s;
            if (++s == STAGES) s = 0, phase ^= 1u;
            ready = kt + 1 < kt1 && mbar_test_wait(full(s), phase);
            wgmma_wait<1>();
            if (kt > kt0) cg.release(t, [&] { return empty(before); });
            before = used;
        };
        static_assert(KSTEPS == 4, "a partial last K-tile takes 1, 2 or 3 K-steps");
        const int whole = kt1 < loop.nk_whole ? kt1 : loop.nk_whole;
        int kt = kt0;
        for (; kt < whole; ++kt, ++it) stage(kt, Steps<KSTEPS>{});
        if (kt < kt1) {  // the last K-tile, part past K: only the K-steps that hold K
            if (loop.tail_steps == 3) stage(kt, Steps<3>{});
            else if (loop.tail_steps == 2) stage(kt, Steps<2>{});
            else stage(kt, Steps<1>{});
            ++it;
        }
        // the other warpgroup may issue its item's MMAs now, queued behind these in the tensor
        // pipe: each warp is past item j's stage waits (CUTLASS's ping-pong arrives at its order
        // barrier once the mainloop is issued, before its tail waits for the last MMAs)
        if (PINGPONG) {
            __syncwarp();
            if (t % 32 == 0) turn.pass(cw);
        }
        wgmma_wait<0>();
        // an empty slice (more slices than K-tiles) consumed no stage: nothing to release
        if (kt1 > kt0) cg.release(t, [&] { return empty(before); });
#pragma unroll
        for (int h = 0; h < HALVES; ++h) fence_regs(d[h]);
        if constexpr (PINGPONG) {
            store_pingpong_tile<HALVES, BN, EPI_PIECE, OUT_F32>(
                d, tmC, cbufs + cw * CBUF_BYTES, 1 + cw, tma_store(), C, M, N, row0, col0, alpha,
                beta);
        } else {
            finish_tile<BM, BN, Grid::CTAS, EPI_PIECE, OUT_F32, SPLITK>(
                loop, w, cw, last, d[0], tmC, cbufs + cw * CBUF_BYTES, tma_store(), C, M, N, row0,
                col0, alpha, beta);
        }
    });
}

}  // namespace gemmlab
