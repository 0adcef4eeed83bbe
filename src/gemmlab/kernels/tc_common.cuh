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
#include "tc_wgmma.cuh"

namespace gemmlab {
namespace tc {

typedef unsigned short bf16;  // the bit pattern of one bfloat16

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }

template <int N>
struct Steps {  // a compile-time count of MMA K-steps
    static constexpr int value = N;
};

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


// ---- Hopper (sm_90): mbarrier, TMA, clusters; wgmma and setmaxnreg need sm_90a ------------
// The 128-byte CUtensorMap that cuTensorMapEncodeTiled fills on the host. Kernels take it by
// value as a __grid_constant__ parameter, so the TMA unit reads it from parameter space.
struct __align__(64) TensorMap { unsigned long long bits[16]; };

// mbarrier.init.shared::cta.b64: a barrier whose phase completes after `count` arrivals (and,
// for TMA, after the transaction bytes announced by expect_tx have landed).
__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// fence.mbarrier_init.release.cluster: makes initialised barriers visible to the async proxy
// (TMA) and to the other CTAs of the cluster.
__device__ __forceinline__ void fence_mbar_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// mbarrier.arrive.expect_tx.shared::cta.b64: arrive once and announce `bytes` of TMA traffic.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}
// mbarrier.arrive.shared::cta.b64: one arrival on this CTA's barrier.
__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// mapa + mbarrier.arrive.shared::cluster.b64: one arrival on the barrier at the same shared
// offset in CTA `cta` of the cluster (the local CTA included). The default semantics (release
// at CTA scope) are enough for "I am done reading this stage": what precedes it are wgmma reads
// of shared memory, already retired by wgmma.wait_group. A .release.cluster arrival would also
// wait for every earlier global store of the thread (the previous tile's epilogue) to become
// visible cluster-wide - measured on the H100, that cost the persistent rung a third of its
// speed at 4096^3.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta) {
    asm volatile(
        "{ .reg .b32 ra; mapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [ra]; }" ::"r"(bar), "r"(cta)
        : "memory");
}
// mbarrier.try_wait.parity.shared::cta.b64: true once the phase with parity `parity` completed.
__device__ __forceinline__ bool mbar_try_wait(unsigned bar, unsigned parity) {
    unsigned ok;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
    return ok != 0;
}
// mbarrier.test_wait.parity.shared::cta.b64: the same question without waiting (a look ahead at
// the next stage while this one's MMAs run)
__device__ __forceinline__ bool mbar_test_wait(unsigned bar, unsigned parity) {
    unsigned ok;
    asm volatile(
        "{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
    return ok != 0;
}
__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    while (!mbar_try_wait(bar, parity)) {
    }
}

// cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes: the TMA
// unit copies the box at coordinates (c0 innermost, c1) of the tensor map into shared memory at
// dst (swizzled as the map says) and counts the bytes on the barrier. Out-of-range elements of
// the box are written as zeros (and still counted), so edge tiles need no guards.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, unsigned bar,
                                            int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst), "l"(map), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}
