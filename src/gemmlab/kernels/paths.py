"""The kernels behind the shape-dispatching rung (``dispatch``, issue #12), apart from the ladder.

They are not ladder rungs: each has its own argument list (leading dimensions, K-slices, a
workspace), so none of them can be launched as ``kernel(M, N, K, alpha, A, B, beta, C)``. The
launcher (``gemmlab.runtime.dispatch``) strings them together per shape:

* ``tile_ld``: double_buffered's pipelined warp tiles with leading dimensions and one K-slice per
  ``blockIdx.z`` (``tile_ld.cu``), in two tile shapes: ``BIG`` (64 x 128 x 32, the H100's fastest
  instantiation of the template) and ``SMALL`` (64 x 64: twice the blocks when the big tiles would
  leave SMs idle);
  VEC / VEC_C choose 16-byte loads / 16-byte epilogue stores.
* ``tiny``: the first seed article's shared-memory tiling (``smem_tiled.cu``, 32 x 8 threads, one
  element of C each, K-steps of 32, unrolled) for products so small that launch and latency are
  the whole time (127^3).
* ``skinny_m`` / ``skinny_n``: GEMV-like kernels for M <= 16 / N <= 16 (``skinny.cu``).
* ``pad``: zero-padded aligned copies of A and B; ``reduce``: the split-K reduction
  (``dispatch_helpers.cu``).

``translation_unit`` builds the compilable text (the .cu file with its includes inlined, plus one
``extern "C"`` wrapper per instantiation), as ``gemmlab.kernels.source`` does for rungs.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from gemmlab.kernels.source import read_source

Param = tuple[str, str]  # (C type, name)

_PTR_IN, _PTR_OUT = "const float* __restrict__", "float* __restrict__"

_TILE_SIG: tuple[Param, ...] = (
    ("int", "M"), ("int", "N"), ("int", "K"), ("int", "lda"), ("int", "ldb"), ("int", "ldc"),
    ("int", "kc"), ("long long", "c_stride"), ("float", "alpha"), (_PTR_IN, "A"), (_PTR_IN, "B"),
    ("float", "beta"), (_PTR_OUT, "C"))
# W is not __restrict__: with one K-slice the launcher passes C there (the kernel never touches it).
_SKINNY_SIG: tuple[Param, ...] = (
    ("int", "M"), ("int", "N"), ("int", "K"), ("int", "kc"), ("long long", "ws"),
    ("float", "alpha"), (_PTR_IN, "A"), (_PTR_IN, "B"), ("float", "beta"), (_PTR_OUT, "C"),
    ("float*", "W"))
_PAD_SIG: tuple[Param, ...] = (
    ("int", "rows_a"), ("int", "cols_a"), ("int", "ld_a"), ("const float*", "A"), ("float*", "Ap"),
    ("int", "blocks_a"), ("int", "rows_b"), ("int", "cols_b"), ("int", "ld_b"),
    ("const float*", "B"), ("float*", "Bp"))
_RUNG_SIG: tuple[Param, ...] = (  # a ladder rung's own argument list
    ("int", "M"), ("int", "N"), ("int", "K"), ("float", "alpha"), (_PTR_IN, "A"), (_PTR_IN, "B"),
    ("float", "beta"), (_PTR_OUT, "C"))
_REDUCE_SIG: tuple[Param, ...] = (
    ("int", "count"), ("int", "S"), ("long long", "ws"), ("float", "alpha"), (_PTR_IN, "W"),
    ("float", "beta"), (_PTR_OUT, "C"))

# The tensor-core dispatch rungs' helper (tc_helpers.cu): operand copies to 16-byte pitches.
_REPITCH16_SIG: tuple[Param, ...] = (
    ("int", "rows"), ("int", "cols"), ("long long", "ld_in"), ("long long", "ld_out"),
    ("const unsigned short* __restrict__", "src"), ("unsigned short* __restrict__", "dst"))
_REPITCH8_SIG: tuple[Param, ...] = tuple(
    (t.replace("unsigned short", "unsigned char"), n) for t, n in _REPITCH16_SIG)
# The decode kernels (decode_tc.cu): a ladder rung's argument list in the tensor dtypes.
_GEMV_BF16_SIG: tuple[Param, ...] = (
    ("int", "M"), ("int", "N"), ("int", "K"), ("float", "alpha"),
    ("const unsigned short* __restrict__", "A"), ("const unsigned short* __restrict__", "B"),
    ("float", "beta"), ("unsigned short* __restrict__", "C"))
_GEMV_FP8_SIG: tuple[Param, ...] = (
    ("int", "M"), ("int", "N"), ("int", "K"), ("float", "alpha"),
    ("const unsigned char* __restrict__", "A"), ("const unsigned char* __restrict__", "B"),
    ("float", "beta"), ("unsigned short* __restrict__", "C"))
# The swapped-operand wgmma decode kernel (decode_wgmma.cu): the tensor maps of B (the weights)
# and A (the tokens) instead of their pointers.
_MAP = "const __grid_constant__ gemmlab::tc::TensorMap"
_SWAP_SIG: tuple[Param, ...] = (
    (_MAP, "tmW"), (_MAP, "tmX"), ("int", "M"), ("int", "N"), ("int", "K"), ("float", "alpha"),
    ("float", "beta"), ("unsigned short* __restrict__", "C"))


def _swap_smem(p: Mapping[str, int]) -> int:
    """decode_wgmma.cu's ring: STAGES x (64 rows of B + TN tokens) x 128 bytes, two barriers per
    stage, and 1 KB to align the ring to the 128-byte swizzle's 1024-byte atoms."""
    return p["STAGES"] * (64 + p["TN"]) * 128 + 16 * p["STAGES"] + 1024


