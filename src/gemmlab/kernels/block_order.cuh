// The order in which blocks (or persistent CTAs) take the tiles of C, shared by the FP32 tile
// kernels, the BF16 cp.async rung and the persistent BF16 / FP8 rungs. Needs nothing but CUDA's built-in variables (no CUDA header: NVRTC compiles it).
#pragma once

namespace gemmlab {

// Tile u of a banded order over a rows x cols grid of tiles -> (m, n): bands of `group` rows are
// finished column by column before the next band starts, so the tiles in flight at one time share
// fewer distinct rows of A and columns of B (L2 reuse). The last band may be shorter.
__device__ __forceinline__ void grouped_tile(int u, int rows, int cols, int group, int& m, int& n) {
    const int per_band = group * cols;
    const int first = (u / per_band) * group;
    const int height = min(group, rows - first);
    const int in_band = u % per_band;
    m = first + in_band % height;
    n = in_band / height;
}

// One piece of a persistent CTA's work: tile (m, n) of the banded order over its K-tiles
// [kt0, kt1). `parts` pieces share the tile's K (1: the whole tile); this one is number `own` of
// them in K order. `key` numbers the shared tile (split-K: its place in the order; stream-K: its
// index among the stream-K tiles).
struct WorkItem {
    int m, n, kt0, kt1, parts, own, key;
};

// Stream-K: the cluster of [0, G) whose run of the I stream-K iterations holds iteration i, when
// cluster g runs [I * g / G, I * (g + 1) / G) - the largest g with I * g / G <= i.
__device__ __forceinline__ int sk_owner(long long i, long long I, int G) {
    return static_cast<int>(((i + 1) * G - 1) / I);
}

__device__ __forceinline__ long long sk_start(long long I, int g, int G) { return I * g / G; }

// Stream-K: how many clusters take a run of the I iterations - all G, or I when there are fewer
// iterations than clusters (every run then holds at least one: a cluster with an empty run would
// be counted among a tile's pieces and never arrive).
__device__ __forceinline__ int sk_runs(long long I, int G) {
    return static_cast<int>(min(static_cast<long long>(G), I));
}

// Stream-K: which of cluster g's two partial-sum slots its piece of stream-K tile j uses - 0 when
// the piece opens g's run (the run starts inside the tile or at its first K-tile), else 1 (it
// closes the run: a run holds at most two pieces of shared tiles, its first and its last).
__device__ __forceinline__ int sk_slot(long long I, int g, int G, int j, int nk) {
    return sk_start(I, g, G) >= static_cast<long long>(j) * nk ? 0 : 1;
}

// The work of cluster g of G in a persistent loop over units_m x tiles_n tiles (banded order,
// `group` rows a band) of nk K-tiles each; body(WorkItem) runs for each piece, in order.
//  * SPLITK = 0: tiles g, g + G, ... whole.
//  * SPLITK = 1 (split-K): `splits` pieces per tile, each a near-equal run of the K-tiles; piece u
//    is slice u % splits of tile u / splits (slices of a tile are neighbours, so they run at the
//    same time and few tiles are in flight); key = u / splits.
//  * SPLITK = 2 (stream-K): the last `splits` tiles of the order (all, if fewer) are cut into
//    (tile, K-tile) iterations, and each cluster runs an equal run of them: whole tiles where its
//    run covers one, pieces where a tile straddles two runs; key = the tile's index among them
//    (with fewer iterations than clusters, the first I clusters take one each).
//    The tiles before them run whole, round robin (data-parallel). Every cluster then does the
//    same work to within one iteration: no last wave of tiles with idle SMs.
template <int SPLITK, typename F>
__device__ __forceinline__ void for_each_work(int g, int G, int rows, int cols, int group, int nk,
                                              int splits, F&& body) {
    WorkItem w{};
    if constexpr (SPLITK == 2) {
        const int units = rows * cols, sk = min(splits, units), dp = units - sk;
        for (int u = g; u < dp; u += G) {
            grouped_tile(u, rows, cols, group, w.m, w.n);
            w.kt0 = 0, w.kt1 = nk, w.parts = 1, w.own = 0, w.key = u;
            body(w);
        }
        const long long I = static_cast<long long>(sk) * nk;
        const int R = sk_runs(I, G);
        if (g >= R) return;
        const long long first = sk_start(I, g, R), end = sk_start(I, g + 1, R);
        for (long long s = first; s < end;) {
            const int j = static_cast<int>(s / nk);
            const long long t0 = static_cast<long long>(j) * nk;
            const int lo = sk_owner(t0, I, R), hi = sk_owner(t0 + nk - 1, I, R);
            grouped_tile(dp + j, rows, cols, group, w.m, w.n);
            w.kt0 = static_cast<int>(s - t0);
            w.kt1 = static_cast<int>(min(static_cast<long long>(nk), end - t0));
            w.parts = hi - lo + 1, w.own = g - lo, w.key = j;
            body(w);
            s = t0 + w.kt1;
        }
    } else {
        const int per = SPLITK ? splits : 1;
        for (int u = g; u < rows * cols * per; u += G) {
            const int tile = u / per, ks = u - tile * per;
            grouped_tile(tile, rows, cols, group, w.m, w.n);
            w.kt0 = static_cast<int>(static_cast<long long>(nk) * ks / per);
            w.kt1 = static_cast<int>(static_cast<long long>(nk) * (ks + 1) / per);
            w.parts = per, w.own = ks, w.key = tile;
            body(w);
        }
    }
}

// Which tile of C this block computes. GROUP = 0: blockIdx as is (x along N, y along M);
// GROUP > 0: the banded order above over the grid, block id as u.
template <int GROUP>
__device__ __forceinline__ void block_tile(int& tile_m, int& tile_n) {
    tile_m = blockIdx.y;
    tile_n = blockIdx.x;
    if constexpr (GROUP > 0)
        grouped_tile(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, GROUP, tile_m,
                     tile_n);
}

}  // namespace gemmlab