// The same copy with .multicast::cluster: the box lands at dst (and its bytes on the barrier
// at bar) in every CTA of the cluster whose bit is set in `mask`.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TensorMap* map,
                                                      unsigned bar, int c0, int c1,
                                                      unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(dst), "l"(map), "r"(bar),
        "r"(c0), "r"(c1), "h"(mask)
        : "memory");
}
// cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: the TMA unit writes the box at src
// (laid out and swizzled as the map says) to coordinates (c0, c1) of the tensor; elements
// outside the tensor are not written. Completion is tracked per thread by bulk groups.
__device__ __forceinline__ void tma_store_2d(const TensorMap* map, unsigned src, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
        ::"l"(map), "r"(src), "r"(c0), "r"(c1) : "memory");
}
// cp.async.bulk.commit_group: closes this thread's batch of bulk copies.
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// cp.async.bulk.wait_group.read N: at most N batches still reading their shared source (the
// buffer may be rewritten); without .read: at most N batches not yet complete in global memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// bar.sync id, count: a named barrier for `count` threads (one warpgroup: 128), so a warpgroup
// can synchronise without stopping the others (id 0 is __syncthreads).
__device__ __forceinline__ void named_barrier(unsigned id, unsigned count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// prefetch.tensormap: bring the tensor map into the TMA unit's cache before the first copy.
__device__ __forceinline__ void prefetch_tensormap(const TensorMap* map) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// %cluster_ctarank: this CTA's rank within its cluster.
__device__ __forceinline__ unsigned cluster_ctarank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// barrier.cluster.arrive.release + barrier.cluster.wait.acquire: every thread of every CTA of
// the cluster meets here (shared memory of the others is then safe to use / to leave).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;"
                 ::: "memory");
}
// The same meeting without ordering this thread's earlier memory operations for the others
// (barrier.cluster.arrive.relaxed): the persistent kernels' start, where fence_mbar_init has
// already released the barriers' initialisation to the cluster - the release would make every
// thread wait for nothing it needs.
__device__ __forceinline__ void cluster_sync_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
}
// The producer's tail (the persistent kernels with clusters): wait until the consumers of every
// CTA of the cluster have released the last STAGES of the `uses` stage uses - the other CTAs'
// arrivals on this CTA's "empty" barriers included - so the CTA cannot leave while a peer still
// signals it. (What a peer multicasts into this CTA lands before this CTA's consumers read it.)
template <int STAGES, typename Empty>
__device__ __forceinline__ void producer_tail(int uses, Empty empty) {
    for (int k = uses > STAGES ? uses - STAGES : 0; k < uses; ++k)
        mbar_wait(empty(k % STAGES), (k / STAGES) & 1);
}

// A cluster of CM x CN CTAs of the persistent kernels, launched as one dimension: rank = rm +
// CM * rn, rm along M and rn along N. The CM CTAs of one column (same rn) compute tiles of the
// same columns of C and share B's tile: each copies 1/CM of it and multicasts it to the column.
// The CN CTAs of one row (same rm) share A's tile alike. So a CTA's stage is written by its row
// and its column - CM + CN - 1 CTAs, itself included - and may be refilled only once the
// consumers of all of them have released it: each consumer warpgroup arrives on the "empty"
// barrier of each of those PEERS CTAs (thread t < PEERS signals peer(t)).
template <int CM, int CN>
struct ClusterGrid {
    static constexpr int CTAS = CM * CN, PEERS = CM + CN - 1;
    unsigned rank, rm, rn;
    __device__ __forceinline__ ClusterGrid()
        : rank(CTAS > 1 ? cluster_ctarank() : 0u), rm(CN == 1 ? rank : rank % CM),
          rn(CN == 1 ? 0u : rank / CM) {}
    // the CTAs B's share is multicast to: this CTA's column
    __device__ __forceinline__ unsigned short column_mask() const {
        return static_cast<unsigned short>(((1u << CM) - 1) << (rn * CM));
    }
    // the CTAs A's share is multicast to: this CTA's row
    __device__ __forceinline__ unsigned short row_mask() const {
        unsigned m = 0;
#pragma unroll
        for (int j = 0; j < CN; ++j) m |= 1u << (rm + j * CM);
        return static_cast<unsigned short>(m);
    }
    // the CTA whose stage consumer thread t (< PEERS) releases: the row (t < CN), then the
    // column without this CTA
    __device__ __forceinline__ unsigned peer(int t) const {
        if (CN == 1) return static_cast<unsigned>(t);
        if (t < CN) return rm + static_cast<unsigned>(t) * CM;
        const unsigned i = static_cast<unsigned>(t - CN);
        return i + (i >= rm ? 1u : 0u) + rn * CM;
    }
    // a consumer warpgroup's release of a stage: thread t < PEERS arrives on peer(t)'s copy of
    // the "empty" barrier whose address in this CTA bar() gives (computed only by those threads)
    template <typename Bar>
    __device__ __forceinline__ void release(int t, Bar bar) const {
        if (t < PEERS) mbar_arrive_cluster(bar(), peer(t));
    }
    // The A tile of a stage at `dst` (K-major rows of 128 bytes from row0, k coordinate kx), on
    // barrier `bar`: with CN > 1 this CTA's A_ROWS of them, multicast to its row of the cluster.
    template <int A_ROWS>
    __device__ __forceinline__ void load_a(unsigned dst, const TensorMap* map, unsigned bar, int kx,
                                           int row0) const {
        if (CN > 1)
            tma_load_2d_multicast(dst + rn * A_ROWS * 128, map, bar, kx, row0 + rn * A_ROWS,
                                  row_mask());
        else
            tma_load_2d(dst, map, bar, kx, row0);
    }
};

