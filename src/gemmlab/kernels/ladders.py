"""The GEMM ladders: each rung's stable name, what it changes and its compile-time parameters,
plus the rungs outside the climb (sweep variants, autotuner candidates, the dispatch rung) and the
twins every vector or bf16-output rung has. The families they instantiate are in
gemmlab.kernels.families; gemmlab.kernels.registry looks rungs up by name and dtype.

Three ladders:

* the FP32 SGEMM ladder (``LADDER``): C = alpha * A @ B + beta * C, row-major float32
  throughout, any GPU;
* the BF16 tensor-core ladder (``TC_LADDER``): A (M x K, row-major) and B (K x N, row-major) in
  bfloat16, FP32 accumulation, C (M x N, row-major) in bfloat16 by default or float32 (the
  ``*_f32out`` twins); CuPy holds bfloat16 as ``uint16`` bit patterns. These rungs need sm_80 or
  newer (``Rung.arch``); a later rung can ask for ``sm_90a``;
* the FP8 ladder (``FP8_LADDER``): A (M x K, row-major) and **B given as N x K, row-major ("TN":
  B transposed, both operands K-major)** in e4m3, the tensor cores' accumulator (FP32 registers,
  ~13-bit FP8 accumulation on Hopper: gemmlab.numerics.fp8), C (M x N, row-major) in bfloat16.
  8-bit wgmma cannot transpose an operand, so a K x N B is refused rather than copied. CuPy holds
  e4m3 as ``uint8`` bit patterns. sm_90a.

Every rung computes its product for any M, N, K >= 1.
Rungs whose parameters include ``VEC = 1`` use 16-byte global accesses; they need K and N to be
multiples of the elements per 16 bytes (4 for float32, 8 for bfloat16) and 16-byte aligned A, B,
C. For other inputs the launcher uses the rung's
``scalar_twin`` (same template, ``VEC = 0``); both are compiled and tested.

The kernel symbol of a rung is ``gemmlab_<name>``: an ``extern "C"`` wrapper around the family's
template (see gemmlab.kernels.source), so profilers show the rung's name.
"""

from __future__ import annotations

import itertools

from gemmlab.kernels.families import DISPATCH_TC, ITEMSIZE, Rung, make_rung

_WARPTILE = dict(BM=128, BN=128, BK=16, WM=64, WN=64, WNITER=4, TM=8, TN=4, NT=128)

LADDER: tuple[Rung, ...] = (
    make_rung("naive_uncoalesced", 1, "naive_uncoalesced",
              "One thread per element of C, threadIdx.x walking rows: each lane of a warp reads "
              "its own row of A (the first seed article's bad kernel).",
              BX=16, BY=16),
    make_rung("coalesced", 2, "coalesced",
              "threadIdx.x walks columns, so a warp reads contiguous B and writes contiguous C: "
              "same work, far fewer memory transactions.",
              BX=16, BY=16),
    make_rung("smem_tiled", 3, "smem_tiled",
              "16x16 tiles of A and B staged in shared memory and reused 16 times; minimal "
              "barriers, inner loop kept rolled (the article's plain tiled kernel).",
              BX=16, BY=16, BK=16, EXTRA_SYNC=0, UNROLL=0),
    make_rung("smem_tiled_unroll", 3, "smem_tiled",
              "The same tiled kernel with its inner loop fully unrolled: no loop overhead, shared "
              "loads scheduled ahead (the article's fastest simple kernel).",
              BX=16, BY=16, BK=16, EXTRA_SYNC=0, UNROLL=1),
    make_rung("blocktile_1d", 4, "blocktile_1d",
              "Each thread computes 8 elements of a column: one shared load of B feeds 8 FMAs, so "
              "shared-memory traffic per FMA almost halves.",
              BM=64, BN=64, BK=8, TM=8),
    make_rung("blocktile_2d", 5, "blocktile_2d",
              "Each thread computes an 8x8 sub-tile as outer products of register fragments: 16 "
              "shared loads per 64 FMAs.",
              BM=128, BN=128, BK=8, TM=8, TN=8),
    make_rung("vectorized", 6, "vectorized",
              "16-byte global loads and stores, A transposed into shared memory so fragments are "
              "read with 16-byte shared loads too.",
              BM=128, BN=128, BK=8, TM=8, TN=8, VEC=1),
    make_rung("bank_conflict_free", 7, "bank_conflict_free",
              "Pads the transposed A tile and interleaves each thread's columns, removing rung 6's "
              "2-way shared-memory bank conflicts (A stores, B loads).",
              BM=128, BN=128, BK=8, TM=8, TN=8, VEC=1),
    make_rung("warptiling", 8, "warptiling",
              "Adds a warp level to the tiling (64x64 per warp, 8x16 per lane, 128 threads) and "
              "BK=16: more FMAs per shared load and per barrier.",
              **_WARPTILE, VEC=1),
    make_rung("double_buffered", 9, "double_buffered",
              "cp.async copies the next tiles into a 3-stage shared-memory ring while the current "
              "one is computed, hiding global-memory latency.",
              **_WARPTILE, STAGES=3, GROUP=0, VEC=1),
    make_rung("autotuned", 10, "autotuned",
              "double_buffered with tile sizes, pipeline depth, register cap and compiler searched "
              "on the GPU at hand; the winner is remembered per GPU and size (params: the "
              "defaults).",
              **_WARPTILE, STAGES=3, GROUP=0, VEC=1),
)