@dataclass(frozen=True)
class _PathFamily:
    source: str
    template: str  # C++ template-id, {PARAM} placeholders
    signature: tuple[Param, ...]
    threads: Callable[[Mapping[str, int]], int]
    smem: Callable[[Mapping[str, int]], int] = lambda p: 0  # dynamic shared memory, bytes
    block: Callable[[Mapping[str, int]], tuple[int, int, int]] | None = None  # None: (threads, 1, 1)
    # compile-time thread-block cluster shape (__cluster_dims__; sm_90), None: no cluster
    cluster: Callable[[Mapping[str, int]], tuple[int, int, int] | None] = lambda p: None


def _tile_smem(p: Mapping[str, int]) -> int:
    return p["STAGES"] * p["BK"] * (p["BM"] + p["BN"]) * 4


FAMILIES: dict[str, _PathFamily] = {
    "tile_ld": _PathFamily(
        "tile_ld.cu",
        "gemmlab::tile_ld<{BM}, {BN}, {BK}, {WM}, {WN}, {WNITER}, {TM}, {TN}, {NT}, {STAGES}, "
        "{GROUP}, {VEC}, {VEC_C}>", _TILE_SIG, lambda p: p["NT"], _tile_smem),
    "tiny": _PathFamily("smem_tiled.cu", "gemmlab::smem_tiled<{BX}, {BY}, {BK}, 0, 1>", _RUNG_SIG,
                        lambda p: p["BX"] * p["BY"], block=lambda p: (p["BX"], p["BY"], 1)),
    "skinny_m": _PathFamily("skinny.cu", "gemmlab::skinny_m<{MR}, {VEC}>", _SKINNY_SIG,
                            lambda p: 256),
    "skinny_n": _PathFamily("skinny.cu", "gemmlab::skinny_n<{NR}, {VEC}>", _SKINNY_SIG,
                            lambda p: 256),
    "pad": _PathFamily("dispatch_helpers.cu", "gemmlab::pad2", _PAD_SIG, lambda p: 256),
    "reduce": _PathFamily("dispatch_helpers.cu", "gemmlab::splitk_reduce<{VEC}>", _REDUCE_SIG,
                          lambda p: 256),
    "repitch16": _PathFamily("tc_helpers.cu", "gemmlab::repitch<unsigned short>", _REPITCH16_SIG,
                             lambda p: 256),
    "repitch8": _PathFamily("tc_helpers.cu", "gemmlab::repitch<unsigned char>", _REPITCH8_SIG,
                            lambda p: 256),
    "gemv_bf16": _PathFamily("decode_tc.cu", "gemmlab::gemv_bf16<{MR}, {COLS}, {KS}>",
                             _GEMV_BF16_SIG, lambda p: 256,
                             cluster=lambda p: (1, p["KS"], 1) if p["KS"] > 1 else None),
    "gemv_fp8": _PathFamily("decode_tc.cu", "gemmlab::gemv_fp8<{MT}, {KS}>", _GEMV_FP8_SIG,
                            lambda p: 256,
                            cluster=lambda p: (1, p["KS"], 1) if p["KS"] > 1 else None),
    "gemv_bf16_tc": _PathFamily("decode_tc.cu", "gemmlab::gemv_bf16_tc<{MT}, {NW}, {KS}>",
                                _GEMV_BF16_SIG, lambda p: 256,
                                cluster=lambda p: (1, p["KS"], 1) if p["KS"] > 1 else None),
    "swap": _PathFamily("decode_wgmma.cu", "gemmlab::swap_decode<{DT}, {TN}, {STAGES}, {KS}, {TRIM}>",
                        _SWAP_SIG, lambda p: 160, _swap_smem,
                        cluster=lambda p: (1, p["KS"], 1) if p["KS"] > 1 else None),
}


