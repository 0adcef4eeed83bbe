"""The kernel families: what a template needs to become a rung, and what a rung is.

A family is one CUDA template (a .cu file under gemmlab/kernels): its template-id, how its
parameters set threads, block, tile and dynamic shared memory, the input dtype and architecture it
needs, how it is launched (TMA tensor maps, persistent grid) and the consistency check that mirrors
its static_asserts. A ``Rung`` is a family's template at fixed compile-time parameters; the ladders
that name them live in gemmlab.kernels.ladders, the lookups in gemmlab.kernels.registry.

Each family carries its own check, so a new family states its constraints next to its template
instead of adding a branch to a chain keyed on dtype; a bad rung still fails at import.

The dtype and architecture facts live here too: how B is given per dtype (``B_LAYOUTS``,
``b_shape``), which architectures a rung may need (``ARCHS``), whether a device can run a rung
(``arch_refusal``) and what to compile it for (``compile_arch``).
"""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass, field
from typing import Callable, Mapping

from gemmlab.errors import InputError
from gemmlab.kernels.clusters import persistent_clusters
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
    splitk: bool = False  # takes `int splits, float* W` after K (W: partial sums and counters)
    check: Check = _no_check  # the kernel's static_asserts beyond the thread count
    # template parameters a rung may leave out, with the value the template gets then
    defaults: Mapping[str, int] = dataclasses.field(default_factory=dict)


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