// The persistent kernels' shared memory: STAGES stages of STAGE_BYTES from the first 1 KB
// boundary (the 128-byte swizzle's atoms), the CONSUMERS epilogue buffers of CBUF_BYTES, then a
// "full" and an "empty" mbarrier per stage. init() (every thread): thread 0 prefetches the two
// operand maps and initialises the barriers - one arrival (the producer's) per "full",
// `releases` per "empty" - and the cluster (CTAS > 1) or the CTA meets.
template <int STAGES, unsigned STAGE_BYTES, int CONSUMERS, unsigned CBUF_BYTES>
struct StageRing {
    unsigned base, cbufs, bars;
    explicit __device__ __forceinline__ StageRing(const void* smem)
        : base((smem_addr(smem) + 1023u) & ~1023u),
          cbufs(base + STAGES * STAGE_BYTES),  // 1 KB aligned: stages are whole KBs
          bars(cbufs + CONSUMERS * CBUF_BYTES) {}
    __device__ __forceinline__ unsigned full(int s) const { return bars + 8u * s; }
    __device__ __forceinline__ unsigned empty(int s) const { return bars + 8u * (STAGES + s); }
    template <int CTAS>
    __device__ __forceinline__ void init(const TensorMap& a, const TensorMap& b,
                                         unsigned releases) const {
        if (threadIdx.x == 0) {
            prefetch_tensormap(&a);
            prefetch_tensormap(&b);
            for (int s = 0; s < STAGES; ++s) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), releases);
            }
            fence_mbar_init();
        }
        if (CTAS > 1) cluster_sync_relaxed(); else __syncthreads();
    }
};

