"""The GEMM ladders: each rung's stable name, what it changes, its CUDA source, compile-time
parameters, launch geometry, and what it needs to run (dtypes, architecture, launch needs).

Two ladders share this registry:

* the FP32 SGEMM ladder (``LADDER``, ``all_rungs()``): C = alpha * A @ B + beta * C, row-major
  float32 throughout, any GPU;
* the BF16 tensor-core ladder (``TC_LADDER``, ``all_rungs("bf16")``): A (M x K, row-major) and B
  (K x N, row-major) in bfloat16, FP32 accumulation, C (M x N, row-major) in bfloat16 by default
  or float32 (the ``*_f32out`` variants); CuPy holds bfloat16 as ``uint16`` bit patterns. These
  rungs need sm_80 or newer (``Rung.arch``); a later rung can ask for ``sm_90a``;
* the FP8 ladder (``FP8_LADDER``, ``all_rungs("fp8")``, ``ladder("fp8")``): A (M x K, row-major)
  and **B given as N x K, row-major ("TN": B transposed, both operands K-major)** in e4m3, the
  tensor cores' accumulator (FP32 registers, ~13-bit FP8 accumulation on Hopper:
  gemmlab.numerics.fp8), C (M x N, row-major) in bfloat16. 8-bit wgmma cannot transpose an operand,
  so a K x N B is refused rather than copied. CuPy holds e4m3 as ``uint8`` bit patterns. sm_90a.

Every rung computes its product for any M, N, K >= 1.
Rungs whose parameters include ``VEC = 1`` use 16-byte global accesses; they need K and N to be
multiples of the elements per 16 bytes (4 for float32, 8 for bfloat16) and 16-byte aligned A, B,
C. For other inputs the launcher uses the rung's
``scalar_twin`` (same template, ``VEC = 0``); both are compiled and tested.

The kernel symbol of a rung is ``gemmlab_<name>``: an ``extern "C"`` wrapper around the family's
template (see gemmlab.kernels.source), so profilers show the rung's name.
"""

from __future__ import annotations

import dataclasses
import itertools
import types
from dataclasses import dataclass, field
from typing import Callable, Mapping

from gemmlab.errors import InputError
from gemmlab.problem import check_shape

Dim3 = tuple[int, int, int]

# CUDA limits on the grid (x: 2^31 - 1, y and z: 65535) and on 32-bit indexing in the kernels.
_GRID_X_MAX = 2**31 - 1
_GRID_YZ_MAX = 65535


# A family's Python-side mirror of its kernel's static_asserts: (params, threads per block) ->
# None when consistent, otherwise what is inconsistent ("warp tiling", "Hopper tiling", ...).
Check = Callable[[Mapping[str, int], int], str | None]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _no_check(p: Mapping[str, int], nt: int) -> str | None:
    return None


@dataclass(frozen=True)
class _Family:
    source: str
    template: str  # C++ template-id, {PARAM} placeholders
    threads: Callable[[Mapping[str, int]], int]
    block: Callable[[Mapping[str, int]], Dim3]
    tile: Callable[[Mapping[str, int]], tuple[int, int]]  # (rows of C, cols of C) per block
    rows_on_x: bool = False  # grid.x walks rows of C (naive_uncoalesced) instead of columns
    smem: Callable[[Mapping[str, int]], int] = lambda p: 0  # dynamic shared memory, bytes
    dtype: str = "fp32"  # input dtype of A and B ("fp32", "bf16" or "fp8"); accumulation is FP32
    arch: str | None = None  # the architecture the family needs ("sm_80", "sm_90a"); None: any
    tma: bool = False  # takes TMA tensor maps of A and B (made on the host) before (M, N, K...)
    persistent: bool = False  # grid = one CTA per SM (whole clusters), CTAs loop over tiles
    tma_store: bool = False  # bf16 C leaves through a TMA tensor map when EPI_PIECE > 0
    check: Check = _no_check  # the kernel's static_asserts beyond the thread count


# ---- Checks: the kernels' static_asserts, one per family (or group of families) ------------


