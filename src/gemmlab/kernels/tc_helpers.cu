// The copy that may run before the tensor-core dispatch rungs' main kernel (dispatch_bf16,
// dispatch_fp8; gemmlab.runtime.dispatch_tc). It runs inside the dispatched call, so a timer
// around the call counts it.
//
// repitch<T>: copies a rows x cols matrix of T (row pitch `ld_in` elements) into a buffer whose
//   rows are `ld_out` elements apart (ld_out * sizeof(T) a multiple of 16, the buffer 16-byte
//   aligned), so TMA - which needs 16-byte row pitches and a 16-byte aligned start - can read an
//   operand whose K (or N) is not a multiple of 8 bf16 / 16 e4m3, or that starts off a 16-byte
//   boundary. Columns cols .. ld_out - 1 are not written: the tensor map keeps the logical extent
//   `cols` and TMA fills reads past it with zeros. Block (x, y) copies 4 * 256 consecutive
//   elements of rows y, y + gridDim.y, ...; lane i of a warp touches elements i, i + 256, ...:
//   every warp access is contiguous.


namespace gemmlab {

template <typename T>
__device__ __forceinline__ void repitch(int rows, int cols, long long ld_in, long long ld_out,
                                        const T* __restrict__ src, T* __restrict__ dst) {
    constexpr int PER_THREAD = 4;
    const int c0 = blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    for (int r = blockIdx.y; r < rows; r += gridDim.y) {
        const T* s = src + r * ld_in;
        T* d = dst + r * ld_out;
#pragma unroll
        for (int i = 0; i < PER_THREAD; ++i) {
            const int c = c0 + i * blockDim.x;
            if (c < cols) d[c] = s[c];
        }
    }
}

}  // namespace gemmlab