// A wgmma shared-memory matrix descriptor (PTX "matrix-descriptor-encode") for a tile stored
// with the 128-byte swizzle (the layout TMA writes with CU_TENSOR_MAP_SWIZZLE_128B and
// swz_chunk<8> produces): start address, leading- and stride-dimension byte offsets, all >> 4,
// swizzle mode 1 (128B) in bits 62-63. The tile must start on a 1024-byte boundary (plus the
// in-atom K offset).
//   K-major (A; B of the FP8 rung): rows of 64 bf16 (128 bytes), 8-row atoms of 1024 bytes;
//     sbo = 1024 (next 8 rows), lbo unused (one instruction's K fits in the 128-byte row).
//   N-major (B as a row-major K x N tile, TRANS_B = 1): 64-column chunks of K rows x 128 bytes;
//     lbo = bytes between 64-column chunks, sbo = 1024 (next 8 K rows).
// mode 2 is the 64-byte swizzle (CU_TENSOR_MAP_SWIZZLE_64B): N-major chunks of 32 columns, K rows
// x 64 bytes, 512-byte atoms; lbo = bytes between 32-column chunks, sbo = 512 (CUTLASS's
// make_gmma_desc<Major::MN>, LayoutType::B64: ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))).
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned lbo,
                                                         unsigned sbo, unsigned mode = 1) {
    return static_cast<unsigned long long>((addr & 0x3FFFF) >> 4) |
           (static_cast<unsigned long long>((lbo & 0x3FFFF) >> 4) << 16) |
           (static_cast<unsigned long long>((sbo & 0x3FFFF) >> 4) << 32) |
           (static_cast<unsigned long long>(mode) << 62);
}
// wgmma_desc in two words: the low one (start address, leading byte offset), which moves with
// the stage and the K-step, and the high one (stride byte offset, swizzle), a constant.
__device__ __forceinline__ unsigned desc_low(unsigned addr, unsigned lbo) {
    return static_cast<unsigned>(wgmma_desc(addr, lbo, 0, 0));
}
__device__ __forceinline__ unsigned long long desc_with(unsigned low, unsigned sbo,
                                                        unsigned mode = 1) {
    return wgmma_desc(0, 0, sbo, mode) | low;
}
// wgmma.fence.sync.aligned: orders register/shared accesses before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
// wgmma.commit_group.sync.aligned: closes the batch of wgmma issued so far.
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
// wgmma.wait_group.sync.aligned N: waits until at most N batches are in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Makes accumulator registers written by wgmma visible to ordinary code (and vice versa): the
// compiler must not move accesses to d across the asynchronous wgmma.
template <int R>
__device__ __forceinline__ void fence_regs(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// setmaxnreg.inc/dec.sync.aligned.u32: a warpgroup raises (consumers) or lowers (the TMA
// producer) its register budget; needs a register cap at entry (__launch_bounds__(T, 1)).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}
// fence.proxy.async.shared::cta: ordinary shared stores (cp.async, st.shared) become visible to
// the async proxy (wgmma reading shared memory) - needed before a barrier that hands such a
// tile to wgmma.
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Rows of a K-major operand (rows of 128 bytes of K) that one TMA box copies into a tile of ROWS
// rows: ROWS, or M where the whole operand has fewer rows than the tile (a few tokens) - so the
// copy engine never fills rows past M, which cost it time per row (docs/kernels.md, "Rows past
// M"). The swapped decode kernel's token tiles (decode_wgmma.cu); the host encodes the map's box
// alike (gemmlab.runtime.tma.box_rows), and the rows the box leaves out are zeroed once per stage
// (zero_rows) and stay zero. The persistent tiles take a second map instead (a_box below).
template <int ROWS>
__device__ __forceinline__ int box_rows(int M) {
    return M < ROWS ? M : ROWS;
}

// Rows [from, to) (128 bytes each) of the tile at `tile` in each of STAGES stages STAGE_BYTES
// apart, zeroed by `threads` threads (this one is number `i0` of them) and made visible to wgmma
// (the async proxy): before the barrier - a block barrier, or the stage's "full" mbarrier that
// the zeroing threads' warp then arrives on - that hands the ring to the consumers.
template <int STAGES, unsigned STAGE_BYTES>
__device__ __forceinline__ void zero_rows(unsigned tile, int from, int to, int i0, int threads) {
    const int chunks = (to - from) * 8;  // 16-byte chunks per stage
    for (int s = 0; s < STAGES; ++s)
        for (int i = i0; i < chunks; i += threads)
            asm volatile("st.shared.v4.b32 [%0], {%1, %1, %1, %1};" ::"r"(
                             tile + s * STAGE_BYTES + from * 128u + 16u * i),
                         "r"(0u)
                         : "memory");
    fence_proxy_async();
}

// The persistent kernels' copy of A for a tile whose rows start at row0: without clusters
// (CTAS == 1), on the row-tile that holds fewer than BM rows of A (the last; every tile where M <
// BM), the map `last` whose boxes hold just those rows (gemmlab.runtime.tma.last_rows_spec), so
// the copy engine fills no rows past M - each cost it time on every stage (docs/kernels.md, "Rows
// past M"); elsewhere `whole`. Returns the bytes a stage of the tile expects. A stage's rows past
// M keep what the ring held: wgmma makes row r of C from row r of A alone, and no epilogue stores
// C's rows past M. Clustered CTAs copy fixed shares of the rows: whole boxes.
template <int BM, int CTAS, unsigned STAGE_BYTES>
__device__ __forceinline__ unsigned a_box(const TensorMap& whole, const TensorMap& last, int row0,
                                          int M, const TensorMap*& map) {
    const int rows = M - row0;
    map = CTAS == 1 && rows < BM ? &last : &whole;
    return CTAS == 1 && rows < BM ? STAGE_BYTES - (BM - rows) * 128u : STAGE_BYTES;
}

// Two adjacent outputs (row r, columns c and c + 1) from wgmma/mma.sync accumulators: alpha * v
// + beta * C, C read only when beta != 0, one packed 4-byte (bf16x2, cvt.rn.bf16x2.f32) or
// 8-byte (f32) store when both columns are inside and the pair's address is aligned, guarded
// element stores otherwise.
template <int OUT_F32>
__device__ __forceinline__ void store_pair(void* __restrict__ C, int M, int N, int r, int c,
                                           float v0, float v1, float alpha, float beta) {
    if (r >= M || c >= N) return;
    const int idx = r * N + c;
    const unsigned long long at = reinterpret_cast<unsigned long long>(C) +
                                  static_cast<unsigned long long>(idx) * (OUT_F32 ? 4 : 2);
    if (c + 1 < N && at % (OUT_F32 ? 8 : 4) == 0) {
        if (OUT_F32) {
            float2* p = reinterpret_cast<float2*>(static_cast<float*>(C) + idx);
            float2 o = make_float2(alpha * v0, alpha * v1);
            if (beta != 0.0f) {
                const float2 old = *p;
                o.x += beta * old.x;
                o.y += beta * old.y;
            }
            *p = o;
        } else {
            unsigned* p = reinterpret_cast<unsigned*>(static_cast<bf16*>(C) + idx);
            float o0 = alpha * v0, o1 = alpha * v1;
            if (beta != 0.0f) {
                const unsigned old = *p;
                o0 += beta * bf16_to_f32(static_cast<bf16>(old & 0xFFFFu));
                o1 += beta * bf16_to_f32(static_cast<bf16>(old >> 16));
            }
            unsigned packed;  // cvt.rn.bf16x2.f32 d, hi, lo: hi -> upper half
            asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(o1), "f"(o0));
            *p = packed;
        }
        return;
    }
    store_out<OUT_F32>(C, idx, v0, alpha, beta);
    if (c + 1 < N) store_out<OUT_F32>(C, idx + 1, v1, alpha, beta);
}