@dataclass(frozen=True)
class PathKernel:
    """One instantiation: a family's template at fixed parameters, with its extern "C" symbol."""

    name: str
    family: str
    params: Mapping[str, int] = field(hash=False)

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"path kernel {self.name}: unknown family {self.family!r}")
        object.__setattr__(self, "params", types.MappingProxyType(dict(self.params)))

    @property
    def kernel(self) -> str:
        return f"gemmlab_{self.name}"

    @property
    def source(self) -> str:
        return FAMILIES[self.family].source

    @property
    def signature(self) -> tuple[Param, ...]:
        return FAMILIES[self.family].signature

    @property
    def threads(self) -> int:
        return FAMILIES[self.family].threads(self.params)

    @property
    def block(self) -> tuple[int, int, int]:
        fam = FAMILIES[self.family]
        return fam.block(self.params) if fam.block else (self.threads, 1, 1)

    @property
    def dynamic_smem(self) -> int:
        return FAMILIES[self.family].smem(self.params)

    @property
    def cluster(self) -> tuple[int, int, int] | None:
        """The compile-time cluster shape (a grid's extent along it must be a multiple)."""
        return FAMILIES[self.family].cluster(self.params)

    @property
    def arch(self) -> str | None:
        """The architecture it needs beyond gemmlab's floor, as ``Rung.arch`` says it: sm_90a for
        the wgmma decode kernel, none for the others (the cp.async kernels need sm_80, as
        double_buffered does)."""
        return "sm_90a" if self.family == "swap" else None

    @property
    def tile(self) -> tuple[int, int] | None:
        """(rows, columns) of C per block for the tile and tiny kernels, None for the others."""
        if "BM" in self.params:
            return (self.params["BM"], self.params["BN"])
        if "BX" in self.params:
            return (self.params["BY"], self.params["BX"])
        return None

    @property
    def template_call(self) -> str:
        return FAMILIES[self.family].template.format(**self.params)


# The two tile shapes. BIG is the fastest instantiation of the template on the H100 at 4096^3 of
# 197 timed with nvcc 13.0 (benchmarks/fp32_tile_sweep.py, docs/results/fp32-tile-sweep-h100-
# 2026-11-23: 88.3% of cuBLAS, against 78.7% for double_buffered's 128 x 128 x 16; also the
# autotuner's H100 winner): a 64 x 128 x 32 block tile, 4 warps of 32 x 64 (8 x 8 per lane),
# 2 cp.async stages (48 KiB), and a register cap of 168 for 3 resident blocks per SM (MINB).
BIG = dict(BM=64, BN=128, BK=32, WM=32, WN=64, WNITER=2, TM=8, TN=4, NT=128, STAGES=2, GROUP=0,
           MINB=3)
