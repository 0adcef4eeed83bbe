// The order in which blocks take the tiles of C, shared by the FP32 tile kernels and the BF16
// cp.async rung. Needs nothing but CUDA's built-in variables (no CUDA header: NVRTC compiles it).
#pragma once

namespace gemmlab {

// Which tile of C this block computes. GROUP = 0: blockIdx as is (x along N, y along M).
// GROUP > 0: consecutive blocks walk down a band of GROUP tile-rows before moving right, so the
// blocks resident at one time share fewer distinct rows of A and columns of B (L2 reuse).
template <int GROUP>
__device__ __forceinline__ void block_tile(int& tile_m, int& tile_n) {
    tile_m = blockIdx.y;
    tile_n = blockIdx.x;
    if constexpr (GROUP > 0) {
        const int id = blockIdx.y * gridDim.x + blockIdx.x;
        const int per_band = GROUP * gridDim.x;
        const int first_m = (id / per_band) * GROUP;
        const int band_rows = min(int(gridDim.y) - first_m, GROUP);
        tile_m = first_m + (id % per_band) % band_rows;
        tile_n = (id % per_band) / band_rows;
    }
}

}  // namespace gemmlab
