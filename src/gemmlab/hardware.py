"""GPU facts: per-architecture occupancy limits and per-product spec numbers. Data only.

Sources (cited per field below):

[OCC]  ``cuda_occupancy.h`` from the CUDA 13.0 toolkit (``/usr/local/cuda/include``): NVIDIA's own
       header implementation of the occupancy calculator that the runtime API mirrors. It gives the
       register and shared-memory allocation units, the blocks-per-SM limit, the shared-memory
       carve-out steps, the sub-partition count and the block-barrier rule per compute capability.
[GUIDE] CUDA C++ Programming Guide, "Compute Capabilities" → "Technical Specifications per Compute
       Capability" (threads/warps/blocks per SM, shared memory per SM and per block, 64K registers).
[TUNE] NVIDIA tuning guides (Volta, Turing, Ampere, Ada, Hopper, Blackwell): the carve-out lists,
       e.g. "A100 supports shared memory capacity of 0, 8, 16, 32, 64, 100, 132 or 164 KB per SM".
[H100] ``device__attribute_*`` in the real H100 capture in tests/fixtures/ncu/h100 (ncu 2025.3.1):
       2048 threads/SM, 64 warps/SM, 32 blocks/SM, 65536 registers/SM and per block, 255 registers
       per thread, 233472 B shared memory/SM, 232448 B opt-in per block, 1024 B reserved per block.
[DS]   Vendor datasheets / whitepapers for the product table (SM count, boost clock, memory bandwidth,
       L2 size); FP32 lanes per SM from the architecture whitepapers.

Nothing here is measured; measured ceilings live in ``gemmlab.bench.ceilings``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KiB = 1024

# Launch-geometry limits of every compute capability from 2.0 on [GUIDE]: a block's x and y
# dimensions at most 1024 and z at most 64 (and 1024 threads in all, ArchSpec.max_threads_per_block);
# a grid's x at most 2^31 - 1 blocks, y and z at most 65535.
MAX_BLOCK_DIMS = (1024, 1024, 64)
MAX_GRID_DIMS = (2**31 - 1, 65535, 65535)


@dataclass(frozen=True)
class ArchSpec:
    """Per-SM limits of one compute capability, as the occupancy calculator uses them."""

    name: str  # "sm_90"
    cc: tuple[int, int]  # (9, 0)
    family: str
    max_threads_per_sm: int  # [GUIDE]
    max_blocks_per_sm: int  # [OCC] cudaOccMaxBlocksPerMultiprocessor
    smem_per_sm: int  # bytes, the largest carve-out [GUIDE]
    smem_per_block_optin: int  # bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin [GUIDE]
    smem_carveouts: tuple[int, ...]  # bytes, configurable shared-memory sizes per SM [OCC][TUNE]
    # Block barriers available per SM = factor × max_blocks_per_sm [OCC]
    # cudaOccMaxBlocksPerSMBlockBarrierLimit; the header applies this limit from sm_90 on.
    barrier_factor: int = 2
    sub_partitions: int = 4  # SM sub-partitions (schedulers); registers are split among them [OCC]
    smem_reserved_per_block: int = 0  # bytes the driver reserves per block: 1 KiB from sm_80 [OCC][H100]
    smem_alloc_unit: int = 256  # bytes; 128 from sm_80 [OCC] cudaOccSMemAllocationGranularity
    smem_per_block_default: int = 48 * KiB  # without cudaFuncSetAttribute opt-in [GUIDE]
    warp_size: int = 32
    max_threads_per_block: int = 1024  # [GUIDE]
    regs_per_sm: int = 65536  # 64K 32-bit registers [GUIDE][H100]
    regs_per_block: int = 65536  # [GUIDE][H100]
    max_regs_per_thread: int = 255  # [GUIDE][H100]
    reg_alloc_unit: int = 256  # registers, allocated per warp [OCC] cudaOccRegAllocationGranularity
    # FP32 FMA lanes (CUDA cores) per SM [DS]: GP100, GV100, TU10x and GA100 have 64; GP10x, GA10x,
    # AD10x, GH100 and Blackwell have 128. Gives any GPU a clock-derived FP32 peak.
    fp32_lanes_per_sm: int = 128
    notes: str = ""

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    @property
    def cc_string(self) -> str:
        return f"{self.cc[0]}.{self.cc[1]}"

    @property
    def has_carveout(self) -> bool:
        """Volta and later share L1 and shared memory; the driver picks one of several sizes."""
        return len(self.smem_carveouts) > 1

    @property
    def barrier_limit_applies(self) -> bool:
        # [OCC]: "For Hopper onwards compute the limits to occupancy based on block barrier count"
        return self.cc[0] >= 9


def _kib(*sizes: int) -> tuple[int, ...]:
    return tuple(s * KiB for s in sizes)


# Carve-out steps per family [OCC] cudaOccAlignUpShmemSizeVoltaPlus, [TUNE].
_VOLTA_STEPS = _kib(0, 8, 16, 32, 64, 96)
_TURING_STEPS = _kib(32, 64)
_GA100_STEPS = _kib(0, 8, 16, 32, 64, 100, 132, 164)  # sm_80, sm_87
_GA10X_STEPS = _kib(0, 8, 16, 32, 64, 100)  # sm_86, sm_89, sm_12x
_HOPPER_STEPS = _kib(0, 8, 16, 32, 64, 100, 132, 164, 196, 228)  # sm_90, sm_100, sm_103

_ARCH_LIST = (
    ArchSpec(
        name="sm_60", fp32_lanes_per_sm=64, cc=(6, 0), family="Pascal (GP100)",
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        smem_per_sm=64 * KiB, smem_per_block_optin=48 * KiB, smem_carveouts=_kib(64),
        sub_partitions=2,  # [OCC] cudaOccSubPartitionsPerMultiprocessor: GP100 has 2
        notes="no L1/shared carve-out; GP100's register limit is also checked as if GP10x [OCC]",
    ),
    ArchSpec(
        name="sm_61", cc=(6, 1), family="Pascal (GP10x)",
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        smem_per_sm=96 * KiB, smem_per_block_optin=48 * KiB, smem_carveouts=_kib(96),
        notes="no L1/shared carve-out",
    ),
    ArchSpec(
        name="sm_70", fp32_lanes_per_sm=64, cc=(7, 0), family="Volta",
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        smem_per_sm=96 * KiB, smem_per_block_optin=96 * KiB, smem_carveouts=_VOLTA_STEPS,
    ),
    ArchSpec(
        name="sm_75", fp32_lanes_per_sm=64, cc=(7, 5), family="Turing",
        max_threads_per_sm=1024, max_blocks_per_sm=16,
        smem_per_sm=64 * KiB, smem_per_block_optin=64 * KiB, smem_carveouts=_TURING_STEPS,
    ),
    ArchSpec(
        name="sm_80", fp32_lanes_per_sm=64, cc=(8, 0), family="Ampere (GA100)",
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        smem_per_sm=164 * KiB, smem_per_block_optin=163 * KiB, smem_carveouts=_GA100_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128,
    ),
    ArchSpec(
        name="sm_86", cc=(8, 6), family="Ampere (GA10x)",
        max_threads_per_sm=1536, max_blocks_per_sm=16,
        smem_per_sm=100 * KiB, smem_per_block_optin=99 * KiB, smem_carveouts=_GA10X_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128, barrier_factor=1,
    ),
    ArchSpec(
        name="sm_87", cc=(8, 7), family="Ampere (Orin)",
        max_threads_per_sm=1536, max_blocks_per_sm=16,
        smem_per_sm=164 * KiB, smem_per_block_optin=163 * KiB, smem_carveouts=_GA100_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128, barrier_factor=1,
    ),
    ArchSpec(
        name="sm_89", cc=(8, 9), family="Ada",
        max_threads_per_sm=1536, max_blocks_per_sm=24,
        smem_per_sm=100 * KiB, smem_per_block_optin=99 * KiB, smem_carveouts=_GA10X_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128, barrier_factor=1,
    ),
    ArchSpec(
        name="sm_90", cc=(9, 0), family="Hopper",
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        smem_per_sm=228 * KiB, smem_per_block_optin=227 * KiB, smem_carveouts=_HOPPER_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128,
        notes="checked against the device attributes of the H100 capture [H100]",
    ),
    ArchSpec(
        name="sm_100", cc=(10, 0), family="Blackwell (B100/B200)",
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        smem_per_sm=228 * KiB, smem_per_block_optin=227 * KiB, smem_carveouts=_HOPPER_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128,
    ),
    ArchSpec(
        name="sm_103", cc=(10, 3), family="Blackwell (B300)",
        max_threads_per_sm=2048, max_blocks_per_sm=32,
        smem_per_sm=228 * KiB, smem_per_block_optin=227 * KiB, smem_carveouts=_HOPPER_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128,
    ),
    ArchSpec(
        name="sm_120", cc=(12, 0), family="Blackwell (GeForce RTX 50, RTX PRO)",
        max_threads_per_sm=1536, max_blocks_per_sm=24,
        smem_per_sm=100 * KiB, smem_per_block_optin=99 * KiB, smem_carveouts=_GA10X_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128, barrier_factor=1,
    ),
    ArchSpec(
        name="sm_121", cc=(12, 1), family="Blackwell (GB10)",
        max_threads_per_sm=1536, max_blocks_per_sm=24,
        smem_per_sm=100 * KiB, smem_per_block_optin=99 * KiB, smem_carveouts=_GA10X_STEPS,
        smem_reserved_per_block=1 * KiB, smem_alloc_unit=128, barrier_factor=1,
    ),
)

ARCHS: dict[str, ArchSpec] = {a.name: a for a in _ARCH_LIST}


def parse_arch_name(text: str) -> str | None:
    """``sm_90``, ``sm90``, ``sm_90a``, ``compute_90``, ``90``, ``9.0`` → ``sm_90``; None if unreadable."""
    s = text.strip().lower()
    m = re.fullmatch(r"(?:sm_?|compute_?)?(\d{2,3})[af]?", s)
    if m:
        return f"sm_{m.group(1)}"
    m = re.fullmatch(r"(\d{1,2})\.(\d)", s)
    if m:
        return f"sm_{m.group(1)}{m.group(2)}"
    return None


def arch_for_cc(cc: tuple[int, int]) -> ArchSpec | None:
    """The ArchSpec of a compute capability such as (9, 0), None when not in the table."""
    return ARCHS.get(f"sm_{cc[0]}{cc[1]}")


def find_arch(text: str) -> ArchSpec | None:
    """The ArchSpec for an architecture name in any of the forms ``parse_arch_name`` reads."""
    name = parse_arch_name(text)
    return ARCHS.get(name) if name else None


@dataclass(frozen=True)
class GpuSpec:
    """Spec-sheet numbers of one product, for a roofline when nothing was measured."""

    key: str  # short name for --gpu, e.g. "h100-sxm"
    name: str  # marketing name
    arch: str  # "sm_90"
    sm_count: int
    fp32_lanes_per_sm: int  # FP32 FMA lanes per SM (whitepaper)
    boost_clock_mhz: float
    dram_bytes_per_s: float  # datasheet memory bandwidth
    l2_bytes: int
    match: str  # regex matched (case-insensitive) against the driver's device name
    source: str = "datasheet"
    aliases: tuple[str, ...] = field(default_factory=tuple)

    @property
    def fp32_flops(self) -> float:
        """Peak FP32 FLOP/s: 2 (FMA) × lanes × SMs × boost clock."""
        return 2.0 * self.fp32_lanes_per_sm * self.sm_count * self.boost_clock_mhz * 1e6


MB = 1024 * 1024
GBs = 1e9

_GPU_LIST = (
    GpuSpec("h100-sxm", "NVIDIA H100 SXM5", "sm_90", 132, 128, 1980, 3350 * GBs, 50 * MB,
            r"H100 (80GB HBM3|SXM)", "H100 datasheet: 67 TFLOP/s FP32, 3.35 TB/s HBM3; L2 50 MB [H100]",
            ("h100",)),
    GpuSpec("h100-pcie", "NVIDIA H100 PCIe", "sm_90", 114, 128, 1755, 2000 * GBs, 50 * MB,
            r"H100.*PCIe", "H100 datasheet: 51 TFLOP/s FP32, 2.0 TB/s HBM2e"),
    GpuSpec("h200", "NVIDIA H200 SXM", "sm_90", 132, 128, 1980, 4800 * GBs, 50 * MB,
            r"H200", "H200 datasheet: 67 TFLOP/s FP32, 4.8 TB/s HBM3e"),
    GpuSpec("a100-80gb", "NVIDIA A100 SXM4 80GB", "sm_80", 108, 64, 1410, 2039 * GBs, 40 * MB,
            r"A100.*80GB", "A100 datasheet: 19.5 TFLOP/s FP32, 2039 GB/s HBM2e; L2 40 MB", ("a100",)),
    GpuSpec("a100-40gb", "NVIDIA A100 40GB", "sm_80", 108, 64, 1410, 1555 * GBs, 40 * MB,
            r"A100", "A100 datasheet: 19.5 TFLOP/s FP32, 1555 GB/s HBM2"),
    GpuSpec("a6000", "NVIDIA RTX A6000", "sm_86", 84, 128, 1800, 768 * GBs, 6 * MB,
            r"RTX A6000", "RTX A6000 datasheet: 38.7 TFLOP/s FP32, 768 GB/s GDDR6; L2 6 MB"),
    GpuSpec("a4000", "NVIDIA RTX A4000", "sm_86", 48, 128, 1560, 448 * GBs, 4 * MB,
            r"RTX A4000", "RTX A4000 datasheet: 19.2 TFLOP/s FP32, 448 GB/s GDDR6; L2 4 MB"),
    GpuSpec("rtx3090", "NVIDIA GeForce RTX 3090", "sm_86", 82, 128, 1695, 936 * GBs, 6 * MB,
            r"RTX 3090", "GA102 whitepaper: 35.6 TFLOP/s FP32, 936 GB/s GDDR6X"),
    GpuSpec("rtx4090", "NVIDIA GeForce RTX 4090", "sm_89", 128, 128, 2520, 1008 * GBs, 72 * MB,
            r"RTX 4090", "Ada whitepaper: 82.6 TFLOP/s FP32, 1008 GB/s GDDR6X; L2 72 MB"),
    GpuSpec("l4", "NVIDIA L4", "sm_89", 58, 128, 2040, 300 * GBs, 48 * MB,
            r"\bL4\b", "L4 datasheet: 30.3 TFLOP/s FP32, 300 GB/s GDDR6; L2 48 MB"),
    GpuSpec("rtx5060", "NVIDIA GeForce RTX 5060", "sm_120", 30, 128, 2497, 448 * GBs, 32 * MB,
            r"RTX 5060(?! Ti)", "RTX 5060 spec: 3840 CUDA cores, 2.50 GHz boost, 448 GB/s GDDR7; L2 32 MB"),
    GpuSpec("v100", "NVIDIA Tesla V100 SXM2", "sm_70", 80, 64, 1530, 900 * GBs, 6 * MB,
            r"V100", "V100 datasheet: 15.7 TFLOP/s FP32, 900 GB/s HBM2; L2 6 MB"),
    GpuSpec("t4", "NVIDIA Tesla T4", "sm_75", 40, 64, 1590, 320 * GBs, 4 * MB,
            r"\bT4\b", "T4 datasheet: 8.1 TFLOP/s FP32, 320 GB/s GDDR6; L2 4 MB"),
    GpuSpec("mx330", "NVIDIA GeForce MX330", "sm_61", 3, 128, 1594, 56 * GBs, MB // 2,
            r"MX330", "MX330 (GP108): 384 CUDA cores, 1594 MHz boost, 64-bit GDDR5 7 Gbps (typical "
            "laptop configuration; OEMs vary the memory clock); L2 512 KB"),
)

GPUS: dict[str, GpuSpec] = {g.key: g for g in _GPU_LIST}


def find_gpu(text: str) -> GpuSpec | None:
    """A product by short key (``h100``, ``a6000``) or by the driver's device name
    (``NVIDIA H100 80GB HBM3``); None when it is not in the table."""
    s = text.strip()
    low = s.lower()
    for g in _GPU_LIST:
        if low == g.key or low in g.aliases:
            return g
    for g in _GPU_LIST:  # first match wins: the list puts specific patterns before general ones
        if re.search(g.match, s, flags=re.IGNORECASE):
            return g
    return None