// The epilogue of one warpgroup's m64 x BN accumulator tile (layout in tc_wgmma.cuh) whose
// first row is r0 and first column c0.
template <int BN, int OUT_F32>
__device__ __forceinline__ void store_wgmma_tile(void* __restrict__ C, int M, int N, int r0,
                                                 int c0, const float (&d)[BN / 2], float alpha,
                                                 float beta) {
    const int t = threadIdx.x % 128;
    const int r = r0 + 16 * (t / 32) + (t % 32) / 4, c = c0 + 2 * (t % 4);
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        store_pair<OUT_F32>(C, M, N, r, c + 8 * j, d[4 * j], d[4 * j + 1], alpha, beta);
        store_pair<OUT_F32>(C, M, N, r + 8, c + 8 * j, d[4 * j + 2], d[4 * j + 3], alpha, beta);
    }
}


// The fixup of a tile whose K several pieces share - stream-K's (SPLITK = 2) and split-K's
// (SPLITK = 1: the slices) - for one consumer warpgroup's 64 x BN accumulator tile, piece `own`
// of the `parts` pieces: the warpgroup stores its float32 partial sums to its slot (slot(own):
// 64 x BN floats in the registers' own order - thread t's d[4q .. 4q + 3] at float4 q * 128 + t,
// so every store and load is a whole 512-byte line per instruction), makes them visible
// device-wide and counts its arrival. The warpgroup that arrives last adds all the pieces in K
// order 0, 1, ..., parts - 1 into d, the others' from L2 (other SMs wrote them) - the same sum
// whichever arrives last - resets the counter for the next call and returns true: d is then the
// whole tile's sum, for the rung's usual epilogue. The others return false.
__device__ __forceinline__ float4 ld_cg4(const float4* p) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

