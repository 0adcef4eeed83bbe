"""The register-blocked SGEMM probe (``sgemm_rb.cu``): its variants, their ``extern "C"`` wrappers
and launch geometry. Not wired into the ladder or the dispatch rung; used by
``benchmarks/fp32_kernel_probe.py`` (timing on the device) and ``tests/test_sgemm_rb_*.py``.

Every variant keeps the lane's 8 x 8 accumulator block and asks ptxas for 16 warps per SM
(``MINB`` blocks of ``NT`` threads: a 128-register cap), against tile_ld's 12 at 167 registers.
"""

from __future__ import annotations

from dataclasses import dataclass

from gemmlab.kernels.source import read_source

SOURCE = "sgemm_rb.cu"

SIGNATURE: tuple[tuple[str, str], ...] = (
    ("int", "M"), ("int", "N"), ("int", "K"), ("int", "lda"), ("int", "ldb"), ("int", "ldc"),
    ("float", "alpha"), ("const float* __restrict__", "A"), ("const float* __restrict__", "B"),
    ("float", "beta"), ("float* __restrict__", "C"))


@dataclass(frozen=True)
class RbVariant:
    name: str
    BM: int
    BN: int
    BK: int
    WM: int
    WN: int
    NT: int
    P: int = 1  # load phases per K tile (staging registers: 1 / P of a tile)
    GROUP: int = 0
    MINB: int = 0  # __launch_bounds__' second argument (0: none)

    source = SOURCE
    signature = SIGNATURE

    @property
    def kernel(self) -> str:
        return f"gemmlab_{self.name}"

    @property
    def threads(self) -> int:
        return self.NT

    @property
    def block(self) -> tuple[int, int, int]:
        return (self.NT, 1, 1)

    @property
    def dynamic_smem(self) -> int:
        """Two buffers of A's transposed tile (row pitch BM + 4) and B's tile, bytes."""
        return 2 * self.BK * (self.BM + 4 + self.BN) * 4

    def grid(self, M: int, N: int) -> tuple[int, int, int]:
        return (-(-N // self.BN), -(-M // self.BM), 1)

    @property
    def template_call(self) -> str:
        return (f"gemmlab::sgemm_rb<{self.BM}, {self.BN}, {self.BK}, {self.WM}, {self.WN}, "
                f"{self.NT}, {self.P}, {self.GROUP}>")


# 2 x 128 x 256 threads or 4 x 128 x 128 threads: 16 warps per SM at <= 128 registers. ptxas
# 13.0, sm_90, capped at 128 (natural counts in brackets): 127 (127), 128 (133), 127, 128;
# no spills (tests/test_sgemm_rb_nvcc.py).
VARIANTS: tuple[RbVariant, ...] = (
    # The CUTLASS SIMT / maxas classic: 128 x 128 x 8, 8 warps of 32 x 64, 2 blocks per SM
    # (17 KiB of shared memory each). One barrier per 512 FFMAs per thread.
    RbVariant("rb_128x128x8_t256", 128, 128, 8, 32, 64, 256, P=1, GROUP=0, MINB=2),
    # BK = 16: half the barriers and loop overhead per FFMA (34 KiB). The next tile is fetched in
    # two phases (8 staging floats at a time, as BK = 8): with all 16 at once ptxas needs 163
    # registers and spills under the 128 cap.
    RbVariant("rb_128x128x16_t256_p2", 128, 128, 16, 32, 64, 256, P=2, GROUP=0, MINB=2),
    # 128 x 128 x 8 in bands of 8 tile-rows (L2 reuse: the 2 x 132 resident blocks span 8 x 33
    # tiles instead of 8.25 whole tile-rows of A and all of B). (With BK = 16 the band arithmetic
    # tips ptxas into a 32-byte spill at the 128 cap.)
    RbVariant("rb_128x128x8_t256_g8", 128, 128, 8, 32, 64, 256, P=1, GROUP=8, MINB=2),
    # 4 warps of 32 x 64 in a 128 x 64 tile, 4 blocks per SM (12.5 KiB each): a barrier stalls a
    # quarter of the SM's warps instead of half, and 4 blocks' phases interleave; costs 1.5x the
    # L2 -> SM traffic of 128 x 128.
    RbVariant("rb_128x64x8_t128", 128, 64, 8, 32, 64, 128, P=1, GROUP=0, MINB=4),
    # The dispatch rung's big tile shape (64 x 128, 4 warps of 32 x 64) in this structure, 4 blocks.
    RbVariant("rb_64x128x8_t128", 64, 128, 8, 32, 64, 128, P=1, GROUP=0, MINB=4),
    # 128 x 128 x 8 at 3 blocks of 8 warps would need <= 85 registers: instead one block fewer
    # warps' worth of cap - 168 registers, 1 block of 256 + room: the uncapped count, for contrast.
    RbVariant("rb_128x128x8_t256_b1", 128, 128, 8, 32, 64, 256, P=1, GROUP=0, MINB=1),
)


def wrapper(v: RbVariant) -> str:
    params = ", ".join(f"{t} {n}" for t, n in SIGNATURE)
    args = ", ".join(n for _, n in SIGNATURE)
    bounds = f"{v.NT}" + (f", {v.MINB}" if v.MINB > 0 else "")
    return (f'extern "C" __global__ void __launch_bounds__({bounds}) {v.kernel}({params}) {{\n'
            f"    {v.template_call}({args});\n}}\n")


def translation_unit(variants) -> str:
    """The .cu text with includes inlined plus one wrapper per variant."""
    return read_source(SOURCE) + "\n" + "\n".join(wrapper(v) for v in variants)