def _check_warp_tiling(p: Mapping[str, int], nt: int) -> str | None:
    """warptiling.cu and double_buffered.cu: NT threads cover the block tile in warp tiles."""
    wmiter = (p["WM"] * p["WN"]) // (32 * p["TM"] * p["TN"] * p["WNITER"])
    ok = (
        (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32 == p["NT"]
        and wmiter >= 1 and p["WM"] % wmiter == 0 and p["WN"] % p["WNITER"] == 0
        and (p["WM"] // wmiter // p["TM"]) * (p["WN"] // p["WNITER"] // p["TN"]) == 32
        and p["BK"] % 8 == 0 and p["BM"] % 32 == 0
    )
    return None if ok else "warp tiling"


def _tc_tiling_ok(p: Mapping[str, int]) -> bool:
    """The sm_80 tensor-core kernels: warp tiles of whole 16 x 16 x 16 fragments."""
    return (p["BM"] % p["WM"] == 0 and p["BN"] % p["WN"] == 0 and p["WM"] % 16 == 0
            and p["WN"] % 16 == 0 and p["BK"] % 16 == 0 and p.get("OUT_F32", 0) in (0, 1))


def _swizzled_copy_ok(p: Mapping[str, int], nt: int) -> bool:
    """mma_sync_bf16 and cp_async_bf16: swizzled tiles, 16-byte copies spread over all threads."""
    return (p["BK"] == 32 or p["BK"] % 64 == 0) and p["BN"] % 64 == 0 and (
        p["BM"] * p["BK"] // 8) % nt == 0 and (p["BK"] * p["BN"] // 8) % nt == 0


def _check_wmma(p: Mapping[str, int], nt: int) -> str | None:
    return None if _tc_tiling_ok(p) else "tensor-core tiling"


def _check_mma_sync(p: Mapping[str, int], nt: int) -> str | None:
    return None if _tc_tiling_ok(p) and _swizzled_copy_ok(p, nt) else "tensor-core tiling"


def _check_cp_async(p: Mapping[str, int], nt: int) -> str | None:
    ok = (_tc_tiling_ok(p) and _swizzled_copy_ok(p, nt) and p["STAGES"] >= 2 and p["GROUP"] >= 0
          and nt % (p["BK"] // 8) == 0 and nt % (p["BN"] // 8) == 0)
    return None if ok else "tensor-core tiling"


def _check_hopper(p: Mapping[str, int], nt: int) -> str | None:
    """The sm_90a bf16 rungs: 128-byte swizzled BK = 64 rows, wgmma N up to 256, and clusters
    that split the B tile into whole 64-column pieces."""
    ok = (p["BK"] == 64 and p["BM"] % 64 == 0 and p["BN"] % 64 == 0 and p["BN"] <= 256
          and p["STAGES"] >= 2 and p.get("OUT_F32", 0) in (0, 1)
          and p.get("CLUSTER", 1) in (1, 2) and (p["BN"] // 64) % p.get("CLUSTER", 1) == 0)
    return None if ok else "Hopper tiling"


def _check_fp8(p: Mapping[str, int], nt: int) -> str | None:
    """persistent_fp8.cu's static_asserts."""
    cl = p.get("CLUSTER", 1)
    ok = (p["BK"] == 128 and p["BM"] % 64 == 0 and p["BN"] in (128, 256)
          and p["STAGES"] >= 2 and cl in (1, 2) and (p["BN"] // cl) % 8 == 0
          and p["BN"] // cl <= 256 and p.get("EPI_PIECE", 0) in (0, 64, 128, 256)
          and p["BN"] % max(p.get("EPI_PIECE", 0), 1) == 0)
    return None if ok else "FP8 Hopper tiling"


def _xy_threads(p: Mapping[str, int]) -> int:
    return p["BX"] * p["BY"]


def _xy_block(p: Mapping[str, int]) -> Dim3:
    return (p["BX"], p["BY"], 1)


def _flat(threads: Callable[[Mapping[str, int]], int]) -> Callable[[Mapping[str, int]], Dim3]:
    return lambda p: (threads(p), 1, 1)


def _bt1_threads(p):
    return p["BM"] * p["BN"] // p["TM"]


def _bt2_threads(p):
    return (p["BM"] // p["TM"]) * (p["BN"] // p["TN"])


def _nt(p):
    return p["NT"]


def _mn_tile(p):
    return (p["BM"], p["BN"])


_FAMILIES: dict[str, _Family] = {
    "naive_uncoalesced": _Family(
        "naive_uncoalesced.cu", "gemmlab::naive_uncoalesced<{BX}, {BY}>",
        _xy_threads, _xy_block, lambda p: (p["BX"], p["BY"]), rows_on_x=True),
    "coalesced": _Family(
        "coalesced.cu", "gemmlab::coalesced<{BX}, {BY}>",
        _xy_threads, _xy_block, lambda p: (p["BY"], p["BX"])),
    "smem_tiled": _Family(
        "smem_tiled.cu", "gemmlab::smem_tiled<{BX}, {BY}, {BK}, {EXTRA_SYNC}, {UNROLL}>",
        _xy_threads, _xy_block, lambda p: (p["BY"], p["BX"])),
    "blocktile_1d": _Family(
        "blocktile_1d.cu", "gemmlab::blocktile_1d<{BM}, {BN}, {BK}, {TM}>",
        _bt1_threads, _flat(_bt1_threads), _mn_tile),
    "blocktile_2d": _Family(
        "blocktile_2d.cu", "gemmlab::blocktile_2d<{BM}, {BN}, {BK}, {TM}, {TN}>",
        _bt2_threads, _flat(_bt2_threads), _mn_tile),
    "vectorized": _Family(
        "vectorized.cu", "gemmlab::vectorized<{BM}, {BN}, {BK}, {TM}, {TN}, {VEC}>",
        _bt2_threads, _flat(_bt2_threads), _mn_tile),
    "bank_conflict_free": _Family(
        "bank_conflict_free.cu",
        "gemmlab::bank_conflict_free<{BM}, {BN}, {BK}, {TM}, {TN}, {VEC}>",
        _bt2_threads, _flat(_bt2_threads), _mn_tile),
    "warptiling": _Family(
        "warptiling.cu",
        "gemmlab::warptiling<{BM}, {BN}, {BK}, {WM}, {WN}, {WNITER}, {TM}, {TN}, {NT}, {VEC}>",
        _nt, _flat(_nt), _mn_tile, check=_check_warp_tiling),
}
_DB_TEMPLATE = ("gemmlab::double_buffered<{BM}, {BN}, {BK}, {WM}, {WN}, {WNITER}, {TM}, {TN}, "
                "{NT}, {STAGES}, {GROUP}, {VEC}>")


def _db_smem(p: Mapping[str, int]) -> int:
    """Bytes of dynamic shared memory: STAGES x (A tile + B tile), unpadded (A is swizzled)."""
    return p["STAGES"] * p["BK"] * (p["BM"] + p["BN"]) * 4


_FAMILIES["double_buffered"] = _Family(
    "double_buffered.cu", _DB_TEMPLATE, _nt, _flat(_nt), _mn_tile, smem=_db_smem,
    check=_check_warp_tiling)
_FAMILIES["autotuned"] = dataclasses.replace(_FAMILIES["double_buffered"])
# The shape-dispatching rung (issue #12): like autotuned, an abstract rung whose own instantiation
# is double_buffered's; prepare() hands it to gemmlab.runtime.dispatch_gemm, which picks the kernels
# (gemmlab.kernels.paths) per shape.
_FAMILIES["dispatch"] = dataclasses.replace(_FAMILIES["double_buffered"])


def _warps_threads(p: Mapping[str, int]) -> int:
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32


# The BF16 tensor-core ladder (tc_common.cuh holds the device helpers they share).
_FAMILIES["wmma_bf16"] = _Family(
    "wmma_bf16.cu", "gemmlab::wmma_bf16<{BM}, {BN}, {BK}, {WM}, {WN}, {OUT_F32}>",
    _warps_threads, _flat(_warps_threads), _mn_tile, dtype="bf16", arch="sm_80",
    check=_check_wmma)
_FAMILIES["mma_sync_bf16"] = _Family(
    "mma_sync_bf16.cu",
    "gemmlab::mma_sync_bf16<{BM}, {BN}, {BK}, {WM}, {WN}, {VEC}, {OUT_F32}>",
    _warps_threads, _flat(_warps_threads), _mn_tile, dtype="bf16", arch="sm_80",
    check=_check_mma_sync)


def _tc_ring_smem(p: Mapping[str, int]) -> int:
    """Bytes of dynamic shared memory of a multistage bf16 rung: STAGES x (A tile + B tile)."""
    return p["STAGES"] * (p["BM"] * p["BK"] + p["BK"] * p["BN"]) * 2


_FAMILIES["cp_async_bf16"] = _Family(
    "cp_async_bf16.cu",
    "gemmlab::cp_async_bf16<{BM}, {BN}, {BK}, {WM}, {WN}, {STAGES}, {GROUP}, {VEC}, {OUT_F32}>",
    _warps_threads, _flat(_warps_threads), _mn_tile, smem=_tc_ring_smem, dtype="bf16",
    arch="sm_80", check=_check_cp_async)

def _wg_threads(p: Mapping[str, int]) -> int:
    """One warpgroup (128 threads) per 64 rows of the block tile, plus the producer warpgroup
    of the warp-specialised rungs (PRODUCER = 1)."""
    return (p["BM"] // 64 + p.get("PRODUCER", 0)) * 128


def _hopper_smem(p: Mapping[str, int]) -> int:
    """STAGES x (A tile + B tile) in bf16, the epilogue's staging buffers (one 64 x EPI_PIECE
    bf16 piece per consumer warpgroup, when C leaves by TMA), the mbarriers (two per stage) and
    1 KB of slack to align the tiles to the 128-byte swizzle's 1024-byte atoms."""
    staging = (p["BM"] // 64) * 64 * p["EPI_PIECE"] * 2 if _tma_epilogue(p) else 0
    return p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] * 2 + staging + 16 * p["STAGES"] + 1024


def _tma_epilogue(p: Mapping[str, int]) -> bool:
    return p.get("EPI_PIECE", 0) > 0 and not p.get("OUT_F32", 0)


_FAMILIES["wgmma_bf16"] = _Family(
    "wgmma_bf16.cu", "gemmlab::wgmma_bf16<{BM}, {BN}, {BK}, {STAGES}, {VEC}, {OUT_F32}>",
    _wg_threads, _flat(_wg_threads), _mn_tile, smem=_hopper_smem, dtype="bf16", arch="sm_90a",
    check=_check_hopper)
_FAMILIES["tma_bf16"] = _Family(
    "tma_bf16.cu", "gemmlab::tma_bf16<{BM}, {BN}, {BK}, {STAGES}, {OUT_F32}>",
    _wg_threads, _flat(_wg_threads), _mn_tile, smem=_hopper_smem, dtype="bf16", arch="sm_90a",
    tma=True, check=_check_hopper)
_FAMILIES["ws_bf16"] = _Family(
    "ws_bf16.cu", "gemmlab::ws_bf16<{BM}, {BN}, {BK}, {STAGES}, {OUT_F32}>",
    _wg_threads, _flat(_wg_threads), _mn_tile, smem=_hopper_smem, dtype="bf16", arch="sm_90a",
    tma=True, check=_check_hopper)
_FAMILIES["persistent_bf16"] = _Family(
    "persistent_bf16.cu",
    "gemmlab::persistent_bf16<{BM}, {BN}, {BK}, {STAGES}, {CLUSTER}, {GROUP}, {EPI_PIECE}, "
    "{OUT_F32}>",
    _wg_threads, _flat(_wg_threads), _mn_tile, smem=_hopper_smem, dtype="bf16", arch="sm_90a",
    tma=True, persistent=True, tma_store=True, check=_check_hopper)

DTYPES = ("fp32", "bf16", "fp8")
_ITEMSIZE = {"fp32": 4, "bf16": 2, "fp8": 1}
# How B is given per dtype: "kn" = K x N row-major; "nk" = N x K row-major ("TN", B transposed:
# the only layout 8-bit wgmma and cuBLASLt's FP8 kernels read).
B_LAYOUTS = {"fp32": "kn", "bf16": "kn", "fp8": "nk"}


def b_shape(dtype: str, K: int, N: int) -> tuple[int, int]:
    """The shape B has for rungs of ``dtype``: (K, N), or (N, K) for fp8 ("TN")."""
    return (N, K) if B_LAYOUTS[dtype] == "nk" else (K, N)
# Architectures a rung may need, with what they mean: "sm_80" runs on compute capability 8.0
# and newer; "sm_90a" (wgmma, setmaxnreg, TMA multicast) only on 9.0 and is compiled for sm_90a.
ARCHS = ("sm_80", "sm_90", "sm_90a")


@dataclass(frozen=True)
class LaunchNeeds:
    """What launching a rung takes beyond grid and block: the architecture it is compiled for
    and needs, dynamic shared memory, thread-block cluster shape and TMA tensor maps (the last
    two for the Hopper rungs still to come)."""

    arch: str | None  # None: any GPU gemmlab runs on
    dynamic_smem: int  # bytes per block
    cluster: Dim3 = (1, 1, 1)
    tensor_maps: int = 0  # CUtensorMap arguments the kernel takes, made on the host


def _cc_of(arch: str) -> tuple[int, int]:
    digits = arch.removeprefix("sm_").rstrip("a")
    return int(digits[:-1]), int(digits[-1])


def arch_refusal(rung: "Rung", cc_major: int, cc_minor: int, gpu: str = "this GPU") -> str | None:
    """None when a device of compute capability cc_major.cc_minor can run ``rung``; otherwise the
    one-line reason (the rest of the ladder still runs)."""
    need = rung.arch
    if need is None:
        return None
    major, minor = _cc_of(need)
    have = (cc_major, cc_minor)
    ok = have == (major, minor) if need.endswith("a") else have >= (major, minor)
    if ok:
        return None
    what = (f"exactly compute capability {major}.{minor}" if need.endswith("a")
            else f"compute capability {major}.{minor} or newer")
    return (f"rung {rung.name} needs {need} ({what}); {gpu} is sm_{cc_major}{cc_minor}: "
            f"skipped")


def compile_arch(rung: "Rung", device_arch: str) -> str:
    """The --gpu-architecture to compile ``rung`` for on a device of ``device_arch``: the rung's
    own arch when it needs architecture-specific features (``sm_90a``), the device's otherwise."""
    return rung.arch if rung.arch is not None and rung.arch.endswith("a") else device_arch


@dataclass(frozen=True)
class Rung:
    """One kernel of the ladder: a family's template at fixed compile-time parameters."""

    name: str  # stable id, e.g. "smem_tiled" or "smem_tiled_t16_b16x16_unroll"
    order: int  # position on the ladder (variants share their family's order)
    family: str  # e.g. "smem_tiled"
    summary: str  # one line: what it changes vs the previous rung and why
    source: str  # .cu file inside gemmlab/kernels
    kernel: str  # extern "C" symbol: gemmlab_<name>
    params: Mapping[str, int] = field(hash=False)  # compile-time parameters

    def __post_init__(self) -> None:
        if self.family not in _FAMILIES:
            raise ValueError(f"rung {self.name}: unknown family {self.family!r}")
        object.__setattr__(self, "params", types.MappingProxyType(dict(self.params)))
        _check_params(self)

    @property
    def threads(self) -> int:
        """Threads per block."""
        return _FAMILIES[self.family].threads(self.params)

    @property
    def tile(self) -> tuple[int, int]:
        """(rows, columns) of C computed by one block."""
        return _FAMILIES[self.family].tile(self.params)

    @property
    def vectorized(self) -> bool:
        """True when this instantiation uses 16-byte global accesses (needs aligned inputs)."""
        return self.params.get("VEC", 0) == 1

    @property
    def dtype(self) -> str:
        """Input dtype of A and B: "fp32", "bf16" or "fp8" (bf16 travels as uint16, e4m3 as uint8
        bit patterns)."""
        return _FAMILIES[self.family].dtype

    @property
    def b_layout(self) -> str:
        """"kn": B is K x N row-major; "nk": B is N x K row-major ("TN", the fp8 rungs)."""
        return B_LAYOUTS[self.dtype]

    @property
    def out_dtype(self) -> str:
        """dtype of C: float32 for the FP32 ladder; bf16 for tensor-core rungs unless OUT_F32."""
        if self.dtype == "fp32" or self.params.get("OUT_F32", 0):
            return "fp32"
        return "bf16"

    @property
    def accum_dtype(self) -> str:
        """Every rung accumulates in FP32."""
        return "fp32"

    @property
    def arch(self) -> str | None:
        """The architecture the rung needs ("sm_80", "sm_90a"), None when any GPU runs it."""
        return _FAMILIES[self.family].arch

    @property
    def needs(self) -> LaunchNeeds:
        """Architecture, dynamic shared memory, cluster shape and tensor maps of a launch."""
        fam = _FAMILIES[self.family]
        cluster = (self.params.get("CLUSTER", 1), 1, 1)
        return LaunchNeeds(arch=self.arch, dynamic_smem=self.dynamic_smem, cluster=cluster,
                           tensor_maps=(3 if self.tma_store else 2) if fam.tma else 0)

    @property
    def takes_c_map(self) -> bool:
        """True when the kernel template takes a pointer to C's tensor map (nullptr when the
        instantiation stores C directly)."""
        return _FAMILIES[self.family].tma_store

    @property
    def tma_store(self) -> bool:
        """True when C (bf16) leaves through a third tensor map (the TMA-store epilogue)."""
        return _FAMILIES[self.family].tma_store and _tma_epilogue(self.params)

    @property
    def tma(self) -> bool:
        """True when the kernel takes TMA tensor maps of A and B as its first two arguments."""
        return _FAMILIES[self.family].tma

    @property
    def persistent(self) -> bool:
        """True when the grid is one CTA per SM (whole clusters) and CTAs loop over tiles."""
        return _FAMILIES[self.family].persistent

    @property
    def vector_elems(self) -> int:
        """Elements per 16-byte access: 4 (float32) or 8 (bfloat16)."""
        return 16 // _ITEMSIZE[self.dtype]

    @property
    def template_call(self) -> str:
        """The C++ template-id this rung instantiates."""
        return _FAMILIES[self.family].template.format(**self.params)

    @property
    def dynamic_smem(self) -> int:
        """Bytes of dynamic shared memory per block (0: the rung uses static shared memory)."""
        return _FAMILIES[self.family].smem(self.params)

    def accepts(self, M: int, N: int, K: int) -> bool:
        """Whether the shape allows this instantiation's global accesses (pointer alignment
        aside): vector rungs need K and N multiples of ``vector_elems`` (4 for float32, 8 for
        bfloat16)."""
        w = self.vector_elems
        if self.dtype == "fp8":  # A and B are both K x (rows) K-major: only K sets their pitch
            return K % w == 0
        if self.tma:  # TMA needs 16-byte row pitches: K and N multiples of 8 bf16
            return K % w == 0 and N % w == 0
        return not self.vectorized or (K % w == 0 and N % w == 0)

    def refusal(self, M: int, N: int, K: int) -> str | None:
        """None when this rung computes M x N x K; otherwise the one-line reason, naming a rung
        that can (TMA rungs have no scalar twin: TMA cannot address rows that are not 16-byte
        multiples)."""
        if self.accepts(M, N, K) or not self.tma or self.name in AUTOTUNED:
            return None  # autotuned_bf16 sends such shapes to wgmma_bf16 (runtime.autotune)
        if self.dtype == "fp8":
            return (f"rung {self.name} needs K a multiple of 16 (TMA copies rows of A and of B - "
                    f"both K-major, K bytes each - whose pitch must be a multiple of 16 bytes); "
                    f"M={M}, N={N}, K={K} is not: pad K with zeros to {-(-K // 16) * 16}")
        return (f"rung {self.name} needs K and N multiples of {self.vector_elems} (TMA copies "
                f"rows whose pitch is a multiple of 16 bytes); M={M}, N={N}, K={K} is not: use "
                f"wgmma_bf16 (its scalar twin takes any shape)")

    def launch_config(self, M: int, N: int, K: int, sms: int | None = None
                      ) -> tuple[Dim3, Dim3, int]:
        """(grid, block, dynamic shared memory bytes) for an M x N x K product. Persistent rungs
        launch one CTA per SM (``sms``, whole clusters only) or fewer when there are fewer tiles;
        without ``sms`` they assume the H100 SXM's 132."""
        check_shape(M, N, K)
        fam = _FAMILIES[self.family]
        rows, cols = fam.tile(self.params)
        if fam.persistent:
            cluster = self.params.get("CLUSTER", 1)
            units = _cdiv(_cdiv(M, rows), cluster) * _cdiv(N, cols)
            slots = max(1, (sms or 132) // cluster)
            return (min(units, slots) * cluster, 1, 1), fam.block(self.params), fam.smem(
                self.params)
        if fam.rows_on_x:
            grid = (_cdiv(M, rows), _cdiv(N, cols), 1)
        else:
            grid = (_cdiv(N, cols), _cdiv(M, rows), 1)
        if grid[0] > _GRID_X_MAX or grid[1] > _GRID_YZ_MAX:
            raise InputError(
                f"shape M={M}, N={N}, K={K}: rung {self.name} would need grid {grid}, over the "
                f"CUDA limits ({_GRID_X_MAX}, {_GRID_YZ_MAX}, {_GRID_YZ_MAX})")
        return grid, fam.block(self.params), fam.smem(self.params)


def _check_params(r: Rung) -> None:
    """Python-side mirror of the kernels' static_asserts, so a bad rung fails at import: the
    thread count every kernel shares, then the family's own check."""
    nt = r.threads
    if nt < 32 or nt > 1024 or nt % 32:
        raise ValueError(f"rung {r.name}: {nt} threads per block (need 32..1024, x32)")
    what = _FAMILIES[r.family].check(r.params, nt)
    if what:
        raise ValueError(f"rung {r.name}: inconsistent {what} {dict(r.params)}")


def _rung(name: str, order: int, family: str, summary: str, **params: int) -> Rung:
    fam = _FAMILIES[family]
    return Rung(name=name, order=order, family=family, summary=summary, source=fam.source,
                kernel=f"gemmlab_{name}", params=params)


_WARPTILE = dict(BM=128, BN=128, BK=16, WM=64, WN=64, WNITER=4, TM=8, TN=4, NT=128)

LADDER: tuple[Rung, ...] = (
    _rung("naive_uncoalesced", 1, "naive_uncoalesced",
          "One thread per element of C, threadIdx.x walking rows: each lane of a warp reads its "
          "own row of A (the first seed article's bad kernel).",
          BX=16, BY=16),
    _rung("coalesced", 2, "coalesced",
          "threadIdx.x walks columns, so a warp reads contiguous B and writes contiguous C: same "
          "work, far fewer memory transactions.",
          BX=16, BY=16),
    _rung("smem_tiled", 3, "smem_tiled",
          "16x16 tiles of A and B staged in shared memory and reused 16 times; minimal barriers, "
          "inner loop kept rolled (the article's plain tiled kernel).",
          BX=16, BY=16, BK=16, EXTRA_SYNC=0, UNROLL=0),
    _rung("smem_tiled_unroll", 3, "smem_tiled",
          "The same tiled kernel with its inner loop fully unrolled: no loop overhead, shared "
          "loads scheduled ahead (the article's fastest simple kernel).",
          BX=16, BY=16, BK=16, EXTRA_SYNC=0, UNROLL=1),
    _rung("blocktile_1d", 4, "blocktile_1d",
          "Each thread computes 8 elements of a column: one shared load of B feeds 8 FMAs, so "
          "shared-memory traffic per FMA almost halves.",
          BM=64, BN=64, BK=8, TM=8),
    _rung("blocktile_2d", 5, "blocktile_2d",
          "Each thread computes an 8x8 sub-tile as outer products of register fragments: 16 "
          "shared loads per 64 FMAs.",
          BM=128, BN=128, BK=8, TM=8, TN=8),
    _rung("vectorized", 6, "vectorized",
          "16-byte global loads and stores, A transposed into shared memory so fragments are "
          "read with 16-byte shared loads too.",
          BM=128, BN=128, BK=8, TM=8, TN=8, VEC=1),
    _rung("bank_conflict_free", 7, "bank_conflict_free",
          "Pads the transposed A tile and interleaves each thread's columns, removing rung 6's "
          "2-way shared-memory bank conflicts (A stores, B loads).",
          BM=128, BN=128, BK=8, TM=8, TN=8, VEC=1),
    _rung("warptiling", 8, "warptiling",
          "Adds a warp level to the tiling (64x64 per warp, 8x16 per lane, 128 threads) and "
          "BK=16: more FMAs per shared load and per barrier.",
          **_WARPTILE, VEC=1),
    _rung("double_buffered", 9, "double_buffered",
          "cp.async copies the next tiles into a 3-stage shared-memory ring while the current "
          "one is computed, hiding global-memory latency.",
          **_WARPTILE, STAGES=3, GROUP=0, VEC=1),
    _rung("autotuned", 10, "autotuned",
          "double_buffered with tile sizes, pipeline depth, register cap and compiler searched "
          "on the GPU at hand; the winner is remembered per GPU and size (params: the defaults).",
          **_WARPTILE, STAGES=3, GROUP=0, VEC=1),
)

# Rungs outside the ladder's climb (gemmlab ladder does not run them unless named with --rungs).
DISPATCH = "dispatch"
SHAPE_RUNGS: tuple[Rung, ...] = (
    _rung(DISPATCH, 11, "dispatch",
          "Picks the kernel by shape: GEMV-like skinny kernels for M or N <= 16, split-K into a "
          "workspace when the tiles cannot fill the SMs, zero-padded copies so odd K or N run the "
          "16-byte path; params: its 128x128 tile kernel (double_buffered's).",
          **_WARPTILE, STAGES=3, GROUP=0, VEC=1),
)

TC_LADDER: tuple[Rung, ...] = (
    _rung("wmma_bf16", 1, "wmma_bf16",
          "Tensor cores through WMMA: 16x16x16 bf16 fragments, FP32 accumulate, 64x64 block "
          "tile staged through padded shared memory, 4 warps of 32x32 (the portable start).",
          BM=64, BN=64, BK=32, WM=32, WN=32, OUT_F32=0),
    _rung("mma_sync_bf16", 2, "mma_sync_bf16",
          "Explicit mma.sync.m16n8k16 fragments loaded by ldmatrix from XOR-swizzled "
          "(conflict-free, unpadded) tiles, 128x128 block, 8 warps of 64x32 register-blocked "
          "accumulators, epilogue straight from registers.",
          BM=128, BN=128, BK=32, WM=64, WN=32, VEC=1, OUT_F32=0),
    _rung("cp_async_bf16", 3, "cp_async_bf16",
          "Rung 2's fragments fed by a 4-stage cp.async.cg ring in dynamic shared memory (96 KB), "
          "so global latency hides behind the MMAs; 128x256 block, 8 warps of 64x64 (2/3 the "
          "shared traffic per MMA), grouped block order for L2 reuse, paired epilogue stores.",
          BM=128, BN=256, BK=32, WM=64, WN=64, STAGES=4, GROUP=8, VEC=1, OUT_F32=0),
    _rung("wgmma_bf16", 4, "wgmma_bf16",
          "Hopper's warpgroup MMA: wgmma.m64n128k16 reads A and B from 128-byte-swizzled shared "
          "tiles through descriptors (no ldmatrix, no fragments), 2 warpgroups on a 128x128 "
          "tile, tiles still copied by cp.async, 3 stages.",
          BM=128, BN=128, BK=64, STAGES=3, VEC=1, OUT_F32=0),
    _rung("tma_bf16", 5, "tma_bf16",
          "TMA: one thread hands each tile to the copy engine (tensor maps made on the host), "
          "which writes it pre-swizzled and signals an mbarrier; no per-thread copies or "
          "guards, 4 stages.",
          BM=128, BN=128, BK=64, STAGES=4, OUT_F32=0),
    _rung("ws_bf16", 6, "ws_bf16",
          "Warp specialisation: a producer warpgroup only issues TMA (setmaxnreg.dec), two "
          "consumer warpgroups only issue wgmma on a 128x256 tile (setmaxnreg.inc, m64n256 "
          "accumulators), coupled by full/empty mbarriers, no __syncthreads in the loop.",
          BM=128, BN=256, BK=64, STAGES=4, PRODUCER=1, MINB=1, OUT_F32=0),
    _rung("persistent_bf16", 7, "persistent_bf16",
          "Persistent CTAs (one per SM) walk the tiles in grouped order, loading the next tile "
          "during the current epilogue; clusters of 2 along M share each B tile through TMA "
          "multicast, halving B's L2 traffic; C leaves through shared memory and TMA stores "
          "that drain during the next tile.",
          BM=128, BN=256, BK=64, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
          EPI_PIECE=128, OUT_F32=0),
    _rung("autotuned_bf16", 8, "persistent_bf16",
          "persistent_bf16 with tile width, stages, cluster size, tile order and epilogue piece "
          "timed on the GPU at hand (8 candidates); the winner is remembered per GPU and size "
          "(params: the defaults). Shapes TMA cannot take run wgmma_bf16.",
          BM=128, BN=256, BK=64, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
          EPI_PIECE=128, OUT_F32=0),
)


def f32_out_twin(rung: Rung) -> Rung:
    """The float32-output instantiation of a bf16-output tensor-core rung (same kernel, the
    epilogue writes C as float32 instead of rounding to bfloat16)."""
    if rung.out_dtype == "fp32":
        return rung
    name = f"{rung.name}_f32out"
    return Rung(name=name, order=rung.order, family=rung.family,
                summary=f"{rung.summary} [float32 output]", source=rung.source,
                kernel=f"gemmlab_{name}", params={**rung.params, "OUT_F32": 1})


def _tc_all() -> tuple[Rung, ...]:
    base = (TC_LADDER + tuple(f32_out_twin(r) for r in TC_LADDER if r.name not in AUTOTUNED)
            + _BF16_CANDIDATES)
    return base + tuple(scalar_twin(r) for r in base if r.vectorized)


_BY_NAME: dict[str, Rung] = {}


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
        out.append(_rung(_variant_name(bx, by, bk, extra, unroll), 3, "smem_tiled",
                         f"Shared-memory tiling sweep (seed article 1): {what}.",
                         BX=bx, BY=by, BK=bk, EXTRA_SYNC=extra, UNROLL=unroll))
    return tuple(out)


_SWEEP = _make_sweep()


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
        out.append(_rung(name, 10, "autotuned",
                         f"Autotuner candidate: {bm}x{bn}x{bk} block tile, {wm}x{wn} warp tile, "
                         f"{nt} threads, {st} stages{extra}.",
                         BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, WNITER=wni, TM=8, TN=4, NT=nt,
                         STAGES=st, GROUP=group, MINB=minb, VEC=1))
    return tuple(out)


_CANDIDATES = _make_candidates()


def scalar_twin(rung: Rung) -> Rung:
    """The VEC = 0 instantiation of a vector rung (4-byte global accesses, any shape and
    alignment); the rung itself when it is not vectorized."""
    if not rung.vectorized:
        return rung
    name = f"{rung.name}_scalar"
    return Rung(name=name, order=rung.order, family=rung.family,
                summary=f"{rung.summary} [{_ITEMSIZE[rung.dtype]}-byte global accesses: any shape "
                        f"and alignment]" if rung.dtype != "fp32" else
                f"{rung.summary} [4-byte global accesses: unaligned inputs]",
                source=rung.source, kernel=f"gemmlab_{name}",
                params={**rung.params, "VEC": 0})


def sweep_variants() -> tuple[Rung, ...]:
    """The first seed article's smem_tiled variants: tile 8/16/32, block shapes 8x8, 16x16,
    32x8, 32x16, extra vs minimal barriers, rolled vs unrolled inner loop."""
    return _SWEEP


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
        out.append(_rung(name, 8, "persistent_bf16",
                         f"BF16 autotuner candidate: persistent 128x{bn}x64 tiles, {st} stages, "
                         f"clusters of {cl}, bands of {group} tile-rows, epilogue pieces of {piece} "
                         f"columns.",
                         BM=128, BN=bn, BK=64, STAGES=st, PRODUCER=1, MINB=1, CLUSTER=cl,
                         GROUP=group, EPI_PIECE=piece, OUT_F32=0))
    return tuple(out)


_BF16_CANDIDATES = _make_bf16_candidates()
AUTOTUNED = ("autotuned", "autotuned_bf16")  # the abstract rungs resolved per GPU and shape


def autotune_candidates(dtype: str = "fp32") -> tuple[Rung, ...]:
    """The instantiations the autotuned rung of ``dtype``'s ladder chooses from."""
    _check_dtype(dtype)
    return _BF16_CANDIDATES if dtype == "bf16" else _CANDIDATES


def _check_dtype(dtype: str | None) -> None:
    if dtype is not None and dtype not in DTYPES:
        raise InputError(f"dtype={dtype!r}: expected one of {', '.join(DTYPES)}")


def all_rungs(dtype: str | None = "fp32") -> tuple[Rung, ...]:
    """Every instantiation gemmlab can launch for ``dtype``.

    "fp32" (the default, as before the tensor-core ladder existed): the SGEMM ladder, the sweep,
    the autotuner's candidates, the dispatch rung and the scalar twin of each vector rung. "bf16":
    the tensor-core ladder, the float32-output twin of each rung and the scalar twin of each vector
    rung. "fp8": the FP8 ladder (no twins: bf16 output only, TMA only). None: all three.
    """
    _check_dtype(dtype)
    if dtype == "bf16":
        return _tc_all()
    if dtype == "fp8":
        return FP8_LADDER
    base = LADDER + _SWEEP + _CANDIDATES + SHAPE_RUNGS
    fp32 = base + tuple(scalar_twin(r) for r in base if r.vectorized)
    return fp32 if dtype == "fp32" else fp32 + _tc_all() + FP8_LADDER


def ladder(dtype: str = "fp32") -> tuple[Rung, ...]:
    """The rungs ``gemmlab ladder --dtype DTYPE`` climbs: LADDER, TC_LADDER or FP8_LADDER."""
    _check_dtype(dtype)
    return {"bf16": TC_LADDER, "fp8": FP8_LADDER}.get(dtype, LADDER)


def get(name: str) -> Rung:
    """The rung called ``name`` (either ladder); InputError listing the valid names otherwise."""
    if not _BY_NAME:
        _BY_NAME.update((r.name, r) for r in all_rungs(None))
    try:
        return _BY_NAME[name]
    except KeyError:
        ladder_names = ", ".join(r.name for r in LADDER)
        tc = ", ".join(r.name for r in TC_LADDER)
        f8 = ", ".join(r.name for r in FP8_LADDER)
        raise InputError(
            f"unknown rung {name!r}; ladder rungs: {ladder_names} (plus the smem_tiled_t*_b* "
            f"sweep variants, autotuned_* candidates and *_scalar twins: see "
            f"gemmlab.kernels.registry.all_rungs()); {DISPATCH} (picks kernels by shape); "
            f"bf16 tensor-core rungs: {tc} (plus *_f32out and *_scalar twins); fp8 rungs: {f8}") from None


def names() -> tuple[str, ...]:
    """Names of all rungs of both ladders, in all_rungs(None) order."""
    return tuple(r.name for r in all_rungs(None))


# ---- The FP8 (e4m3) ladder -----------------------------------------------------------------
# A (M x K) and B given as N x K ("TN"), both row-major e4m3 (uint8 bits), so both operands are
# K-major as 8-bit wgmma requires; C bf16. See persistent_fp8.cu.


def _fp8_smem(p: Mapping[str, int]) -> int:
    """STAGES x (A tile + B tile) in e4m3 (1 byte each), the bf16 epilogue's staging buffers
    (one 64 x EPI_PIECE piece per consumer warpgroup), the mbarriers and 1 KB of alignment slack
    (as ``_hopper_smem``)."""
    staging = (p["BM"] // 64) * 64 * p["EPI_PIECE"] * 2 if p.get("EPI_PIECE", 0) > 0 else 0
    return p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] + staging + 16 * p["STAGES"] + 1024


_FAMILIES["persistent_fp8"] = _Family(
    "persistent_fp8.cu",
    "gemmlab::persistent_fp8<{BM}, {BN}, {BK}, {STAGES}, {CLUSTER}, {GROUP}, {EPI_PIECE}>",
    _wg_threads, _flat(_wg_threads), _mn_tile, smem=_fp8_smem, dtype="fp8", arch="sm_90a",
    tma=True, persistent=True, tma_store=True, check=_check_fp8)

FP8_LADDER: tuple[Rung, ...] = (
    _rung("persistent_fp8", 1, "persistent_fp8",
          "persistent_bf16 with e4m3 inputs (B given N x K, 'TN'): BK = 128 e4m3 per 128-byte "
          "swizzle row, wgmma.m64n256k32.e4m3 with both operands K-major, each CTA of a 2-CTA "
          "cluster multicasting half of the K-major B tile in one TMA box; same stage bytes, "
          "twice the K per stage; bf16 C through TMA stores.",
          BM=128, BN=256, BK=128, STAGES=4, PRODUCER=1, MINB=1, CLUSTER=2, GROUP=8,
          EPI_PIECE=128),
)