def _cluster_ok(p: Mapping[str, int]) -> bool:
    """The persistent kernels' clusters: CLUSTER CTAs along M (sharing B) times CLUSTER_N along
    N (sharing A), at most 8 (the portable cluster size), A's share whole 8-row atoms."""
    cm, cn = p.get("CLUSTER", 1), p.get("CLUSTER_N", 1)
    return cm >= 1 and cn >= 1 and cm * cn <= 8 and (p["BM"] // cn) % 8 == 0 and p["BM"] % cn == 0


def _check_persistent_bf16(p: Mapping[str, int], nt: int) -> str | None:
    """persistent_bf16.cu's static_asserts: 128-byte swizzled BK = 64 rows, 64-row warpgroups,
    B in 64-column chunks (the 128-byte swizzle; BN = 160 in three, EPI_PIECE 0 or 160) or, for
    BN = 32, one 32-column chunk (the 64-byte swizzle); a column of the cluster shares
    B by whole chunks, or by whole 8-row atoms of K when the chunks are fewer than its CTAs."""
    bn, cm = p["BN"], p.get("CLUSTER", 1)
    cols = bf16_b_cols(bn)
    ok = (p["BK"] == 64 and p["BM"] % 64 == 0 and p["STAGES"] >= 2
          and p.get("OUT_F32", 0) in (0, 1) and _cluster_ok(p)
          and (bn in (32, 160) or (bn % 64 == 0 and bn <= 256))
          and ((bf16_b_span(bn) // cols) % cm == 0
               or (p["BK"] % cm == 0 and (p["BK"] // cm) % 8 == 0))
          and (not p.get("PINGPONG", 0) or p["BM"] * bn <= 128 * 128))
    if bn == 160:
        ok = ok and p.get("EPI_PIECE", 0) in (0, 160)
        return None if ok else "Hopper tiling (BN = 160: EPI_PIECE 0 or 160)"
    return None if ok else "Hopper tiling"


def bf16_b_cols(bn: int) -> int:
    """Columns of a bf16 B chunk (B is K x N, N-major): 64 in the 128-byte swizzle, or one chunk
    of 32 in the 64-byte swizzle for BN = 32 (persistent_bf16.cu's B_COLS)."""
    return 32 if bn == 32 else 64


def bf16_b_span(bn: int) -> int:
    """Columns of B a bf16 stage holds: whole chunks (persistent_bf16.cu's B_SPAN; BN = 160
    takes three 64-column chunks, 192 columns)."""
    cols = bf16_b_cols(bn)
    return -(-bn // cols) * cols


def _check_fp8(p: Mapping[str, int], nt: int) -> str | None:
    """persistent_fp8.cu's static_asserts."""
    cl = p.get("CLUSTER", 1)
    ok = (p["BK"] == 128 and p["BM"] % 64 == 0
          and p["BN"] in (32, 64, 112, 128, 144, 160, 168, 176, 192, 200, 256)
          and p["STAGES"] >= 2 and _cluster_ok(p) and p["BN"] % cl == 0
          and (p["BN"] // cl) % 8 == 0
          and p["BN"] // cl <= 256
          and p.get("EPI_PIECE", 0) in (0, 32, 40, 64, 112, 128, 144, 160, 168, 176, 192,
                                           200, 256)
          and p["BN"] % max(p.get("EPI_PIECE", 0), 1) == 0
          and (not p.get("PINGPONG", 0) or p["BM"] * p["BN"] <= 128 * 176))
    return None if ok else "FP8 Hopper tiling"


# ---- Threads, blocks, tiles and shared memory -----------------------------------------------


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


def _db_smem(p: Mapping[str, int]) -> int:
    """Bytes of dynamic shared memory: STAGES x (A tile + B tile), unpadded (A is swizzled)."""
    return p["STAGES"] * p["BK"] * (p["BM"] + p["BN"]) * 4


def _warps_threads(p: Mapping[str, int]) -> int:
    return (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) * 32


def _tc_ring_smem(p: Mapping[str, int]) -> int:
    """Bytes of dynamic shared memory of a multistage bf16 rung: STAGES x (A tile + B tile)."""
    return p["STAGES"] * (p["BM"] * p["BK"] + p["BK"] * p["BN"]) * 2


def _consumer_wgs(p: Mapping[str, int]) -> int:
    """Consumer warpgroups: one per 64 rows of the block tile (cooperative), or two taking
    alternate tiles (PINGPONG = 1, persistent_fp8)."""
    return 2 if p.get("PINGPONG", 0) else p["BM"] // 64


def _wg_threads(p: Mapping[str, int]) -> int:
    """The consumer warpgroups (128 threads each, ``_consumer_wgs``), plus the producer
    warpgroup of the warp-specialised rungs (PRODUCER = 1)."""
    return (_consumer_wgs(p) + p.get("PRODUCER", 0)) * 128


def _hopper_smem(p: Mapping[str, int]) -> int:
    """STAGES x (A tile + B tile) in bf16, the epilogue's staging buffers (one 64 x EPI_PIECE
    bf16 piece per consumer warpgroup, when C leaves by TMA), the mbarriers (two per stage) and
    1 KB of slack to align the tiles to the 128-byte swizzle's 1024-byte atoms."""
    staging = _consumer_wgs(p) * 64 * p["EPI_PIECE"] * 2 if _tma_epilogue(p) else 0
    span = bf16_b_span(p["BN"]) if p["BK"] == 64 else p["BN"]
    return p["STAGES"] * (p["BM"] + span) * p["BK"] * 2 + staging + 16 * p["STAGES"] + 1024


def _tma_epilogue(p: Mapping[str, int]) -> bool:
    return p.get("EPI_PIECE", 0) > 0 and not p.get("OUT_F32", 0)


def _fp8_smem(p: Mapping[str, int]) -> int:
    """STAGES x (A tile + B tile) in e4m3 (1 byte each), the bf16 epilogue's staging buffers
    (one 64 x EPI_PIECE piece per consumer warpgroup), the mbarriers and 1 KB of alignment slack
    (as ``_hopper_smem``)."""
    staging = _consumer_wgs(p) * 64 * p["EPI_PIECE"] * 2 if p.get("EPI_PIECE", 0) > 0 else 0
    return p["STAGES"] * (p["BM"] + p["BN"]) * p["BK"] + staging + 16 * p["STAGES"] + 1024


# ---- The families ---------------------------------------------------------------------------

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
_FAMILIES["double_buffered"] = _Family(
    "double_buffered.cu", _DB_TEMPLATE, _nt, _flat(_nt), _mn_tile, smem=_db_smem,
    check=_check_warp_tiling)
_FAMILIES["autotuned"] = dataclasses.replace(_FAMILIES["double_buffered"])
# The shape-dispatching rung (issue #12): like autotuned, an abstract rung whose own instantiation
# is double_buffered's; prepare() hands it to gemmlab.runtime.dispatch_gemm, which picks the kernels
# (gemmlab.kernels.paths) per shape.
_FAMILIES["dispatch"] = dataclasses.replace(_FAMILIES["double_buffered"])

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
_FAMILIES["cp_async_bf16"] = _Family(
    "cp_async_bf16.cu",
    "gemmlab::cp_async_bf16<{BM}, {BN}, {BK}, {WM}, {WN}, {STAGES}, {GROUP}, {VEC}, {OUT_F32}>",
    _warps_threads, _flat(_warps_threads), _mn_tile, smem=_tc_ring_smem, dtype="bf16",
    arch="sm_80", check=_check_cp_async)
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
    "{OUT_F32}, {SPLITK}, {CLUSTER_N}, {PINGPONG}>",
    _wg_threads, _flat(_wg_threads), _mn_tile, smem=_hopper_smem, dtype="bf16", arch="sm_90a",
    tma=True, persistent=True, tma_store=True, check=_check_persistent_bf16,
    defaults=types.MappingProxyType({"SPLITK": 0, "CLUSTER_N": 1, "PINGPONG": 0}))

# Their split-K instantiations (the dispatch rungs' path for products whose tiles cannot fill the
# SMs, gemmlab.runtime.dispatch_tc): same kernels with SPLITK = 1; they take `splits` and a float32
# workspace W after K (one slot of 64 x BN floats per slice of each 64-row piece of every tile,
# then one counter per piece); the slice that arrives last adds the slots (tc::streamk_fixup) and C
# leaves through the usual epilogue, TMA stores included.
_FAMILIES["persistent_bf16_splitk"] = dataclasses.replace(
    _FAMILIES["persistent_bf16"], splitk=True,
    defaults=types.MappingProxyType({"SPLITK": 1, "CLUSTER_N": 1, "PINGPONG": 0}))

# Their stream-K instantiations (SPLITK = 2; block_order.cuh's for_each_work): the last `splits`
# tiles of the order are shared out as equal runs of (tile, K-tile) iterations, one per cluster;
# a tile two runs share is added by the one that arrives last (tc::streamk_fixup), through W (two
# slots of BM x BN floats per CTA, then one counter per 64-row piece of each stream-K tile). C
# leaves through the usual epilogue, TMA stores included.
_FAMILIES["persistent_bf16_streamk"] = dataclasses.replace(
    _FAMILIES["persistent_bf16"], splitk=True,
    defaults=types.MappingProxyType({"SPLITK": 2, "CLUSTER_N": 1, "PINGPONG": 0}))

# The FP8 (e4m3) ladder: A (M x K) and B given as N x K ("TN"), both row-major e4m3 (uint8 bits),
# so both operands are K-major as 8-bit wgmma requires; C bf16. See persistent_fp8.cu.
_FAMILIES["persistent_fp8"] = _Family(
    "persistent_fp8.cu",
    "gemmlab::persistent_fp8<{BM}, {BN}, {BK}, {STAGES}, {CLUSTER}, {GROUP}, {EPI_PIECE}, "
    "{SPLITK}, {CLUSTER_N}, {PINGPONG}>",
    _wg_threads, _flat(_wg_threads), _mn_tile, smem=_fp8_smem, dtype="fp8", arch="sm_90a",
    tma=True, persistent=True, tma_store=True, check=_check_fp8,
    defaults=types.MappingProxyType({"SPLITK": 0, "CLUSTER_N": 1, "PINGPONG": 0}))
_FAMILIES["persistent_fp8_splitk"] = dataclasses.replace(
    _FAMILIES["persistent_fp8"], splitk=True,
    defaults=types.MappingProxyType({"SPLITK": 1, "CLUSTER_N": 1, "PINGPONG": 0}))
_FAMILIES["persistent_fp8_streamk"] = dataclasses.replace(
    _FAMILIES["persistent_fp8"], splitk=True,
    defaults=types.MappingProxyType({"SPLITK": 2, "CLUSTER_N": 1, "PINGPONG": 0}))

# ---- Dtypes and architectures ---------------------------------------------------------------

DTYPES = ("fp32", "bf16", "fp8")
ITEMSIZE = {"fp32": 4, "bf16": 2, "fp8": 1}  # bytes per element of A and B
# How B is given per dtype: "kn" = K x N row-major; "nk" = N x K row-major ("TN", B transposed:
# the only layout 8-bit wgmma and cuBLASLt's FP8 kernels read).
B_LAYOUTS = {"fp32": "kn", "bf16": "kn", "fp8": "nk", "fp16": "kn"}


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


# The abstract rungs, resolved per GPU and shape (gemmlab.runtime.autotune). Named here because
# ``Rung.refusal`` lets them through: autotuned_bf16 sends shapes TMA cannot take to wgmma_bf16.
AUTOTUNED = ("autotuned", "autotuned_bf16")
# The tensor-core dispatch rungs: abstract too, they copy odd-pitch operands instead of refusing
DISPATCH_TC = ("dispatch_bf16", "dispatch_fp8")


# ---- Rungs ----------------------------------------------------------------------------------


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
        self._check_params()

    def _check_params(self) -> None:
        """Python-side mirror of the kernels' static_asserts, so a bad rung fails at import."""
        nt = self.threads
        if nt < 32 or nt > 1024 or nt % 32:
            raise ValueError(f"rung {self.name}: {nt} threads per block (need 32..1024, x32)")
        what = _FAMILIES[self.family].check(self.params, nt)
        if what:
            raise ValueError(f"rung {self.name}: inconsistent {what} {dict(self.params)}")

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
    def splitk(self) -> bool:
        """True for a split-K or stream-K instantiation: it takes ``splits`` and a float32
        workspace ``W`` after K (split-K: splits x M x N partial sums, then one zeroed counter
        per tile piece; stream-K: ``splits`` is the number of stream-K tiles, W two slots of
        BM x BN floats per CTA, then one zeroed counter per 64-row piece of those tiles)."""
        return _FAMILIES[self.family].splitk

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
        # one dimension: a persistent kernel numbers a CLUSTER x CLUSTER_N cluster's CTAs itself
        cluster = (self.cluster_ctas, 1, 1)
        return LaunchNeeds(arch=self.arch, dynamic_smem=self.dynamic_smem, cluster=cluster,
                           tensor_maps=(3 if self.tma_store else 2) if fam.tma else 0)

    @property
    def cluster_ctas(self) -> int:
        """CTAs per thread-block cluster: CLUSTER along M times CLUSTER_N along N."""
        return self.params.get("CLUSTER", 1) * self.params.get("CLUSTER_N", 1)

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
    def c_box_cols(self) -> int:
        """Columns of the C map's boxes for the TMA-store epilogue: 64 (the 128-byte swizzle), 32
        (the 64-byte swizzle) when the tile is not whole 64-column boxes (BN = 160), or the tile's
        width, unswizzled, when it is not whole 32-column boxes either (BN = 200): tc_common.cuh's
        C_BOX."""
        bn = self.params.get("BN", 64)
        return 64 if bn % 64 == 0 else 32 if bn % 32 == 0 else bn

    @property
    def b_box_cols(self) -> int:
        """Columns of a bf16 B map's boxes (B is K x N, N-major): ``bf16_b_cols``."""
        return bf16_b_cols(self.params.get("BN", 64))

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
        return 16 // ITEMSIZE[self.dtype]

    @property
    def template_call(self) -> str:
        """The C++ template-id this rung instantiates."""
        fam = _FAMILIES[self.family]
        return fam.template.format(**{**fam.defaults, **self.params})

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
        if (self.accepts(M, N, K) or not self.tma or self.name in AUTOTUNED
                or self.name in DISPATCH_TC):
            return None  # autotuned_bf16 sends such shapes to wgmma_bf16 (runtime.autotune),
            # the dispatchers copy the operands to 16-byte pitches (runtime.dispatch_tc)
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
        launch one CTA per SM of the device (``sms``; whole clusters, as many as fit at once:
        ``clusters.persistent_clusters``) or fewer when there are fewer tiles, so they need
        ``sms``: no GPU's count is assumed. Other rungs ignore it."""
        check_shape(M, N, K)
        fam = _FAMILIES[self.family]
        rows, cols = fam.tile(self.params)
        if fam.persistent:
            if sms is None or sms < 1:
                raise ValueError(
                    f"rung {self.name} is persistent (one CTA per SM): launch_config needs the "
                    f"device's SM count (sms=gemmlab.runtime.device.info().sm_count), got "
                    f"sms={sms!r}")
            cm, cn = self.params.get("CLUSTER", 1), self.params.get("CLUSTER_N", 1)
            cluster = cm * cn
            units = _cdiv(_cdiv(M, rows), cm) * _cdiv(_cdiv(N, cols), cn)
            slots = persistent_clusters(cluster, sms)  # every cluster resident at once
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


def make_rung(name: str, order: int, family: str, summary: str, **params: int) -> Rung:
    """A rung of ``family`` at ``params``: its source is the family's, its kernel symbol
    ``gemmlab_<name>``. Raises ValueError when the parameters break the family's checks."""
    fam = _FAMILIES[family]
    return Rung(name=name, order=order, family=family, summary=summary, source=fam.source,
                kernel=f"gemmlab_{name}", params=params)