# SMALL keeps the 4-warp block and the 8 x 4 lane tile but gives each warp 32 x 32 (24 KiB): twice
# the blocks of BIG for the same output, for shapes whose big tiles would leave SMs without work.
# It asks for 4 resident blocks (MINB, __launch_bounds__'s second argument): left alone, ptxas
# 13.0 settles at 96 registers for sm_80 and spills 20 bytes in the 4-byte-epilogue variant; with
# the bound it uses ~108 and spills nothing (sm_90: 107, 4 blocks of 4 warps per SM).
SMALL = dict(BM=64, BN=64, BK=16, WM=32, WN=32, WNITER=1, TM=8, TN=4, NT=128, STAGES=3, GROUP=0,
             MINB=4)
TILES = {"big": BIG, "small": SMALL}
# (VEC, VEC_C) instantiated: 16-byte both ways; 16-byte loads with a 4-byte epilogue (padded copies
# of A / B with N % 4 != 0, or a misaligned C); 4-byte throughout (the "scalar" policy).
TILE_VECS = ((1, 1), (1, 0), (0, 0))
# The tiny kernel: smem_tiled_t32_b32x8_unroll, the fastest of 45 FP32 kernels timed at 127^3 on
# the H100 (7.2 us, 146% of cuBLAS's 10.5 us; the 64 x 64 tile kernel took 18.6 us unsplit and
# 10.3 us with 8 K-slices and the reduction; fp32-tile-sweep-h100-2026-11-23).
TINY = PathKernel("tiny_32x8", "tiny", {"BX": 32, "BY": 8, "BK": 32})
SKINNY_ROWS = (1, 2, 4, 8, 16)  # MR / NR instantiated: the next one up from M (or N) is used


def tile_kernel(tile: str, vec: int, vec_c: int) -> PathKernel:
    p = TILES[tile]
    return PathKernel(f"tile_ld_{p['BM']}x{p['BN']}_v{vec}c{vec_c}", "tile_ld",
                      {**p, "VEC": vec, "VEC_C": vec_c})


def skinny_kernel(side: str, rows: int, vec: int) -> PathKernel:
    """side "m" (M <= 16: MR = rows) or "n" (N <= 16: NR = rows)."""
    key = "MR" if side == "m" else "NR"
    return PathKernel(f"skinny_{side}{rows}_v{vec}", f"skinny_{side}", {key: rows, "VEC": vec})


PAD = PathKernel("pad2", "pad", {})
# Every dispatch call launches exactly one main kernel (tile_ld, tiny or a skinny kernel), before
# and after which the copies and the reduction may run: a profiler filter that picks the main one.
MAIN_KERNEL_REGEX = r"^gemmlab_(tile_ld|skinny|tiny)_"


def reduce_kernel(vec: int) -> PathKernel:
    return PathKernel(f"splitk_reduce_v{vec}", "reduce", {"VEC": vec})


REPITCH = {2: PathKernel("repitch16", "repitch16", {}), 1: PathKernel("repitch8", "repitch8", {})}


def tc_helper_kernels() -> tuple[PathKernel, ...]:
    """The tensor-core dispatch rungs' helpers (one translation unit: tc_helpers.cu)."""
    return (REPITCH[2], REPITCH[1])


# Decode kernels of the tensor dispatch rungs: bf16 rows of tokens per block (MR) and columns
# per block (COLS); fp8 groups of 8 tokens (MT). Kernel names start gemmlab_dispatch_<dtype>_ so
# the profiler's dispatch filter (gemmlab.profile.targets) finds them.
GEMV_BF16_ROWS = (1, 2, 4, 8, 16)
GEMV_BF16_COLS = (16, 32, 64)
GEMV_FP8_TILES = (1, 2)
# Blocks of a cluster sharing one strip's K (grid.y), adding their partial sums through
# distributed shared memory: bf16 one token (the rules' only CUDA-core decode), fp8 every tile.
GEMV_SPLITS = (1, 2, 4, 8)
# The bf16 tensor-core decode kernel (gemv_bf16_tc): (MT, NW) = 16-token tiles and 32-column
# groups per block (the warps' partial sums, 8 x 16 MT x 32 NW floats, within 32 KB), and KS
# blocks per cluster sharing a strip's K (grid.y). 16 tokens x 32 columns: registers capped for
# two resident blocks per SM (MINB, __launch_bounds__'s second argument: 128 registers, no
# spills; uncapped, ptxas took 146). 16 x 64 takes 116 uncapped (capped, it spilled 8 bytes).
MMA_BF16_SHAPES = ((1, 1), (1, 2), (2, 1))
MMA_BF16_SPLITS = (1, 2, 4, 8)


