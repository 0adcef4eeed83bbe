"""The shape-dispatching rung's decisions (issue #12), pure: which kernels run, with what geometry,
workspace and arguments, for one (M, N, K), operand alignment and GPU. No CuPy here: the CPU tests
check every rule, and ``gemmlab.runtime.dispatch_gemm`` only executes the plan.

FP32, row-major: A is M x K, B is K x N, C is M x N; C = alpha * A @ B + beta * C, C not read when
beta == 0. The rules, first match wins:

1. **Skinny** (``N <= 16``, else ``M <= 16``): a GEMV-like product, memory-bound (about min(M, N) / 2
   flop per byte moved, under the FP32 ridge point of 22 flop/B on an H100), so the 128-row tile
   kernels waste >= 87% of their tile. ``skinny_n`` streams A (warps own rows, lanes walk K; B staged
   in shared memory), ``skinny_m`` streams B (lanes own columns, warps walk K; A broadcast). 16-byte
   loads when the shape and pointers allow (``skinny_vec``), 4-byte otherwise. Split across blocks
   along K (``skinny_split``) until one wave of resident blocks covers the GPU (a streaming kernel
   needs every SM's load units busy), while the workspace traffic stays within 10% of the
   operands'.
2. **Tiny** (``tiny_fits``): when the whole product is a single wave of 32 x 8 blocks, one element
   of C per thread, and K is short, the time is launch and memory latency, not FMAs: the first
   seed article's shared-memory tiling (one launch, no copies, 4-byte loads of any shape) beats the
   pipelined tiles, whose lanes each compute 32 elements one after another.
3. **Tile** (everything else): ``tile_ld`` (double_buffered's pipelined warp tiles).
   * Tile shape (``choose_tile``): the big tile (64 x 128 x 32, the fastest per FMA) unless 64 x 64
     x 16 avoids a split-K the big tile needs, or spreads its blocks over the SMs (after any split)
     and wastes fewer K-steps by more than the big tile's per-FMA advantage: the busiest SM sets
     the kernel's time, and a K-step of 32 at K = 16 is half zeros.
   * Split-K (``tile_split``): with fewer blocks than one wave of resident blocks (SMs x blocks per
     SM from the compiled kernel's occupancy), K is cut into S slices so the grid fills that wave and
     no more (a second, partial wave would cost more than it fills); each slice at least
     ``MIN_SLICE_K`` deep, so the 3-stage pipeline runs at steady state and the partial tile
     written per block (BM·BN floats) is small against its BM·BN·kc FMAs. Slices go to an FP32
     workspace; ``splitk_reduce`` adds them in a fixed order (deterministic) and applies alpha, beta.
   * Unaligned N or K, or a pointer off a 16-byte boundary (``policy.odd``): ``"pad"`` copies A
     and/or B into zero-padded aligned buffers inside the call and runs the 16-byte kernel (C is
     written in place: 4-byte stores where its row pitch is not a multiple of 4), when the copies
     are cheap against the product (``pad_pays``); ``"scalar"`` runs the 4-byte instantiation on the
     operands as they are. Which wins is measured on the device (benchmarks/dispatch_compare.py).

Geometry limits that make a plan impossible are one-line ``InputError``s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Optional, Union

from gemmlab.errors import InputError
from gemmlab.kernels import paths
from gemmlab.kernels.paths import PathKernel
from gemmlab.problem import check_shape

SKINNY = 16  # N at most this: skinny_n (the shape map's skinny classes)
# M at most this: skinny_m. Measured on the H100 (docs/results/shapes-dispatch-h100-2026-11-23,
# dispatch_compare.json, % of cuBLAS): M = 1 skinny_m 89 vs tiles 40; M = 8 65 vs 67; M = 16 57 vs
# 111 - a 64-row tile wastes rows but reuses each B value M times from shared memory, which
# overtakes streaming B per row somewhere below 8. (N side: N = 16 skinny_n 83 vs tiles 65.)
SKINNY_M = 4
# The big tile (64 x 128 x 32, 3 blocks of 4 warps per SM, 8 x 8 per lane) does more FMAs per
# shared-memory load than 64 x 64 x 16 (8 x 4 per lane): at equal SM balance it measured 8-15%
# faster on the H100, nvcc 13.0 (4096^3: 88.2 vs 80.0% of cuBLAS; 2048^3: 89.0 vs 82.2; 4095^3:
# 91.8 vs 79.7; 1024x50257x768: 87.3 vs 77.5). The small tile wins where it balances the SMs, or
# wastes fewer K-steps, by more than that (1025^3: 171.6 vs 139.9% - 153 big tiles for 132 SMs;
# 1000x3000x77: 87.5 vs 84.4 - K = 77 runs 96 deep in steps of 32, 80 in steps of 16; 300x520x136:
# 105.8 vs 73.4). docs/results/shapes-dispatch-h100-2026-11-23/v3/dispatch_compare.json.
BIG_TILE_ADVANTAGE = 0.08
# Split K only when the tiles leave more than half the SMs without a block: with at least half busy,
# the extra launch and the workspace round trip (2 * S * M * N floats) measured slower than the idle
# SMs (H100: 1024^3 split 2 84 vs 91% unsplit; 4097x127x1000 split 4 77 vs 81%).
SPLIT_MAX_BUSY_FRACTION = 0.5
# FP32 FFMA peak over DRAM copy bandwidth on an H100 SXM: 67 TFLOP/s / ~3 TB/s. A copy of b bytes
# costs about as long as b * FLOP_PER_BYTE flops of GEMM at peak (A100: 19.5 / 1.6 = 12; using the
# H100's makes padding look dearer there, never cheaper).
FLOP_PER_BYTE = 22.0
# Pad only when the copies cost at most this fraction of the product's time at peak: the 4-byte path
# they replace ran at about half the 16-byte path's speed (H100, 2026-11-23: 24-45% vs 49-78% of
# cuBLAS), so a copy worth up to half the product still wins.
PAD_MAX_FRACTION = 0.5
# The tiny kernel's limits. One wave: its blocks (32 x 8 threads, one element of C each) all
# resident at once, so the time is one block's. K: each 32-deep step is a dependent global load
# (~1 us of DRAM latency with a cold L2) plus 32 FMAs with nothing to overlap it; at 127^3 (4 steps)
# it took 7.2 us against 10.3 us for the best tile plan on the H100 (the tile plans pay a second
# launch for split-K, or 32 elements x K per lane without it). At 96x96x1024 (32 steps) it took
# 43 us against 12.4 for 64 x 64 tiles with 8 K-slices; 256 (8 steps) stays on the measured side.
TINY_MAX_K = 256
# Work: the tiny kernel reads two shared-memory words per FMA, and an SM serves one warp-wide 4-byte
# shared load per clock, so M*N*K FMAs cost 2 * M*N*K / 32 / SMs clocks: 2^24 is ~8,000 clocks,
# ~4.5 us on an H100, about what the tile plans lose to their extra launch or serial lane work at
# these sizes. Measured on the H100: tiny won at 127^3 (9.2 vs 18.2 us), 160^3 (10.3 vs 10.4) and
# 255^3 (16.6M FMAs: 14.8 vs 31.0 us, the tiles unsplit on 4-byte loads) and lost at 300x520x136
# (21.2M: 12.7 vs 10.0 us) - benchmarks/dispatch_compare.py, shapes-dispatch-h100-2026-11-23/v3.
TINY_MAX_MNK = 2**24
# Rows of K per split-K slice, at least: 8 pipeline steps of the small tile's BK = 16, 4 of the big
# tile's 32 (its 2-stage ring is full after one).
MIN_SLICE_K = 128
SKINNY_MIN_SLICE_K = 256  # skinny kernels: one staged chunk (skinny_n), 8 steps per warp (skinny_m)
# Skinny split-K: the workspace is written and read once more (2 * S * M * N floats); keep that
# within this fraction of the operands' bytes, the time the kernel is there to spend.
SKINNY_WS_MAX_FRACTION = 0.1
_INT32_MAX = 2**31 - 1
_GRID_YZ_MAX = 65535
REDUCE_UNITS_PER_BLOCK = 32  # splitk_reduce: 32 lanes, each a unit of 4 (VEC) or 1 element
PAD_CHUNKS_PER_BLOCK = 256  # pad2: 256 threads, one 16-byte chunk each per pass
PAD_MAX_BLOCKS = 4096  # pad2's grid-stride loop: enough blocks to fill any GPU several times


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _cdiv(a, b) * b


@dataclass(frozen=True)
class Operands:
    """Whether A, B, C start on 16-byte boundaries (CuPy allocations always do)."""

    a16: bool = True
    b16: bool = True
    c16: bool = True


@dataclass(frozen=True)
class Policy:
    """Choices the rules make, for comparing alternatives on the device.

    ``odd``: "pad" or "scalar" (see the module docstring); ``skinny``: False sends skinny shapes to
    the tile path; ``tiny``: True / False forces the tiny kernel on / off (None: ``tiny_fits``);
    ``tile``: "big" / "small" forces the tile shape; ``split``: forces S (1: never split; applies
    to the tile and skinny paths)."""

    odd: str = "pad"
    skinny: bool = True
    tile: Optional[str] = None
    split: Optional[int] = None
    tiny: Optional[bool] = None

    def __post_init__(self) -> None:
        if self.odd not in ("pad", "scalar"):
            raise InputError(f"dispatch policy odd={self.odd!r}: expected 'pad' or 'scalar'")
        if self.tile is not None and self.tile not in paths.TILES:
            raise InputError(f"dispatch policy tile={self.tile!r}: expected one of "
                             f"{', '.join(paths.TILES)}")
        if self.split is not None and (isinstance(self.split, bool) or not isinstance(self.split, int)
                                       or not 1 <= self.split <= _GRID_YZ_MAX):
            raise InputError(f"dispatch policy split={self.split!r}: expected an integer in 1.."
                             f"{_GRID_YZ_MAX}")
        if self.tiny is not None and not isinstance(self.tiny, bool):
            raise InputError(f"dispatch policy tiny={self.tiny!r}: expected True, False or None")


@dataclass(frozen=True)
class Machine:
    """The GPU as the rules see it: SM count and, per kernel, resident blocks per SM (the compiled
    kernel's occupancy; a callable so only the kernels considered need compiling)."""

    sm_count: int
    blocks_per_sm: Callable[[PathKernel], int]

    def slots(self, k: PathKernel) -> int:
        """Blocks of ``k`` resident at once on the whole GPU: one full wave."""
        return self.sm_count * max(1, int(self.blocks_per_sm(k)))


Arg = Union[int, float, str]  # pointer parameters name a buffer: A, B, C, Ap, Bp, W


@dataclass(frozen=True)
class Launch:
    """One kernel launch of a plan. ``args`` follow the kernel's signature; a pointer argument is a
    buffer name, a float argument a number or "alpha" / "beta" (the call's)."""

    kernel: PathKernel
    grid: tuple[int, int, int]
    args: tuple[Arg, ...]

    @property
    def block(self) -> tuple[int, int, int]:
        return self.kernel.block

    @property
    def smem(self) -> int:
        return self.kernel.dynamic_smem


@dataclass(frozen=True)
class Plan:
    """Everything one call launches, in order, and the workspace it needs (floats per buffer)."""

    path: str  # "skinny-M", "skinny-N", "tiny", "vector", "padded", "scalar"
    M: int
    N: int
    K: int
    launches: tuple[Launch, ...]
    main: int  # index of the main kernel in launches
    split: int = 1
    buffers: Mapping[str, int] = field(default_factory=dict)
    reason: str = ""

    @property
    def main_launch(self) -> Launch:
        return self.launches[self.main]

    @property
    def name(self) -> str:
        """What ran, e.g. ``split-K 128: tile_ld_64x64_v1c1 + splitk_reduce_v1``."""
        path = f"{self.path} split-K {self.split}" if self.split > 1 else self.path
        return f"{path}: " + " + ".join(x.kernel.name for x in self.launches)

    @property
    def params(self) -> dict[str, int]:
        """The main kernel's parameters, the split and the copies (integers, for result rows)."""
        out = dict(self.main_launch.kernel.params)
        out["SPLIT"] = self.split
        out["PAD_A"] = int("Ap" in self.buffers)
        out["PAD_B"] = int("Bp" in self.buffers)
        return out

    @property
    def workspace_bytes(self) -> int:
        return 4 * sum(self.buffers.values())


def skinny_vec(M: int, N: int, K: int, ops: Operands, side: str) -> bool:
    """16-byte loads in the skinny kernels: skinny_m loads B rows and A quads (N, K multiples of 4,
    A and B aligned); skinny_n loads A quads (K a multiple of 4, A aligned; B is staged 4 bytes at a
    time)."""
    if side == "m":
        return N % 4 == 0 and K % 4 == 0 and ops.a16 and ops.b16
    return K % 4 == 0 and ops.a16


def skinny_split(M: int, N: int, K: int, base_blocks: int, slots: int,
                 forced: Optional[int] = None, unit: int = 32) -> tuple[int, int]:
    """(S, kc) for a skinny kernel with ``base_blocks`` blocks per K-slice: enough slices for one
    wave (``slots`` resident blocks), each at least SKINNY_MIN_SLICE_K deep, and the workspace's
    extra traffic (2·S·M·N floats) within SKINNY_WS_MAX_FRACTION of the operands (M·K + K·N).
    kc is a multiple of ``unit``: 32 for skinny_m (its 8 warps' 4-row steps), 256 for skinny_n
    (whole staged chunks); 4 divides both, as the 16-byte paths need."""
    if forced is not None:
        s = forced
    else:
        fill = _cdiv(slots, base_blocks)
        deep = K // SKINNY_MIN_SLICE_K
        ws_cap = int(SKINNY_WS_MAX_FRACTION * (M * K + K * N) / (2 * M * N))
        s = max(1, min(fill, deep, ws_cap))
    return _slices(K, s, unit)


def _slices(K: int, s: int, unit: int) -> tuple[int, int]:
    """(S, kc): kc = ceil(K / s) rounded up to ``unit``, S = ceil(K / kc) (every slice non-empty)."""
    if s <= 1:
        return 1, K
    kc = _round_up(_cdiv(K, s), unit)
    return _cdiv(K, kc), kc


def sm_balance(tiles: int, sm_count: int) -> float:
    """Average blocks per SM over the most any SM gets (1.0: every SM gets the same number; the
    busiest SM sets the kernel's time)."""
    return (tiles / sm_count) / _cdiv(tiles, sm_count)


def k_efficiency(K: int, bk: int) -> float:
    """Useful share of the K-steps a tile kernel runs: it steps BK at a time, zero-filling past K
    (K = 16 with BK = 32 does twice the FMAs it needs)."""
    return K / (_cdiv(K, bk) * bk)


def tile_option(M: int, N: int, K: int, tile: str, machine: Machine, vec: int = 1
                ) -> tuple[int, float]:
    """(S, score) of running this shape on ``tile``: the K-slices the split rule gives it and
    sm_balance of the resulting blocks (tiles x S) times k_efficiency. Slots (a compiled kernel's
    occupancy) are asked for only when the tiles are few enough to split."""
    p = paths.TILES[tile]
    tiles = _cdiv(M, p["BM"]) * _cdiv(N, p["BN"])
    if tiles >= SPLIT_MAX_BUSY_FRACTION * machine.sm_count:
        S = 1
    else:
        probe = paths.tile_kernel(tile, vec, vec)
        S, _ = tile_split(tiles, K, machine.slots(probe), p["BK"], None, machine.sm_count)
    return S, sm_balance(tiles * S, machine.sm_count) * k_efficiency(K, p["BK"])


def choose_tile(M: int, N: int, K: int, machine: Machine, vec: int = 1) -> str:
    """"big" or "small" (64 x 64). When exactly one of them needs split-K to give half the SMs a
    block, the other (a split costs a reduction pass and a workspace round trip: measured slower
    than up to half the SMs idle, SPLIT_MAX_BUSY_FRACTION). Otherwise the small tile only when its
    score (SM balance x useful K-steps, ``tile_option``) beats the big tile's by more than the big
    tile's per-FMA advantage (BIG_TILE_ADVANTAGE)."""
    s_big, big = tile_option(M, N, K, "big", machine, vec)
    s_small, small = tile_option(M, N, K, "small", machine, vec)
    if (s_big > 1) != (s_small > 1):
        return "small" if s_big > 1 else "big"
    return "small" if small > (1 + BIG_TILE_ADVANTAGE) * big else "big"


def tile_split(tiles: int, K: int, slots: int, bk: int, forced: Optional[int] = None,
               sm_count: Optional[int] = None) -> tuple[int, int]:
    """(S, kc) for the tile kernel: no split when the tiles already give at least
    SPLIT_MAX_BUSY_FRACTION of the SMs a block; otherwise the most slices that keep tiles·S within
    one wave of resident blocks (``slots``), each slice at least MIN_SLICE_K deep; kc a multiple of
    BK (so a 16-byte chunk of A never straddles two slices)."""
    if forced is not None:
        s = forced
    elif sm_count is not None and tiles >= SPLIT_MAX_BUSY_FRACTION * sm_count:
        s = 1
    else:
        s = max(1, min(slots // tiles, K // MIN_SLICE_K))
    return _slices(K, s, bk)


def pad_pays(M: int, N: int, K: int, pad_a: bool, pad_b: bool) -> bool:
    """Whether zero-padded copies of A (pad_a) and B (pad_b) cost at most PAD_MAX_FRACTION of the
    product at peak: each copied element is read and written (8 bytes), worth FLOP_PER_BYTE flops
    per byte against the product's 2·M·N·K."""
    copied = (M * K if pad_a else 0) + (K * N if pad_b else 0)
    return 8 * copied * FLOP_PER_BYTE <= PAD_MAX_FRACTION * 2 * M * N * K


def _check_grid(what: str, grid: tuple[int, int, int], M: int, N: int, K: int) -> None:
    if grid[0] > _INT32_MAX or grid[1] > _GRID_YZ_MAX or grid[2] > _GRID_YZ_MAX:
        raise InputError(f"shape M={M}, N={N}, K={K}: the dispatch rung's {what} would need grid "
                         f"{grid}, over the CUDA limits ({_INT32_MAX}, {_GRID_YZ_MAX}, "
                         f"{_GRID_YZ_MAX})")


def _reduce_launch(M: int, N: int, S: int, ws: int, c16: bool) -> Launch:
    count = M * N
    vec = 1 if c16 else 0
    units = count // 4 if vec else count
    k = paths.reduce_kernel(vec)
    grid = (max(1, _cdiv(units, REDUCE_UNITS_PER_BLOCK)), 1, 1)
    return Launch(k, grid, (count, S, ws, "alpha", "W", "beta", "C"))


def plan(M: int, N: int, K: int, machine: Machine, ops: Operands = Operands(),
         policy: Policy = Policy()) -> Plan:
    """The launches for C = alpha * A @ B + beta * C at this shape (see the module docstring)."""
    check_shape(M, N, K)
    if policy.skinny and (N <= SKINNY or M <= SKINNY_M):
        return _skinny_plan(M, N, K, machine, ops, policy, "n" if N <= SKINNY else "m")
    if policy.tiny or (policy.tiny is None and policy.tile is None and policy.split is None
                       and tiny_fits(M, N, K, machine)):
        return _tiny_plan(M, N, K)
    return _tile_plan(M, N, K, machine, ops, policy)


def tiny_blocks(M: int, N: int) -> int:
    by, bx = paths.TINY.tile
    return _cdiv(M, by) * _cdiv(N, bx)


def tiny_fits(M: int, N: int, K: int, machine: Machine) -> bool:
    """K at most TINY_MAX_K, M*N*K at most TINY_MAX_MNK, and the tiny kernel's blocks within one
    wave of resident blocks. The wave is checked last: it compiles the kernel for its occupancy,
    and most shapes fail before it (or on an upper bound of the wave: 2048 threads per SM,
    NVIDIA's limit since Volta)."""
    if K > TINY_MAX_K or M * N * K > TINY_MAX_MNK:
        return False
    blocks = tiny_blocks(M, N)
    if blocks > machine.sm_count * (2048 // paths.TINY.threads):
        return False
    return blocks <= machine.slots(paths.TINY)


def _tiny_plan(M: int, N: int, K: int) -> Plan:
    by, bx = paths.TINY.tile
    grid = (_cdiv(N, bx), _cdiv(M, by), 1)
    _check_grid(paths.TINY.name, grid, M, N, K)
    main = Launch(paths.TINY, grid, (M, N, K, "alpha", "A", "B", "beta", "C"))
    why = (f"{grid[0] * grid[1]} blocks of {by}x{bx}, one wave, K = {K} <= {TINY_MAX_K}: one "
           f"launch, 4-byte loads, no copies")
    return Plan("tiny", M, N, K, (main,), 0, 1, {}, why)


def _pow2_at_least(x: int) -> int:
    return next(r for r in paths.SKINNY_ROWS if r >= x)


def _skinny_plan(M: int, N: int, K: int, machine: Machine, ops: Operands, policy: Policy,
                 side: str) -> Plan:
    vec = 1 if skinny_vec(M, N, K, ops, side) else 0
    if side == "m":
        rows = _pow2_at_least(M)
        kernel = paths.skinny_kernel("m", rows, vec)
        base = (_cdiv(N, 128), 1, _cdiv(M, rows))
        why = (f"M = {M} <= {SKINNY_M}: skinny_m streams B ({K}x{N}) once with "
               f"{'16' if vec else '4'}-byte loads")
    else:
        rows = _pow2_at_least(N)
        kernel = paths.skinny_kernel("n", rows, vec)
        base = (_cdiv(M, 32), 1, 1)
        why = (f"N = {N} <= {SKINNY}: skinny_n streams A ({M}x{K}) once with "
               f"{'16' if vec else '4'}-byte loads")
    S, kc = skinny_split(M, N, K, base[0] * base[2], machine.slots(kernel), policy.split,
                         32 if side == "m" else 256)
    grid = (base[0], S, base[2])
    _check_grid(kernel.name, grid, M, N, K)
    path = "skinny-M" if side == "m" else "skinny-N"
    if S == 1:
        main = Launch(kernel, grid, (M, N, K, K, 0, "alpha", "A", "B", "beta", "C", "C"))
        return Plan(path, M, N, K, (main,), 0, 1, {}, why)
    ws = _round_up(M * N, 4)
    main = Launch(kernel, grid, (M, N, K, kc, ws, 1.0, "A", "B", 0.0, "C", "W"))
    reduce = _reduce_launch(M, N, S, ws, ops.c16)
    why += f"; {S} K-slices of {kc} fill {grid[0] * grid[1] * grid[2]} blocks"
    return Plan(path, M, N, K, (main, reduce), 0, S, {"W": S * ws}, why)


def _tile_plan(M: int, N: int, K: int, machine: Machine, ops: Operands, policy: Policy) -> Plan:
    vec_a = K % 4 == 0 and ops.a16
    vec_b = N % 4 == 0 and ops.b16
    Kp, Np = _round_up(K, 4), _round_up(N, 4)
    pad_a = pad_b = False
    notes = []
    if vec_a and vec_b:
        vec, path = 1, "vector"
    else:
        pad_a, pad_b = not vec_a, not vec_b
        fits = M * Kp <= _INT32_MAX and K * Np <= _INT32_MAX
        if policy.odd == "pad" and fits and pad_pays(M, N, K, pad_a, pad_b):
            vec, path = 1, "padded"
            notes.append("padded copies of " + " and ".join(
                x for x, p in (("A", pad_a), ("B", pad_b)) if p))
        else:
            vec, path = 0, "scalar"
            notes.append("4-byte loads" + ("" if policy.odd == "scalar" else
                                           " (the copies would cost more than they save)"))
            pad_a = pad_b = False
    tile = policy.tile or choose_tile(M, N, K, machine, vec)
    p = paths.TILES[tile]
    tiles = _cdiv(M, p["BM"]) * _cdiv(N, p["BN"])
    # The epilogue's 16-byte stores need C's row pitch (N; or the workspace's, also N) a multiple
    # of 4 and an aligned base (the workspace always is).
    probe = paths.tile_kernel(tile, vec, 0 if not vec else 1)
    S, kc = tile_split(tiles, K, machine.slots(probe), p["BK"], policy.split, machine.sm_count)
    vec_c = 1 if vec and N % 4 == 0 and (ops.c16 or S > 1) else 0
    kernel = paths.tile_kernel(tile, vec, vec_c)
    grid = (_cdiv(N, p["BN"]), _cdiv(M, p["BM"]), S)
    _check_grid(kernel.name, grid, M, N, K)
    notes.insert(0, f"{tiles} tiles of {p['BM']}x{p['BN']} for {machine.sm_count} SMs")

    launches: list[Launch] = []
    buffers: dict[str, int] = {}
    lda, ldb = (Kp if pad_a else K), (Np if pad_b else N)
    if pad_a or pad_b:
        buffers.update({"Ap": M * Kp} if pad_a else {})
        buffers.update({"Bp": K * Np} if pad_b else {})
        launches.append(_pad_launch(M, K, Kp, N, Np, pad_a, pad_b))
    a_name, b_name = ("Ap" if pad_a else "A"), ("Bp" if pad_b else "B")
    if S == 1:
        args = (M, N, K, lda, ldb, N, K, 0, "alpha", a_name, b_name, "beta", "C")
    else:
        ws = _round_up(M * N, 4)
        buffers["W"] = S * ws
        args = (M, N, K, lda, ldb, N, kc, ws, 1.0, a_name, b_name, 0.0, "W")
        notes.append(f"{S} K-slices of {kc}")
    main = len(launches)
    launches.append(Launch(kernel, grid, args))
    if S > 1:
        launches.append(_reduce_launch(M, N, S, buffers["W"] // S, ops.c16))
    return Plan(path, M, N, K, tuple(launches), main, S, buffers, "; ".join(notes))


def _pad_launch(M: int, K: int, Kp: int, N: int, Np: int, pad_a: bool, pad_b: bool) -> Launch:
    """pad2 over A (M x K -> M x Kp) and/or B (K x N -> K x Np); blocks split by chunk count."""
    chunks_a = M * Kp // 4 if pad_a else 0
    chunks_b = K * Np // 4 if pad_b else 0
    blocks_a = min(PAD_MAX_BLOCKS, _cdiv(chunks_a, PAD_CHUNKS_PER_BLOCK)) if pad_a else 0
    blocks_b = min(PAD_MAX_BLOCKS, _cdiv(chunks_b, PAD_CHUNKS_PER_BLOCK)) if pad_b else 0
    args = (M if pad_a else 0, K, Kp, "A", "Ap" if pad_a else "A", blocks_a,
            K if pad_b else 0, N, Np, "B", "Bp" if pad_b else "B")
    return Launch(paths.PAD, (blocks_a + blocks_b, 1, 1), args)


def describe(p: Plan) -> str:
    """One line: what runs and why."""
    ws = f", workspace {p.workspace_bytes / 2**20:.1f} MiB" if p.buffers else ""
    return f"{p.name} ({p.reason}{ws})"