# Rungs outside the ladder's climb (gemmlab ladder does not run them unless named with --rung).
DISPATCH = "dispatch"
SHAPE_RUNGS: tuple[Rung, ...] = (
    make_rung(DISPATCH, 11, "dispatch",
              "Picks the kernel by shape: GEMV-like skinny kernels for M or N <= 16, split-K into "
              "a workspace when the tiles cannot fill the SMs, zero-padded copies so odd K or N "
              "run the 16-byte path; params: its 128x128 tile kernel (double_buffered's).",
              **_WARPTILE, STAGES=3, GROUP=0, VEC=1),
)

# The tensor-core dispatch rungs (issue #20), abstract like ``dispatch``: prepare() hands them to
# gemmlab.runtime.dispatch_tc_gemm, which picks tile, split-K and operand copies per shape
# (gemmlab.runtime.dispatch_tc); params: the instantiation large squares get (persistent_*'s).
DISPATCH_BF16, DISPATCH_FP8 = DISPATCH_TC

TC_LADDER: tuple[Rung, ...] = (
    make_rung("wmma_bf16", 1, "wmma_bf16",
              "Tensor cores through WMMA: 16x16x16 bf16 fragments, FP32 accumulate, 64x64 block "
              "tile staged through padded shared memory, 4 warps of 32x32 (the portable start).",
              BM=64, BN=64, BK=32, WM=32, WN=32, OUT_F32=0),
    make_rung("mma_sync_bf16", 2, "mma_sync_bf16",
              "Explicit mma.sync.m16n8k16 fragments loaded by ldmatrix from XOR-swizzled "
              "(conflict-free, unpadded) tiles, 128x128 block, 8 warps of 64x32 register-blocked "
              "accumulators, epilogue straight from registers.",
              BM=128, BN=128, BK=32, WM=64, WN=32, VEC=1, OUT_F32=0),
    make_rung("cp_async_bf16", 3, "cp_async_bf16",
              "Rung 2's fragments fed by a 4-stage cp.async.cg ring in dynamic shared memory "
              "(96 KB), so global latency hides behind the MMAs; 128x256 block, 8 warps of 64x64 "
              "(2/3 the shared traffic per MMA), grouped block order for L2 reuse, paired "
              "epilogue stores.",
              BM=128, BN=256, BK=32, WM=64, WN=64, STAGES=4, GROUP=8, VEC=1, OUT_F32=0),
    make_rung("wgmma_bf16", 4, "wgmma_bf16",
              "Hopper's warpgroup MMA: wgmma.m64n128k16 reads A and B from 128-byte-swizzled "
              "shared tiles through descriptors (no ldmatrix, no fragments), 2 warpgroups on a "
              "128x128 tile, tiles still copied by cp.async, 3 stages.",
              BM=128, BN=128, BK=64, STAGES=3, VEC=1, OUT_F32=0),
    make_rung("tma_bf16", 5, "tma_bf16",
              "TMA: one thread hands each tile to the copy engine (tensor maps made on the host), "
              "which writes it pre-swizzled and signals an mbarrier; no per-thread copies or "
              "guards, 4 stages.",
              BM=128, BN=128, BK=64, STAGES=4, OUT_F32=0),
    make_rung("ws_bf16", 6, "ws_bf16",
              "Warp specialisation: a producer warpgroup only issues TMA (setmaxnreg.dec), two "
              "consumer warpgroups only issue wgmma on a 128x256 tile (setmaxnreg.inc, m64n256 "
              "accumulators), coupled by full/empty mbarriers, no __syncthreads in the loop.",
              BM=128, BN=256, BK=64, STAGES=4, PRODUCER=1, MINB=1, OUT_F32=0),
    make_rung("persistent_bf16", 7, "persistent_bf16",
              "Persistent CTAs (one per SM) walk the tiles in grouped order, loading the next "
              "tile during the current epilogue; clusters of 2 along M share each B tile through "
              "TMA multicast, halving B's L2 traffic; C leaves through shared memory and TMA "
              "stores that drain during the next tile.",
              BM=128, BN=256, BK=64, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
              EPI_PIECE=128, OUT_F32=0),
    make_rung("autotuned_bf16", 8, "persistent_bf16",
              "persistent_bf16 with tile width, stages, cluster size, tile order and epilogue "
              "piece timed on the GPU at hand (8 candidates); the winner is remembered per GPU "
              "and size (params: the defaults). Shapes TMA cannot take run wgmma_bf16.",
              BM=128, BN=256, BK=64, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
              EPI_PIECE=128, OUT_F32=0),
)