def gemv_kernel(dtype: str, rows: int, cols: int = 0, ks: int = 1) -> PathKernel:
    """The decode kernel for up to ``rows`` tokens (bf16: ``cols`` columns per block), ``ks``
    blocks per strip sharing its K (a cluster; bf16 one token only)."""
    if ks not in GEMV_SPLITS or (dtype == "bf16" and ks > 1 and rows != 1):
        raise ValueError(f"no {dtype} decode instantiation for {rows} tokens with {ks} blocks "
                         f"per strip")
    tail = f"_k{ks}" if ks > 1 else ""
    if dtype == "bf16":
        return PathKernel(f"dispatch_bf16_gemv_m{rows}_c{cols}{tail}", "gemv_bf16",
                          {"MR": rows, "COLS": cols, "KS": ks})
    mt = -(-rows // 8)
    return PathKernel(f"dispatch_fp8_gemv_m{8 * mt}{tail}", "gemv_fp8", {"MT": mt, "KS": ks})


def mma_decode_kernel(rows: int, cols: int, ks: int) -> PathKernel:
    """The bf16 tensor-core decode kernel for up to ``rows`` tokens (16 or 32), ``cols``
    columns per block (32 or 64; 64 with 16 tokens only) and ``ks`` blocks per cluster on one
    strip."""
    mt, nw = -(-rows // 16), cols // 32
    if (mt, nw) not in MMA_BF16_SHAPES or cols % 32 or ks not in MMA_BF16_SPLITS:
        raise ValueError(f"no mma decode instantiation for {rows} tokens, {cols} columns, "
                         f"{ks} blocks per strip")
    return PathKernel(f"dispatch_bf16_mma_m{16 * mt}_c{cols}_k{ks}", "gemv_bf16_tc",
                      {"MT": mt, "NW": nw, "KS": ks, "MINB": 2 if (mt, nw) == (1, 1) else 0})


# The swapped-operand wgmma decode kernel (swap_decode): TN tokens as wgmma's N side (m64n8 to
# m64n128), 64 columns of C per CTA, KS CTAs of a cluster sharing a strip's K, STAGES stages of
# 128 bytes of K (9 KB at 8 tokens, 10 KB at 16, 12 KB at 32). M past TN takes cdiv(M, TN) token
# tiles, a CTA each (8- to 32-token tiles).
SWAP_TOKENS = (8, 16, 32, 64, 128)
SWAP_SPLITS = (1, 2, 4, 8)
SWAP_STAGES = (4, 6, 8, 12, 16)
SWAP_DTYPES = {"bf16": 0, "fp8": 1}
# Token tiles from this size copy only the tokens there are (TRIM: tma.box_rows), rather than
# boxes of the whole tile whose rows past M the copy engine fills with zeros: at 64 and 128 the
# fill cost up to a third of the time (72 tokens, m128 x 2 CTAs a strip: 50.2 -> 37.3 us, H200);
# at 16 it saved nothing, and the trimming code made the unsplit m16 kernel ~2% slower on the same
# instructions in its loop (docs/results/tc-rows-2026-11-29, run 1), so 16 and 32 keep whole boxes.
SWAP_TRIM_TN = 64
SM90_SMEM_PER_BLOCK = 227 * 1024  # the most shared memory (static + dynamic) a block may opt in to


def swap_stages(tn: int) -> tuple[int, ...]:
    """The ring depths instantiated for ``tn`` tokens: those whose ring fits a block's shared
    memory (all five at 8 to 32 tokens, to 12 at 64, to 8 at 128). The partial sums reuse the
    ring once it is read: the kernel has no static shared memory."""
    return tuple(st for st in SWAP_STAGES if _swap_smem({"STAGES": st, "TN": tn}) <= SM90_SMEM_PER_BLOCK)


def swap_kernel(dtype: str, rows: int, ks: int, stages: int) -> PathKernel:
    """The swapped-operand wgmma decode kernel whose token tile is the smallest of
    ``SWAP_TOKENS`` that holds ``rows`` tokens, with ``ks`` CTAs of a cluster sharing each
    64-column strip's K and a ring of ``stages`` stages."""
    tn = next((t for t in SWAP_TOKENS if t >= rows), None)
    if (dtype not in SWAP_DTYPES or tn is None or ks not in SWAP_SPLITS
            or stages not in swap_stages(tn)):
        raise ValueError(f"no {dtype} swapped-operand decode instantiation for {rows} tokens "
                         f"with {ks} blocks per strip and {stages} stages")
    return PathKernel(f"dispatch_{dtype}_swap_m{tn}_k{ks}_s{stages}", "swap",
                      {"DT": SWAP_DTYPES[dtype], "TN": tn, "STAGES": stages, "KS": ks,
                       "TRIM": int(tn >= SWAP_TRIM_TN)})


def swap_kernels() -> tuple[PathKernel, ...]:
    """Every swapped-operand decode instantiation (one translation unit: decode_wgmma.cu)."""
    return tuple(swap_kernel(d, tn, ks, st) for d in SWAP_DTYPES for tn in SWAP_TOKENS
                 for ks in SWAP_SPLITS for st in swap_stages(tn))


def gemv_kernels() -> tuple[PathKernel, ...]:
    """Every decode instantiation (one translation unit: decode_tc.cu)."""
    return (tuple(gemv_kernel("bf16", r, c, ks) for r in GEMV_BF16_ROWS for c in GEMV_BF16_COLS
                  for ks in (GEMV_SPLITS if r == 1 else (1,)))
            + tuple(gemv_kernel("fp8", 8 * t, 0, ks) for t in GEMV_FP8_TILES for ks in GEMV_SPLITS)
            + tuple(mma_decode_kernel(16 * mt, 32 * nw, ks) for mt, nw in MMA_BF16_SHAPES
                    for ks in MMA_BF16_SPLITS))


def all_path_kernels() -> tuple[PathKernel, ...]:
    """Every instantiation the dispatcher can launch (the nvcc test compiles them all)."""
    out = [tile_kernel(t, v, c) for t in TILES for v, c in TILE_VECS]
    out += [skinny_kernel(side, r, v) for side in ("m", "n") for r in SKINNY_ROWS for v in (0, 1)]
    out += [TINY, PAD, reduce_kernel(0), reduce_kernel(1)]
    return tuple(out)


def wrapper(k: PathKernel) -> str:
    """The extern "C" kernel around ``k``'s template (MINB > 0: ptxas must fit that many blocks
    per SM, a register cap)."""
    params = ", ".join(f"{t} {n}" for t, n in k.signature)
    args = ", ".join(n for _, n in k.signature)
    bounds = f"{k.threads}" + (f", {k.params['MINB']}" if k.params.get("MINB", 0) > 0 else "")
    dims = k.cluster
    attrs = f"__cluster_dims__({dims[0]}, {dims[1]}, {dims[2]}) " if dims else ""
    return (f'extern "C" __global__ void {attrs}__launch_bounds__({bounds}) {k.kernel}({params}) {{\n'
            f"    {k.template_call}({args});\n}}\n")


def translation_unit(kernels: Iterable[PathKernel]) -> str:
    """One compilable text for path kernels that share a source file."""
    kernels = list(kernels)
    sources = {k.source for k in kernels}
    if len(sources) != 1:
        raise ValueError(f"path kernels from {len(sources)} sources cannot share a unit: "
                         f"{sorted(sources)}")
    return read_source(kernels[0].source) + "\n" + "\n".join(wrapper(k) for k in kernels)