template <int BN, typename Slot>
__device__ __forceinline__ bool streamk_fixup(Slot slot, int parts, int own, unsigned* counter,
                                              volatile int* flag, unsigned bar_id,
                                              float (&d)[BN / 2], bool live = true) {
    const int t = threadIdx.x % 128;
    float4* mine = reinterpret_cast<float4*>(slot(own));
    // live: this thread holds a row of C (a thread whose rows all lie past M neither parks nor
    // adds - the epilogue drops those rows - so a few tokens move a few rows, not 64)
    if (live) {
#pragma unroll
        for (int q = 0; q < BN / 8; ++q)
            mine[q * 128 + t] = make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]);
    }
    __threadfence();
    named_barrier(bar_id, 128);
    if (t == 0) *flag = atomicAdd(counter, 1u) == static_cast<unsigned>(parts - 1);
    named_barrier(bar_id, 128);
    if (!*flag) return false;
    __threadfence();
    if (!live) {
        if (t == 0) *counter = 0u;
        return true;
    }
    // eight float4 of a piece per batch, all eight loads issued before any is added: one L2 round
    // trip per piece and batch. The sum runs p0 + p1 + ... left to right, so its bits do not
    // depend on which piece arrives last. Piece 0 starts each batch: from registers when this is
    // piece 0 (stream-K's usual last: piece 0 closes its run, the others open theirs), else from
    // L2 like the rest (holding this piece as well would spill 128 x 256).
#pragma unroll
    for (int q0 = 0; q0 < BN / 8; q0 += 8) {
        float4 acc[8];
        const float4* first = reinterpret_cast<const float4*>(slot(0));
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int q = q0 + j;  // BN = 160: 20 float4, batches of 8
            acc[j] = q >= BN / 8 ? make_float4(0.0f, 0.0f, 0.0f, 0.0f)
                     : own == 0  ? make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3])
                                 : ld_cg4(first + q * 128 + t);
        }
#pragma unroll 1
        for (int z = 1; z < parts; ++z) {
            const float4* from = reinterpret_cast<const float4*>(slot(z));
            float4 v[8];
#pragma unroll
            for (int j = 0; j < 8; ++j)
                v[j] = q0 + j < BN / 8 ? ld_cg4(from + (q0 + j) * 128 + t)
                                       : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                acc[j].x += v[j].x, acc[j].y += v[j].y, acc[j].z += v[j].z,
                acc[j].w += v[j].w;
            }
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int q = q0 + j;
            if (q >= BN / 8) continue;
            d[4 * q] = acc[j].x, d[4 * q + 1] = acc[j].y, d[4 * q + 2] = acc[j].z,
            d[4 * q + 3] = acc[j].w;
        }
    }
    if (t == 0) *counter = 0u;  // every piece has arrived: ready for the next call
    return true;
}


