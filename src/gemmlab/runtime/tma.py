"""TMA tensor maps for the Hopper rungs: what to encode (pure Python, checked on any machine)
and the encoding itself (``cuTensorMapEncodeTiled`` through the cuda-bindings package).

A tensor map describes a 2-D matrix in global memory to the copy engine: its element type, its
extent (innermost dimension first), the byte pitch of its rows, the box one copy moves and the
shared-memory swizzle the box is written with. The BF16 rungs read (``specs``):

* A (M x K row-major) as a (K, M) tensor cut in 64 x BM boxes: 64 bf16 = 128 bytes of K per
  row, the width of the 128-byte swizzle;
* B (K x N row-major) as an (N, K) tensor cut in 64 x BK boxes: 64 columns of N per row of the
  box, so a stage of B is BN / 64 boxes side by side.

The FP8 rung (``fp8_specs``) reads e4m3 as 8-bit integers (CU_TENSOR_MAP_DATA_TYPE_UINT8: the copy
engine only moves bytes), both operands K-major:

* A (M x K row-major) as a (K, M) tensor cut in 128 x BM boxes: 128 e4m3 = 128 bytes of K;
* B given N x K row-major ("TN") as a (K, N) tensor cut in 128 x (BN / CLUSTER) boxes: each CTA
  of a cluster copies its share of the B tile's rows in one box (and multicasts it).

C (bf16, the TMA-store epilogue) is written through an (N, M) map of 64 x 64 boxes (``c_spec``).
The persistent rungs take a second map of A, boxed to the rows of its last row-tile
(``last_rows_spec``).

The map holds the matrix's address, so it is made per operand pointer (launch caches them).
Constraints from the CUDA driver API (cuTensorMapEncodeTiled): the base address 16-byte aligned,
every pitch a multiple of 16 bytes (bf16: K and N multiples of 8; e4m3: K a multiple of 16), box
sides 1..256, and with the 128-byte swizzle the box's inner side at most 128 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from gemmlab.errors import InputError, UserError
from gemmlab.kernels.families import bf16_b_span

# Enumerator values of the CUDA driver API (cuda.h), used when cuda-bindings is absent in tests.
UINT8 = 0  # CU_TENSOR_MAP_DATA_TYPE_UINT8
BFLOAT16 = 9  # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
# The element types gemmlab's maps use: (CUtensorMapDataType enumerator name, bytes, what one is)
ELEMENT_TYPES = {"bf16": ("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", 2, "bf16"),
                 "uint8": ("CU_TENSOR_MAP_DATA_TYPE_UINT8", 1, "e4m3")}
SWIZZLE_128B = 3  # CU_TENSOR_MAP_SWIZZLE_128B
# L2 promotion of every map's loads: 128 bytes, the line a 128-byte box row touches, not 256.
# Measured on the H200 (driver 580.159.04, docs/results/tc-l2promo-2026-11-29; one process per
# setting, alternating, order reversed in pass 2, % of cuBLAS at its best): bf16's B streams lost
# 4-9 points to 256 bytes - swapped decode 16 x 4096 x 14336 95.9 / 96.2 -> 104.2 / 104.0,
# 1 x 4096 x 14336 97.1 / 97.2 -> 103.5 / 104.4; 128 rows, the tiles: 128 x 28672 x 4096 94.7 / 95.0
# -> 100.1 / 99.8, 128 x 11008 x 4096 90.3 / 93.3 -> 95.8 / 98.0. Nsight Compute there: the same
# DRAM bytes either way, and 11% (decode) to 26% (128 x 28672 x 4096) more L2 sector reads from the
# SMs with 256. No promotion read as 128 bytes; fp8 decode and compute-bound shapes (bf16 4096^3,
# fp8 8192 x 4800 x 1600) moved within a point.
L2_PROMOTION = "CU_TENSOR_MAP_L2_PROMOTION_L2_128B"
BOX_MAX = 256  # largest box side cuTensorMapEncodeTiled accepts
SWIZZLE_BYTES = 128
# swizzle span in bytes -> CUtensorMapSwizzle enumerator name (0: rows as they are)
SWIZZLES = {128: "CU_TENSOR_MAP_SWIZZLE_128B", 64: "CU_TENSOR_MAP_SWIZZLE_64B",
            0: "CU_TENSOR_MAP_SWIZZLE_NONE"}
MAP_BYTES = 128  # sizeof(CUtensorMap)


@dataclass(frozen=True)
class MapSpec:
    """One tensor map: a 2-D matrix of ``dtype`` elements (``dims`` innermost first) with rows
    ``pitch`` bytes apart, copied in ``box``-sized pieces into 128-byte-swizzled shared memory."""

    name: str  # "A" or "B", for messages
    dims: tuple[int, int]  # (inner, outer) extents in elements
    pitch: int  # bytes between consecutive outer indices
    box: tuple[int, int]  # (inner, outer) elements per copy
    elem_bytes: int = 2
    dtype: str = "bf16"  # a key of ELEMENT_TYPES
    swizzle: int = SWIZZLE_BYTES  # the shared-memory swizzle span: 128 or 64 bytes, or 0

    def check(self) -> None:
        """InputError naming the operand unless the driver will accept this map."""
        if self.dtype not in ELEMENT_TYPES or ELEMENT_TYPES[self.dtype][1] != self.elem_bytes:
            raise ValueError(f"{self.name}: element type {self.dtype!r} of {self.elem_bytes} "
                             f"bytes is not one of {sorted(ELEMENT_TYPES)}")
        if self.pitch % 16:
            what, per = ELEMENT_TYPES[self.dtype][2], 16 // self.elem_bytes
            raise InputError(
                f"{self.name}: TMA needs rows whose pitch is a multiple of 16 bytes, got "
                f"{self.pitch} bytes ({self.dims[0]} {what} per row; use a multiple of {per})")
        for side in self.box:
            if not 1 <= side <= BOX_MAX:
                raise InputError(f"{self.name}: box side {side} outside 1..{BOX_MAX}")
        if self.swizzle not in SWIZZLES:
            raise ValueError(f"{self.name}: swizzle {self.swizzle} is not one of {sorted(SWIZZLES)}")
        if self.box[0] * self.elem_bytes % 16:
            raise InputError(f"{self.name}: box inner side {self.box[0] * self.elem_bytes} bytes "
                             f"is not a multiple of 16")
        if self.swizzle and self.box[0] * self.elem_bytes > self.swizzle:
            raise InputError(f"{self.name}: box inner side {self.box[0] * self.elem_bytes} bytes "
                             f"exceeds the {self.swizzle}-byte swizzle")

    @property
    def box_bytes(self) -> int:
        return self.box[0] * self.box[1] * self.elem_bytes


def specs(M: int, N: int, K: int, BM: int, BK: int, b_box_cols: int = 64,
          b_box_rows: int | None = None) -> tuple[MapSpec, MapSpec]:
    """The maps of A (M x K) and B (K x N), both row-major bf16, for a rung whose CTAs copy BM
    rows of A (their share of it, in a cluster that shares A) and BK-deep k-tiles. B's boxes
    are 64 columns wide (the 128-byte swizzle), or 32 (the 64-byte swizzle) for a tile width that
    is not whole 64-column boxes (BN = 160, 32), and ``b_box_rows`` rows of K (BK; fewer where
    the CTAs of a cluster share B's chunks by rows of K)."""
    if b_box_cols not in (32, 64):
        raise ValueError(f"B boxes are 32 or 64 columns wide, got {b_box_cols}")
    a = MapSpec("A", (K, M), K * 2, (BK, BM))
    b = MapSpec("B", (N, K), N * 2, (b_box_cols, b_box_rows or BK), swizzle=2 * b_box_cols)
    return a, b


def fp8_specs(M: int, N: int, K: int, BM: int, BK: int, b_rows: int) -> tuple[MapSpec, MapSpec]:
    """The maps of A (M x K) and B (given N x K, "TN"), both row-major e4m3 moved as uint8, for
    the FP8 rung: A in BK x BM boxes (BM: the rows of A one CTA copies - BM / CLUSTER_N of the
    tile in a cluster that shares A), B in BK x ``b_rows`` boxes (BN / CLUSTER rows of the B
    tile per CTA). Both are K-major: K bytes per row, so K % 16 == 0 is all the pitch needs."""
    a = MapSpec("A", (K, M), K, (BK, BM), elem_bytes=1, dtype="uint8")
    b = MapSpec("B", (K, N), K, (BK, b_rows), elem_bytes=1, dtype="uint8")
    return a, b


def box_rows(rows: int, M: int) -> int:
    """Rows of the tokens one box of the swapped decode kernel copies into a tile of ``rows``
    tokens (from ``paths.SWAP_TRIM_TN`` on): all of them, or M where there are fewer. The copy
    engine then fills no rows past M: each such row cost it time on every stage (docs/kernels.md,
    "Rows past M"). The kernel counts a stage's bytes alike (tc_common.cuh's box_rows) and zeroes
    the rows the box leaves out."""
    return min(rows, M)


def rung_specs(rung: Any, M: int, N: int, K: int) -> tuple[MapSpec, MapSpec]:
    """The A and B maps a TMA rung takes, by its dtype and parameters: each CTA of a cluster
    copies 1 / CLUSTER_N of A's tile (the CTAs along N share it) and 1 / CLUSTER of B's (the CTAs
    along M) - for bf16, whole 64- (32-) column chunks, or rows of K when the chunks are fewer
    than the CTAs (persistent_bf16.cu's B_BY_K). A persistent rung takes a second map of A as
    well (``last_rows_spec``)."""
    p = rung.params
    cm, cn = p.get("CLUSTER", 1), p.get("CLUSTER_N", 1)
    a_rows = p["BM"] // cn
    if rung.dtype == "fp8":
        return fp8_specs(M, N, K, a_rows, p["BK"], p["BN"] // cm)
    cols = getattr(rung, "b_box_cols", 64)
    by_k = (bf16_b_span(p["BN"]) // cols) % cm != 0  # whole chunks: BN = 160 takes three of 64
    return specs(M, N, K, a_rows, p["BK"], cols, p["BK"] // cm if by_k else None)


def last_rows_spec(rung: Any, a: MapSpec, M: int) -> MapSpec:
    """The persistent kernels' second map of A (``a``: its map from ``rung_specs``): boxes of
    the rows its last row-tile holds, where that is under the tile's BM (every tile's where M <
    BM) and the rung runs no clusters - so the copy engine fills no rows past M, which cost it
    time on every stage (docs/kernels.md, "Rows past M"). The kernel copies that row-tile with it
    and counts its stages' bytes alike (tc_common.cuh's a_box). ``a`` itself elsewhere: a
    cluster's CTAs copy fixed shares of the rows."""
    p = rung.params
    bm = p["BM"]
    last = M - (M - 1) // bm * bm  # rows of the last row-tile, 1..BM
    if p.get("CLUSTER", 1) * p.get("CLUSTER_N", 1) > 1 or last == bm:
        return a
    return replace(a, box=(a.box[0], last))


def operand_maps(rung: Any, a: MapSpec, b: MapSpec, M: int, a_ptr: int,
                 b_ptr: int) -> tuple[np.ndarray, ...]:
    """The encoded maps of A and B in the order a TMA rung's kernel takes them
    (gemmlab.kernels.source.wrapper): A, then for a persistent rung A again boxed to its last
    row-tile (``last_rows_spec``), then B. C's map, where the rung takes one, follows."""
    maps = (encode(a, a_ptr),)
    if rung.persistent:
        maps += (encode(last_rows_spec(rung, a, M), a_ptr),)
    return maps + (encode(b, b_ptr),)


def zero_param() -> np.ndarray:
    """A 128-byte all-zero map parameter, for a map slot the kernel will not read (the FP8 rung's
    C map when N % 8 != 0: it stores C directly then)."""
    return as_param([0] * (MAP_BYTES // 8))


def c_spec(M: int, N: int, box_cols: int = 64) -> MapSpec:
    """The map the TMA-store epilogue writes C (M x N row-major bf16) through: boxes of 64 rows
    and ``box_cols`` columns - 64 (128 bytes, the 128-byte swizzle), 32 (64 bytes, the 64-byte
    swizzle) for tiles whose width is not whole 64-column boxes (BN = 160), or any other multiple
    of 8 up to 256, unswizzled: one box the tile's width for those that are not whole 32-column
    boxes either (BN = 200; tc_common.cuh's C_BOX)."""
    if box_cols not in (32, 64) and not (box_cols % 8 == 0 and 8 <= box_cols <= BOX_MAX):
        raise ValueError(f"C boxes are 32 or 64 columns wide (swizzled) or a multiple of 8 up to "
                         f"{BOX_MAX} (unswizzled), got {box_cols}")
    swizzle = 2 * box_cols if box_cols in (32, 64) else 0
    return MapSpec("C", (N, M), N * 2, (box_cols, 64), swizzle=swizzle)


def encode(spec: MapSpec, ptr: int) -> np.ndarray:
    """The 128-byte CUtensorMap for ``spec`` at device address ``ptr``, as a one-element numpy
    array (CuPy passes a one-element array to a kernel by value)."""
    spec.check()
    if ptr % 16:
        raise InputError(f"{spec.name}: TMA needs a 16-byte aligned base address, got "
                         f"0x{ptr:x}")
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        raise UserError("the TMA rungs need the cuda-bindings package (cuTensorMapEncodeTiled): "
                        "pip install cuda-bindings") from None
    u32, u64 = cu.cuuint32_t, cu.cuuint64_t
    err, tmap = cu.cuTensorMapEncodeTiled(
        getattr(cu.CUtensorMapDataType, ELEMENT_TYPES[spec.dtype][0]), u32(2), ptr,
        [u64(spec.dims[0]), u64(spec.dims[1])], [u64(spec.pitch)],
        [u32(spec.box[0]), u32(spec.box[1])], [u32(1), u32(1)],
        cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
        getattr(cu.CUtensorMapSwizzle, SWIZZLES[spec.swizzle]),
        getattr(cu.CUtensorMapL2promotion, L2_PROMOTION),
        cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
    if err != cu.CUresult.CUDA_SUCCESS:
        raise UserError(f"{spec.name}: cuTensorMapEncodeTiled failed ({err.name}) for dims "
                        f"{spec.dims}, pitch {spec.pitch}, box {spec.box}")
    return as_param(tmap)


def as_param(tmap: Any) -> np.ndarray:
    """A CUtensorMap (cuda-bindings object, or 16 uint64 words) as one 128-byte numpy void."""
    words = getattr(tmap, "opaque", tmap)
    raw = np.asarray(list(words), dtype=np.uint64)
    if raw.nbytes != MAP_BYTES:
        raise ValueError(f"a CUtensorMap is {MAP_BYTES} bytes, got {raw.nbytes}")
    return raw.view(np.dtype((np.void, MAP_BYTES)))
