// sgemm_rb -- a register-blocked FP32 SGEMM in the CUTLASS-SIMT / maxas mould, a probe for a
// faster FP32 tile kernel than tile_ld (double_buffered_ld's 64 x 128 x 32 instantiation).
//
// What changes relative to double_buffered_ld, and why:
//
// * Occupancy at the same 8 x 8 accumulators per lane. tile_ld's best instantiation holds 167
//   registers for 3 blocks of 4 warps (12 warps per SM; Nsight: 2.06 eligible of 2.89 resident
//   warps per scheduler, 19% of issue slots empty). Here the inner loop needs ~120 registers
//   (64 accumulators, two 16-float fragment buffers, 8-16 staging floats, a few addresses), so
//   the wrapper caps registers at 128 (__launch_bounds__(NT, 65536 / (128 * NT))): 16 warps per
//   SM, with 2 blocks of 256 threads or 4 of 128.
//
// * A is stored transposed (k-major, M contiguous) in shared memory, so one k step of a lane is
//   2 LDS.128 for A (rows m0..m0+3 and m0+WM/2..+3) and 2 for B (columns n0..n0+3 and
//   n0+WN/2..+3) per 64 FFMA, every address a compile-time immediate off one base register. The
//   lane's 8 x 8 block is two 4-wide groups far apart on each side (CUTLASS SIMT's layout): the
//   8 lanes of an LDS.128 phase read 8 consecutive float4s of B (or one broadcast float4 of A),
//   so the reads are conflict-free.
//
// * Fragments are double-buffered in registers: k + 1's four LDS.128 are issued before k's 64
//   FFMAs, so shared-memory latency hides behind the FFMAs of the same warp instead of needing
//   other warps.
//
// * Global -> shared goes through registers (LDG.128 -> STS), as maxas and CUTLASS's SM50 SIMT
//   kernels do, because a copy engine cannot transpose: the LDG.128s of tile t + 1 are issued at
//   the top of tile t, their latency covered by BK - 1 k steps of FFMAs, and their STSs go to the
//   other shared buffer right before the last k step. With two shared buffers this needs ONE
//   barrier per K tile (double_buffered: one per tile too, but its cp.async wait sits at the top
//   of the tile, where a late copy stalls every warp), and the first fragments of tile t + 1 are
//   read during the FFMAs of tile t's last k step, so the barrier is the only bubble.
//   P > 1 splits the fetch into P phases spread over the tile (phase p's LDGs at k step
//   p * BK / P, its STSs just before k step (p + 1) * BK / P - 1): only 1 / P of a tile is held
//   in staging registers, which is what lets BK = 16 fit under the 128-register cap.
//   A's transposing stores are 4 STS.32 per 16-byte chunk. Chunk (m, c) (c-th 4 k's of row m) is
//   stored at As[(4c + e) * (BM + 4) + m]; a warp's 32 chunks are 16 consecutive rows x 2
//   adjacent chunks (c parity = lane parity), and the row pad of 4 floats moves odd chunks 16
//   banks away from even ones: the STS.32s are conflict-free and the LDS.128s stay aligned.
//
// * Edges cost nothing in full tiles: a thread whose A row is past M (or whose B chunk is past N)
//   loads row M - 1 (chunk 0 of the block's columns) instead, which only ever reaches rows
//   (columns) of C that are not stored; so full tiles' LDGs are unpredicated. Only the last K
//   tile, when partial, takes a guarded path: B rows past K are zero-filled without a read, and
//   A's chunk that straddles K has its elements past K zeroed (A's row padding between K and lda
//   may hold anything, even NaN, which would poison C even when multiplied by B's zeros).
//
// Preconditions (those of tile_ld's VEC = 1 path): A is M x K row-major with pitch lda, B is
// K x N with pitch ldb, C is M x N with pitch ldc (elements); lda and ldb multiples of 4, A and B
// 16-byte aligned. C needs nothing: the epilogue stores float4s when ldc % 4 == 0 and C is
// 16-byte aligned, else guarded scalars. C = alpha * A * B + beta * C; C is not read when
// beta == 0. Any M, N, K >= 1; 32-bit index arithmetic (as every gemmlab kernel).
//
// Geometry: a block of NT threads computes a BM x BN tile of C; each warp a WM x WN piece; each
// lane an 8 x 8 block (lanes WM / 8 along M by WN / 8 along N). BK: the K tile (a multiple of 8).
// P: load phases per K tile (above).
// GROUP > 0: blocks walk bands of GROUP tile-rows (L2 reuse), as double_buffered_ld's GROUP.
// Grid: (cdiv(N, BN), cdiv(M, BM)); dynamic shared memory 2 * BK * (BM + 4 + BN) * 4 bytes.
#include "gemm_common.cuh"
#include "cp_async.cuh"