# A (M x K) and B given as N x K ("TN"), both row-major e4m3 (uint8 bits), C bf16.
FP8_LADDER: tuple[Rung, ...] = (
    make_rung("persistent_fp8", 1, "persistent_fp8",
              "persistent_bf16 with e4m3 inputs (B given N x K, 'TN'): BK = 128 e4m3 per 128-byte "
              "swizzle row, wgmma.m64n256k32.e4m3 with both operands K-major, each CTA of a 2-CTA "
              "cluster multicasting half of the K-major B tile in one TMA box; same stage bytes, "
              "twice the K per stage; bf16 C through TMA stores.",
              BM=128, BN=256, BK=128, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
              EPI_PIECE=128),
)

TC_SHAPE_RUNGS: tuple[Rung, ...] = (
    make_rung(DISPATCH_BF16, 9, "persistent_bf16",
              "Picks the persistent kernel by shape: 64-row tiles for decode (M <= 64), 128 x 256 "
              "or 128 x 128 tiles by SM balance, split-K into a float32 workspace when the tiles "
              "cannot fill the SMs, operands copied to whole 128-byte rows when K or N is odd; "
              "params: the large-square instantiation.",
              BM=128, BN=256, BK=64, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
              EPI_PIECE=128, OUT_F32=0),
)
FP8_SHAPE_RUNGS: tuple[Rung, ...] = (
    make_rung(DISPATCH_FP8, 2, "persistent_fp8",
              "persistent_fp8 picked by shape as dispatch_bf16 picks (decode tiles, tile width "
              "by SM balance, split-K, K copied to a 16-byte pitch when K % 16 != 0); params: "
              "the large-square instantiation.",
              BM=128, BN=256, BK=128, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
              EPI_PIECE=128),
)


# ---- Twins ----------------------------------------------------------------------------------


def f32_out_twin(rung: Rung) -> Rung:
    """The float32-output instantiation of a bf16-output tensor-core rung (same kernel, the
    epilogue writes C as float32 instead of rounding to bfloat16)."""
    if rung.out_dtype == "fp32":
        return rung
    name = f"{rung.name}_f32out"
    return Rung(name=name, order=rung.order, family=rung.family,
                summary=f"{rung.summary} [float32 output]", source=rung.source,
                kernel=f"gemmlab_{name}", params={**rung.params, "OUT_F32": 1})


def scalar_twin(rung: Rung) -> Rung:
    """The VEC = 0 instantiation of a vector rung (4-byte global accesses, any shape and
    alignment); the rung itself when it is not vectorized."""
    if not rung.vectorized:
        return rung
    name = f"{rung.name}_scalar"
    return Rung(name=name, order=rung.order, family=rung.family,
                summary=f"{rung.summary} [{ITEMSIZE[rung.dtype]}-byte global accesses: any shape "
                        f"and alignment]" if rung.dtype != "fp32" else
                f"{rung.summary} [4-byte global accesses: unaligned inputs]",
                source=rung.source, kernel=f"gemmlab_{name}",
                params={**rung.params, "VEC": 0})


# ---- The smem_tiled sweep -------------------------------------------------------------------


def _variant_name(bx: int, by: int, bk: int, extra: int, unroll: int) -> str:
    return (f"smem_tiled_t{bk}_b{bx}x{by}" + ("_extrasync" if extra else "")
            + ("_unroll" if unroll else ""))


def _make_sweep() -> tuple[Rung, ...]:
    # Square tiles 8/16/32 (block = tile), and the non-square block shapes 32x8 and 32x16 with a
    # K-step of blockDim.x (so each thread loads one element of A's tile). 16x16 and 8x8 blocks
    # are the t16/t8 square variants.
    shapes = [(8, 8, 8), (16, 16, 16), (32, 32, 32), (32, 8, 32), (32, 16, 32)]
    out = []
    for (bx, by, bk), extra, unroll in itertools.product(shapes, (0, 1), (0, 1)):
        what = (f"{bx}x{by} block, K-step {bk}, "
                + ("a barrier after every FMA" if extra else "minimal barriers") + ", "
                + ("unrolled" if unroll else "rolled") + " inner loop")
        out.append(make_rung(_variant_name(bx, by, bk, extra, unroll), 3, "smem_tiled",
                             f"Shared-memory tiling sweep (seed article 1): {what}.",
                             BX=bx, BY=by, BK=bk, EXTRA_SYNC=extra, UNROLL=unroll))
    return tuple(out)


