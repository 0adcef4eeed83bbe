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

// Work unit u of a persistent split-K loop -> its tile (a unit of the banded order above) and its
// K-tiles [kt0, kt1): with SPLITK, unit u is slice u % splits of tile u / splits, the nk K-tiles
// cut into `splits` near-equal runs (slices of one tile are neighbours in u, so they run at the
// same time and the tiles in flight stay few); without, tile u over all nk K-tiles.
template <int SPLITK>
__device__ __forceinline__ void split_unit(int u, int splits, int nk, int rows, int cols, int group,
                                           int& m, int& n, int& ks, int& kt0, int& kt1) {
    int tile = u;
    ks = 0;
    if constexpr (SPLITK) {
        tile = u / splits;
        ks = u - tile * splits;
    }
    grouped_tile(tile, rows, cols, group, m, n);
    kt0 = SPLITK ? static_cast<int>(static_cast<long long>(nk) * ks / splits) : 0;
    kt1 = SPLITK ? static_cast<int>(static_cast<long long>(nk) * (ks + 1) / splits) : nk;
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
