// Device helpers shared by the BF16 tensor-core ladder (wmma_bf16, mma_sync_bf16, later rungs).
//
// Conventions for every tensor-core kernel in this directory:
//   C = alpha * A * B + beta * C. A is M x K row-major bfloat16, B is K x N row-major bfloat16
//   (the "NN" layout, as the FP32 ladder), products accumulate in FP32, C is M x N row-major,
//   bfloat16 (OUT_F32 = 0, the default) or float32 (OUT_F32 = 1).
//   bfloat16 values travel as their 16-bit patterns (unsigned short): CuPy has no bfloat16
//   dtype, and no CUDA header is included (NVRTC compiles these sources as they are), so every
//   tensor-core and conversion instruction is written as inline PTX below.
//   Any M, N, K >= 1: global accesses are guarded and out-of-range tile elements are zeros.
//   beta == 0 follows BLAS: C is not read.
#pragma once

namespace gemmlab {
namespace tc {

typedef unsigned short bf16;  // the bit pattern of one bfloat16

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }

// bfloat16 -> float is exact: the bf16 bits are the float's top 16 bits (mov.b32 reinterprets
// the shifted bits as a float; PTX rather than __uint_as_float keeps NVRTC header-free).
__device__ __forceinline__ float bf16_to_f32(bf16 x) {
    float f;
    asm("mov.b32 %0, %1;" : "=f"(f) : "r"(static_cast<unsigned>(x) << 16));
    return f;
}

// float -> bfloat16, round to nearest even, NaN kept NaN: cvt.rn.bf16.f32 (sm_80+).
__device__ __forceinline__ bf16 f32_to_bf16(float x) {
    bf16 r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
}

// Generic -> shared-window address (cvta.to.shared), the form ldmatrix/cp.async/wmma take.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    unsigned a;
    asm("{ .reg .u64 u; cvta.to.shared.u64 u, %1; cvt.u32.u64 %0, u; }" : "=r"(a) : "l"(p));
    return a;
}

// One element of the epilogue: alpha * acc + beta * C, C read only when beta != 0, rounded
// once (to bf16 with OUT_F32 = 0).
template <int OUT_F32>
__device__ __forceinline__ void store_out(void* __restrict__ C, int idx, float acc, float alpha,
                                          float beta) {
    if (OUT_F32) {
        float* c = static_cast<float*>(C);
        c[idx] = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * c[idx];
    } else {
        bf16* c = static_cast<bf16*>(C);
        const float v = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * bf16_to_f32(c[idx]);
        c[idx] = f32_to_bf16(v);
    }
}

// Eight consecutive bf16 of row `r`, columns c..c+7, of a rows x cols row-major matrix, as one
// 16-byte value; zeros where out of range.
//   VEC = 1: one 16-byte load (ld.global.v4.u32). Needs cols % 8 == 0, c % 8 == 0 and a
//            16-byte aligned base, so a chunk is either wholly inside the row or wholly out.
//   VEC = 0: eight guarded 2-byte loads (any shape, any alignment).
template <int VEC>
__device__ __forceinline__ uint4 load_chunk(const bf16* __restrict__ p, int r, int c, int rows,
                                            int cols) {
    if (VEC) {
        if (r < rows && c < cols) return *reinterpret_cast<const uint4*>(p + r * cols + c);
        return make_uint4(0u, 0u, 0u, 0u);
    }
    unsigned w[4] = {0u, 0u, 0u, 0u};
    if (r < rows) {
        const bf16* row = p + r * cols;
#pragma unroll
        for (int e = 0; e < 8; ++e)
            if (c + e < cols) w[e / 2] |= static_cast<unsigned>(row[c + e]) << (16 * (e % 2));
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// ---- WMMA (warp-level matrix multiply-accumulate, what nvcuda::wmma compiles to) ----------
// m16n16k16, bf16 inputs, f32 accumulator. A fragment and B fragment: 4 x b32 (8 bf16) per
// lane; accumulator: 8 x f32 per lane. Layout of each lane's elements is opaque (as in
// nvcuda::wmma); only load/mma/store touch it. Shared addresses must be 32-byte aligned and
// the leading dimension (elements) a multiple of 8 (16-bit) or 4 (32-bit).
struct WmmaA { unsigned x[4]; };
struct WmmaB { unsigned x[4]; };
struct WmmaC { float x[8]; };

// wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16: a 16x16 row-major A tile, ldm elements.
__device__ __forceinline__ void wmma_load_a(WmmaA& f, const bf16* p, int ldm) {
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3])
                 : "r"(smem_addr(p)), "r"(ldm));
}

// wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16: a 16x16 row-major (K x N) B tile.
__device__ __forceinline__ void wmma_load_b(WmmaB& f, const bf16* p, int ldm) {
    asm volatile("wmma.load.b.sync.aligned.row.m16n16k16.shared.bf16 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3])
                 : "r"(smem_addr(p)), "r"(ldm));
}

// wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32: d = a * b + d.
__device__ __forceinline__ void wmma_mma(WmmaC& d, const WmmaA& a, const WmmaB& b) {
    asm volatile(
        "wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, "
        "{%0,%1,%2,%3,%4,%5,%6,%7};"
        : "+f"(d.x[0]), "+f"(d.x[1]), "+f"(d.x[2]), "+f"(d.x[3]), "+f"(d.x[4]), "+f"(d.x[5]),
          "+f"(d.x[6]), "+f"(d.x[7])
        : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[0]), "r"(b.x[1]),
          "r"(b.x[2]), "r"(b.x[3]));
}

// wmma.store.d.sync.aligned.row.m16n16k16.shared.f32: the accumulator to a row-major f32 tile.
__device__ __forceinline__ void wmma_store(float* p, const WmmaC& d, int ldm) {
    asm volatile(
        "wmma.store.d.sync.aligned.row.m16n16k16.shared.f32 [%0], "
        "{%1,%2,%3,%4,%5,%6,%7,%8}, %9;" ::"r"(smem_addr(p)),
        "f"(d.x[0]), "f"(d.x[1]), "f"(d.x[2]), "f"(d.x[3]), "f"(d.x[4]), "f"(d.x[5]),
        "f"(d.x[6]), "f"(d.x[7]), "r"(ldm)
        : "memory");
}

// ---- mma.sync + ldmatrix (explicit fragments, sm_80+) --------------------------------------

// ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8x8 b16 matrices; lane l gives the address
// of row (l % 8) of matrix (l / 8); each lane receives 2 consecutive elements of each matrix
// (row lane/4, columns 2*(lane%4) + {0,1}). Used for A (row-major M x K tiles).
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16: the same four matrices transposed, so a
// row-major K x N tile of B yields the "col" (K-major) fragments mma.sync wants.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: d(16x8, f32) += a(16x16) * b(16x8).
// a: 4 x b32 (rows g and g+8, k pairs 0-7 and 8-15, g = lane / 4); b: 2 x b32; d: 4 x f32
// holding rows g (d[0], d[1]) and g + 8 (d[2], d[3]), columns 2 * (lane % 4) + {0, 1}.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const unsigned (&a)[4],
                                               unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// cp.async.cg.shared.global [dst], [src], 16, src_bytes: a 16-byte global -> shared copy that
// bypasses L1; bytes beyond src_bytes (0 or 16 here) are written as zeros, so an
// out-of-range chunk costs no global access and lands as zeros.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}
// cp.async.commit_group / cp.async.wait_group N: close a batch of copies / wait until at most
// N batches are still in flight.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N)); }

// XOR swizzle of 16-byte chunks within a shared-memory row (no PTX: address arithmetic).
// A row of CHUNKS 16-byte chunks; chunk c of row r is stored at chunk c ^ f(r), where f mixes
// in as many row bits as it takes for the 8 rows one ldmatrix phase reads at one logical chunk
// to land on 8 distinct 16-byte slots of a 128-byte bank line (no bank conflict):
//   CHUNKS = 4 (64-byte rows, two rows per bank line): f(r) = (r / 2) % 4;
//   CHUNKS >= 8 (rows of >= 128 bytes):                 f(r) = r % 8.
template <int CHUNKS>
__device__ __forceinline__ int swz_chunk(int r, int c) {
    static_assert(CHUNKS == 4 || (CHUNKS >= 8 && CHUNKS % 8 == 0), "swizzle: 4 or 8k chunks");
    return CHUNKS == 4 ? (c ^ ((r >> 1) & 3)) : (c ^ (r & 7));
}

}  // namespace tc
}  // namespace gemmlab