# The first seed article's smem_tiled variants: tile 8/16/32, block shapes 8x8, 16x16, 32x8,
# 32x16, extra vs minimal barriers, rolled vs unrolled inner loop.
SWEEP = _make_sweep()


# ---- Autotuner candidates -------------------------------------------------------------------


def _make_candidates() -> tuple[Rung, ...]:
    """Instantiations the autotuner times (double_buffered's template). MINB > 0 asks ptxas to
    fit that many blocks per SM (a register cap); GROUP > 0 rasterizes blocks in bands of GROUP
    tile-rows for L2 reuse."""
    configs = [
        # BM, BN, BK, WM, WN, WNITER, STAGES, MINB, GROUP (TM = 8, TN = 4 throughout)
        (128, 128, 16, 64, 64, 4, 3, 0, 0),  # = double_buffered
        (128, 256, 16, 64, 64, 4, 3, 0, 0),
        (128, 128, 32, 64, 64, 4, 2, 0, 0),
        (128, 128, 16, 64, 32, 2, 3, 0, 0),
        (64, 128, 16, 32, 64, 2, 3, 0, 0),
        (64, 128, 16, 32, 64, 2, 3, 3, 0),
        (64, 128, 16, 32, 64, 2, 3, 3, 8),
        (64, 128, 32, 32, 64, 2, 2, 3, 0),
        (64, 128, 32, 32, 64, 2, 3, 3, 0),
        (128, 64, 16, 64, 32, 2, 3, 3, 0),
        (128, 64, 32, 64, 32, 2, 2, 3, 0),
    ]
    out = []
    for bm, bn, bk, wm, wn, wni, st, minb, group in configs:
        nt = (bm // wm) * (bn // wn) * 32
        name = (f"autotuned_{bm}x{bn}x{bk}_w{wm}x{wn}n{wni}_s{st}"
                + (f"_b{minb}" if minb else "") + (f"_g{group}" if group else ""))
        extra = (f", at least {minb} blocks/SM" if minb else "") + (
            f", {group}-row rasterization" if group else "")
        out.append(make_rung(name, 10, "autotuned",
                             f"Autotuner candidate: {bm}x{bn}x{bk} block tile, {wm}x{wn} warp "
                             f"tile, {nt} threads, {st} stages{extra}.",
                             BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, WNITER=wni, TM=8, TN=4, NT=nt,
                             STAGES=st, GROUP=group, MINB=minb, VEC=1))
    return tuple(out)


FP32_CANDIDATES = _make_candidates()  # what the ``autotuned`` rung chooses from


def _make_bf16_candidates() -> tuple[Rung, ...]:
    """Instantiations of the persistent BF16 family the ``autotuned_bf16`` rung times: tile width,
    pipeline depth (bounded by the 227 KB of shared memory per block), cluster size, tile-order band
    and epilogue piece. Two consumer warpgroups throughout (setmaxnreg 232 for a 64 x 256 f32
    accumulator: 4 consumers would not fit the register file)."""
    configs = [
        # BN, STAGES, CLUSTER, GROUP, EPI_PIECE
        (256, 4, 2, 8, 128),  # = persistent_bf16
        (256, 4, 1, 8, 128),
        (256, 4, 2, 16, 128),
        (256, 3, 2, 8, 128),
        (256, 4, 2, 4, 64),
        (128, 6, 2, 8, 128),
        (128, 4, 1, 8, 128),
        (128, 6, 2, 16, 64),
    ]
    out = []
    for bn, st, cl, group, piece in configs:
        name = f"autotuned_bf16_128x{bn}_s{st}_c{cl}_g{group}_e{piece}"
        out.append(make_rung(name, 8, "persistent_bf16",
                             f"BF16 autotuner candidate: persistent 128x{bn}x64 tiles, {st} "
                             f"stages, clusters of {cl}, bands of {group} tile-rows, epilogue "
                             f"pieces of {piece} columns.",
                             BM=128, BN=bn, BK=64, STAGES=st, PRODUCER=1, MINB=1, CLUSTER=cl,
                             GROUP=group, EPI_PIECE=piece, OUT_F32=0))
    return tuple(out)


BF16_CANDIDATES = _make_bf16_candidates()  # what the ``autotuned_bf16`` rung chooses from
