"""The fourth seed article's published figures and claims, exactly as printed there.

"CUDA Performance: What Actually Matters", Nguyen Xuan Hoa, published Nov 06, 2025
(``shared/seeds/04-cuda-performance-what-matters.txt``). It measures two experiments on two GPUs
(Example 1: matrix multiplication; Example 2: counting the elements equal to K) and gives the
other four ideas with code but without measurements. Nothing here is measured by gemmlab: the
numbers are the article's, in milliseconds, with the article's own row labels. The article states
neither its matrix size nor its array length.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TITLE = "CUDA Performance: What Actually Matters"
CITATION = "the fourth seed article (“CUDA Performance: What Actually Matters”, Nguyen Xuan Hoa, Nov 2025)"

# The article's two GPUs, as its hardware table names them.
MX330 = "NVIDIA GeForce MX330"  # Pascal, CC 6.1, 3 SMs, ~56.1 GB/s, 512 KB L2
A4000 = "NVIDIA RTX A4000"  # Ampere, CC 8.6, 48 SMs, 448 GB/s, 4 MB L2
GPUS = (MX330, A4000)


@dataclass(frozen=True)
class ArticleRow:
    label: str  # the article's row label, as printed
    variant: str  # the lesson variant it corresponds to
    ms: tuple[float, float]  # (MX330, A4000), as printed


@dataclass(frozen=True)
class ArticleLesson:
    """What the article says about one lesson: its table (if it measured one) and its claim."""

    section: str  # the article's section or example
    claim: str  # the article's own words for what the optimisation does
    rows: tuple[ArticleRow, ...] = ()  # empty: the article gives code but no measurement
    conclusions: tuple[str, ...] = field(default=())  # the article's per-GPU conclusions, quoted

    @property
    def measured(self) -> bool:
        return bool(self.rows)

    def ms(self, variant: str) -> tuple[float, float] | None:
        for r in self.rows:
            if r.variant == variant:
                return r.ms
        return None


ARTICLE: dict[str, ArticleLesson] = {
    "tiling": ArticleLesson(
        section="Example 1: Matrix Multiplication (Results)",
        claim="Tiling & SMEM reduces global memory accesses and should beat the naive kernel.",
        rows=(
            ArticleRow("Naive", "naive", (37.240, 1.861)),
            ArticleRow("Tiling & SMEM", "tiled", (15.846, 2.077)),
            ArticleRow("cuBLAS", "cublas", (2.423, 0.206)),
        ),
        conclusions=(
            "On MX330 (Pascal): Tiling & SMEM gave a clear ~2.35x speedup (37.240 / 15.846).",
            "On RTX A4000 (Ampere): Our \"optimized\" kernel is actually slower — 2.077 ms vs 1.861 ms for the naive version.",
        ),
    ),
    "atomics": ArticleLesson(
        section="Example 2: Optimizing Atomic Operations (Results)",
        claim="Calling atomicAdd once per block instead of once per match removes global atomic contention.",
        rows=(
            ArticleRow("Naive atomicAdd()", "atomic_per_match", (12.271, 1.000)),
            ArticleRow("Opt (SMEM + Reduction)", "block_reduce", (9.123, 0.990)),
        ),
        conclusions=(
            "On MX330 (Pascal): ~1.34x speedup (12.271 / 9.123).",
            "On RTX A4000 (Ampere): Essentially no difference — 1% improvement at best.",
        ),
    ),
    "coalescing": ArticleLesson(
        section="Memory Coalescing: Don't Make the GPU Work 32× Harder",
        claim="A[idx * 100] scatters a warp across 32 memory segments: \"You're wasting 31/32 of your bandwidth.\"",
    ),
    "bank_conflicts": ArticleLesson(
        section="Bank Conflicts: When Shared Memory Fights Itself",
        claim="Column access of __shared__ float A[32][32] is a 32-way conflict; padding to A[32][33] gives "
        "\"No more conflicts\".",
    ),
    "occupancy": ArticleLesson(
        section="Occupancy: Keeping the SM Busy",
        claim="\"Occupancy is the key to latency hiding\"; too much shared memory per block means fewer blocks "
        "fit on the SM and lower occupancy.",
    ),
    "fusion": ArticleLesson(
        section="Kernel Fusion: Eliminating the Round Trip",
        claim="Fusing kernel_scale and kernel_add keeps Temp in a register: \"Eliminates intermediate global "
        "memory traffic (the biggest win).\"",
    ),
}
