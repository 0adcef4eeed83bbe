// cp.async helpers (sm_80+) shared by the pipelined FP32 kernels (double_buffered.cu and the
// shape-dispatch tile kernel built on it).
//
// GEMMLAB_HOST_EMULATION: the CPU emulation used by the tests (tests/emulate_cuda.py) compiles
// these sources with g++; there a cp.async is a synchronous copy (or zero fill) into the emulated
// shared memory, which the real asynchronous copy is allowed to behave like (waits only ever ask
// for data to have arrived). The GPU build never defines it.
#pragma once

namespace gemmlab {

#ifndef GEMMLAB_HOST_EMULATION

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    unsigned a;  // generic -> shared-window address (what cp.async's destination operand takes)
    asm("{ .reg .u64 u; cvta.to.shared.u64 u, %1; cvt.u32.u64 %0, u; }" : "=r"(a) : "l"(p));
    return a;
}

// cp.async with zero-fill: copies 4 or 16 bytes to shared-window address `dst` when `pred`, else
// writes zeros and reads nothing (src-size 0: `src` is not dereferenced, so it may point past
// the matrix). Destinations are 32-bit shared addresses computed once from the buffer's base:
// going through generic pointers costs 64-bit address math and a conversion per copy.
__device__ __forceinline__ void cp_async4(unsigned dst, const float* src, bool pred) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(pred ? 4 : 0));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const float* src, bool pred) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(pred ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
// Bytes of dynamic shared memory this launch was given.
__device__ __forceinline__ unsigned dynamic_smem_bytes() {
    unsigned b;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(b));
    return b;
}

#else  // GEMMLAB_HOST_EMULATION: see the note above

inline unsigned smem_addr(const void* p) { return emu::smem_offset(p); }
inline void cp_async4(unsigned dst, const float* src, bool pred) {
    emu::copy_to_smem(dst, src, pred, 4);
}
inline void cp_async16(unsigned dst, const float* src, bool pred) {
    emu::copy_to_smem(dst, src, pred, 16);
}
inline void cp_async_commit() {}
template <int N>
inline void cp_async_wait() {}
inline unsigned dynamic_smem_bytes() { return emu::dynamic_smem_size(); }

#endif

}  // namespace gemmlab