// The epilogue of one warpgroup's 64 x BN bf16 tile through shared memory and TMA stores, for
// beta == 0 (nothing of C is read). The tile goes out in pieces of PIECE columns: the warpgroup
// writes alpha * d, rounded to bf16, into its staging buffer `buf` (PIECE / 64 boxes of
// 64 x 64, each 64 rows x 128 bytes in the 128-byte swizzle, which keeps these 4-byte stores
// free of bank conflicts), fences the writes for the async proxy, meets at its named barrier,
// and one thread hands the boxes to TMA (which clips rows and columns outside C). The stores
// then run while the warpgroup returns to the main loop; the next use of `buf` first waits
// until TMA has read it. C's tensor map: (N, M) bf16, boxes of 64 rows x BOX columns (C_BOX):
// BOX = 64 with the 128-byte swizzle, BOX = 32 (64-byte rows) with the 64-byte swizzle for tiles
// that are not whole 64-column boxes (BN = 160: five 32-column boxes), or one unswizzled box the
// tile's width for those that are not whole 32-column boxes either (BN = 200: 400-byte rows). A
// box row reaches memory as one run of bytes, so C's 32-byte sectors are written whole but at the
// tile's two edges (five 80-byte boxes wrote a fifth more sectors, partly: Nsight Compute, fp8
// 8192 x 4800 x 1600, 3.20 M L2 write sectors against 128 x 256's 2.46 M for the same C).
// Unswizzled 400-byte rows keep the stores free of bank conflicts too: a warp's store writes one
// 16-byte chunk of 8 rows, 100 words (4 banks mod 32) apart, so the 8 chunks cover all 32 banks.
template <int BN>
constexpr int C_BOX = BN % 64 == 0 ? 64 : BN % 32 == 0 ? 32 : BN;
template <int BN, int PIECE, int BOX = 64>
__device__ __forceinline__ void store_tile_tma(const TensorMap* tmC, unsigned buf, unsigned bar_id,
                                               int r0, int c0, const float (&d)[BN / 2],
                                               float alpha) {
    constexpr bool SWIZZLED = BOX == 64 || BOX == 32;
    static_assert(SWIZZLED || (BOX == PIECE && BOX % 8 == 0 && BOX <= 256),
                  "64-column boxes (128-byte swizzle), 32 (64-byte) or one unswizzled box a piece");
    static_assert(BN % PIECE == 0 && PIECE % BOX == 0, "whole boxes per piece");
    constexpr int CHUNKS = BOX / 8;           // 16-byte chunks (8 bf16) in a box row
    constexpr unsigned BOX_BYTES = 64 * BOX * 2;
    const int t = threadIdx.x % 128;
    const int r = 16 * (t / 32) + (t % 32) / 4, q = 2 * (t % 4);
#pragma unroll
    for (int piece = 0; piece < BN / PIECE; ++piece) {
        if (t == 0) bulk_wait_read<0>();  // TMA has finished reading buf
        named_barrier(bar_id, 128);
#pragma unroll
        for (int jj = 0; jj < PIECE / 8; ++jj) {
            const int j = piece * (PIECE / 8) + jj;
            const int box = jj / CHUNKS, chunk = jj % CHUNKS;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int rr = r + 8 * h;
                unsigned packed;  // cvt.rn.bf16x2.f32 d, hi, lo
                asm("cvt.rn.bf16x2.f32 %0, %1, %2;"
                    : "=r"(packed) : "f"(alpha * d[4 * j + 2 * h + 1]), "f"(alpha * d[4 * j + 2 * h]));
                // TMA's 128-byte (64-byte) swizzle is swz_chunk's pattern for 8 (4) chunks a row
                int at = chunk;  // a piece-wide box: unswizzled
                if constexpr (SWIZZLED) at = swz_chunk<CHUNKS>(rr, chunk);
                const unsigned off = box * BOX_BYTES + rr * (BOX * 2) + at * 16 + q * 2;
                asm volatile("st.shared.b32 [%0], %1;" ::"r"(buf + off), "r"(packed) : "memory");
            }
        }
        fence_proxy_async();
        named_barrier(bar_id, 128);
        if (t == 0) {
#pragma unroll
            for (int box = 0; box < PIECE / BOX; ++box)
                tma_store_2d(tmC, buf + box * BOX_BYTES, c0 + piece * PIECE + BOX * box, r0);
            bulk_commit();
        }
    }
}

}  // namespace tc
}  // namespace gemmlab