namespace gemmlab {

template <int BM, int BN, int BK, int WM, int WN, int NT>
struct RbGeometry {
    static constexpr int NWARPS = NT / 32;
    static constexpr int LN = WN / 8;  // lanes along N
    static constexpr int LM = WM / 8;  // lanes along M
    static constexpr int KC = BK / 4;  // 16-byte chunks per row of A's tile
    static constexpr int AS = BM + 4;  // row pitch of the transposed A tile (floats)
    static constexpr int A_FLOATS = BK * AS;
    static constexpr int STAGE = A_FLOATS + BK * BN;  // one shared buffer (floats)
    static constexpr int SMEM_BYTES = 2 * STAGE * 4;
    static constexpr int A_J = BM * KC / NT;  // A chunks per thread per tile
    static constexpr int BNC = BN / 4;        // B chunks per row of B's tile
    static constexpr int B_J = BK * BNC / NT;  // B chunks per thread per tile
    static constexpr int B_RS = NT / BNC;      // rows of B's tile between a thread's chunks
    static_assert(NT % 32 == 0 && (BM / WM) * (BN / WN) == NWARPS, "one warp per warp tile");
    static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles");
    static_assert(LM * LN == 32 && WM % 8 == 0 && WN % 8 == 0, "32 lanes of 8 x 8");
    static_assert(BK % 8 == 0, "BK: pairs of chunks (and an even number of k steps)");
    static_assert(BM % 32 == 0, "the pad trick needs AS = 4 (mod 32)");
    static_assert((BM * KC) % NT == 0 && (BK * BNC) % NT == 0, "whole chunks per thread");
    static_assert(NT % BNC == 0, "each thread copies one chunk column of B");
    static_assert((NT / 2) % BM == 0 || BM % (NT / 2) == 0, "A chunk pairs tile the block");
};

template <int BM, int BN, int BK, int WM, int WN, int NT, int P, int GROUP>
__device__ __forceinline__ void sgemm_rb(int M, int N, int K, int lda, int ldb, int ldc,
                                         float alpha, const float* __restrict__ A,
                                         const float* __restrict__ B, float beta,
                                         float* __restrict__ C) {
    using G = RbGeometry<BM, BN, BK, WM, WN, NT>;
    constexpr int AS = G::AS, A_J = G::A_J, B_J = G::B_J, STAGE = G::STAGE;
    static_assert(P >= 1 && A_J % P == 0 && B_J % P == 0 && BK % P == 0, "load phases");

#ifndef GEMMLAB_HOST_EMULATION
    extern __shared__ float4 smem4[];
#else
    float4* smem4 = emu::dynamic_smem<float4>();
#endif
    float* smem = reinterpret_cast<float*>(smem4);
    if (dynamic_smem_bytes() < unsigned(G::SMEM_BYTES)) __trap();  // launched with too little

    const int tid = threadIdx.x;
    int tile_m, tile_n;  // which tile of C (GROUP > 0: banded order for L2 reuse)
    block_tile<GROUP>(tile_m, tile_n);
    const int row0 = tile_m * BM, col0 = tile_n * BN;

    // ---- global -> register staging: what this thread copies, computed once ----------------
    // A: chunk i = tid + j * NT of the tile; pair p = i / 2 -> row m = p % BM, chunk
    // c = (i % 2) + 2 * (p / BM). Rows past M read row M - 1 (see the header).
    int a_goff[A_J];  // element offset of the chunk from A's tile-column start (row * lda + 4c)
    int a_soff[A_J];  // float offset in the stage of the chunk's first element (k = 4c, m)
    int a_kc[A_J];    // 4c: the chunk's first k within the tile
#pragma unroll
    for (int j = 0; j < A_J; ++j) {
        const int i = tid + j * NT, p = i / 2;
        const int m = p % BM, c = (i % 2) + 2 * (p / BM);
        a_goff[j] = min(row0 + m, M - 1) * lda + 4 * c;
        a_soff[j] = 4 * c * AS + m;
        a_kc[j] = 4 * c;
    }
    // B: chunk column b_c (constant per thread), rows b_r + j * B_RS. A chunk past N reads the
    // block's first chunk (in range: col0 < N).
    const int b_c = 4 * (tid % G::BNC), b_r = tid / G::BNC;
    const int b_col = (col0 + b_c < N) ? col0 + b_c : col0;
    const float* a_ptr = A;                        // + a_goff[j]; advances by BK per tile
    const float* b_ptr = B + b_r * ldb + b_col;    // + j * B_RS * ldb; advances by BK * ldb
    const int b_step = G::B_RS * ldb;

    // Staging registers of one load phase: tile t + 1 is fetched in P phases spread over tile t
    // (phase p's LDGs at k step p * BK / P, its STSs right before k step (p + 1) * BK / P - 1),
    // so only 1 / P of the tile is held in registers at a time.
    constexpr int AJP = A_J / P, BJP = B_J / P;
    float4 sa[AJP], sb[BJP];
    // Phase p of the tile at a_ptr / b_ptr; full: the tile lies inside K (unguarded 16-byte
    // loads, edges already clamped), else kr = K - k0 < BK rows are left.
    auto load_phase = [&](int p, bool full, int kr) {
#pragma unroll
        for (int q = 0; q < AJP; ++q) {
            const int j = p * AJP + q;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (full) {
                v = *reinterpret_cast<const float4*>(a_ptr + a_goff[j]);
            } else if (a_kc[j] < kr) {
                const int k = a_kc[j];
                v = *reinterpret_cast<const float4*>(a_ptr + a_goff[j]);
                if (k + 1 >= kr) v.y = 0.f;
                if (k + 2 >= kr) v.z = 0.f;
                if (k + 3 >= kr) v.w = 0.f;
            }
            sa[q] = v;
        }
#pragma unroll
        for (int q = 0; q < BJP; ++q) {
            const int j = p * BJP + q;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (full || b_r + j * G::B_RS < kr)
                v = *reinterpret_cast<const float4*>(b_ptr + j * b_step);
            sb[q] = v;
        }
    };
    // Phase p's registers -> shared buffer at float offset dst (A transposed, B as is).
    auto store_phase = [&](int p, int dst) {
#pragma unroll
        for (int q = 0; q < AJP; ++q) {
            float* ps = smem + dst + a_soff[p * AJP + q];
            ps[0 * AS] = sa[q].x;
            ps[1 * AS] = sa[q].y;
            ps[2 * AS] = sa[q].z;
            ps[3 * AS] = sa[q].w;
        }
#pragma unroll
        for (int q = 0; q < BJP; ++q)
            sts4(smem + dst + G::A_FLOATS + (b_r + (p * BJP + q) * G::B_RS) * BN + b_c, sb[q]);
    };
    auto advance = [&]() {
        a_ptr += BK;
        b_ptr += BK * ldb;
    };

    // ---- compute geometry ----------------------------------------------------------------------
    const int warp = tid / 32, lane = tid % 32;
    const int wm0 = (warp / (BN / WN)) * WM, wn0 = (warp % (BN / WN)) * WN;
    const int lm = lane / G::LN, ln = lane % G::LN;
    const int a_rd = wm0 + lm * 4;               // + k * AS; second group + WM / 2
    const int b_rd = G::A_FLOATS + wn0 + ln * 4;  // + k * BN; second group + WN / 2

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
    float4 fa[2][2], fb[2][2];  // [buffer][group]

    auto load_frag = [&](int buf, int k, int s) {
        const float* pa = smem + buf + a_rd + k * AS;
        const float* pb = smem + buf + b_rd + k * BN;
        fa[s][0] = lds4(pa);
        fa[s][1] = lds4(pa + WM / 2);
        fb[s][0] = lds4(pb);
        fb[s][1] = lds4(pb + WN / 2);
    };

    const int nTiles = cdiv(K, BK);
    {
        const bool full = BK <= K;
#pragma unroll
        for (int p = 0; p < P; ++p) {
            load_phase(p, full, K);
            store_phase(p, 0);
        }
        advance();
    }
    __syncthreads();
    int cur = 0, nxt = STAGE;  // float offsets of the two shared buffers
    load_frag(cur, 0, 0);

    constexpr int KP = BK / P;  // k steps per load phase
    for (int t = 0; t < nTiles; ++t) {
        const bool more = t + 1 < nTiles;  // uniform across the block
        const int kr = K - (t + 1) * BK;   // rows of K left after tile t
        const bool full = kr >= BK;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int s = k & 1;
            if (more && k % KP == 0) {
                load_phase(k / KP, full, kr);
                if (k / KP == P - 1) advance();
            }
            if (more && k % KP == KP - 1 && k + 1 < BK) store_phase(k / KP, nxt);
            if (k + 1 < BK) {
                load_frag(cur, k + 1, s ^ 1);
            } else if (more) {
                store_phase(P - 1, nxt);
                __syncthreads();  // nxt is complete; everyone is done reading cur's last k
                load_frag(nxt, 0, s ^ 1);  // BK is even: buffer 0, as the loop expects
            }
            const float a[8] = {fa[s][0].x, fa[s][0].y, fa[s][0].z, fa[s][0].w,
                                fa[s][1].x, fa[s][1].y, fa[s][1].z, fa[s][1].w};
            const float b[8] = {fb[s][0].x, fb[s][0].y, fb[s][0].z, fb[s][0].w,
                                fb[s][1].x, fb[s][1].y, fb[s][1].z, fb[s][1].w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
        }
        const int tmp = cur;
        cur = nxt;
        nxt = tmp;
    }

    // ---- epilogue: C = alpha * acc + beta * C, rows < M, columns < N -------------------------
    const bool c_vec =
        (ldc % 4 == 0) && ((reinterpret_cast<unsigned long long>(C) & 15ull) == 0);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + wm0 + lm * 4 + (i & 3) + (i >> 2) * (WM / 2);
        if (row >= M) continue;
#pragma unroll
        for (int g = 0; g < 2; ++g) {
            const int col = col0 + wn0 + ln * 4 + g * (WN / 2);
            const float4 v = make_float4(acc[i][4 * g + 0], acc[i][4 * g + 1],
                                         acc[i][4 * g + 2], acc[i][4 * g + 3]);
            if (c_vec && col + 3 < N) store_c4(C, row * ldc + col, v, alpha, beta);
            else store_c4_guarded(C, row * ldc + col, col, N, v, alpha, beta);
        }
    }
}

}  // namespace gemmlab
