"""Grids of GEMM shapes for the shape map, and the validated options of one ``gemmlab shapes`` run.

A grid is a tuple of ``GridShape``: M, N, K (C[M,N] = A[M,K] @ B[K,N], row-major FP32), a short
label and where the shape comes from. ``GRIDS`` maps a name (``gemmlab shapes --preset NAME``) to a grid; any other
list of shapes comes from ``--shapes "M,N,K;M,N,K"``.

The default grid is sized to run in about three minutes on an H100 at the command's default
timing budgets (an estimate until measured) (every shape's A, B and C together stay under 400 MB, and no single product takes
more than ~0.2 TFLOP); docs/shapes.md says where each shape comes from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from gemmlab.bench.timer import TimingOptions
from gemmlab.errors import InputError


@dataclass(frozen=True)
class GridShape:
    """One point of a grid."""

    M: int
    N: int
    K: int
    label: str = ""
    source: str = ""

    @property
    def dims(self) -> tuple[int, int, int]:
        return (self.M, self.N, self.K)

    @property
    def name(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"

    def to_dict(self) -> dict:
        return {"M": self.M, "N": self.N, "K": self.K, "label": self.label, "source": self.source}


def _g(M: int, N: int, K: int, label: str, source: str) -> GridShape:
    return GridShape(M, N, K, label, source)


_POW2 = "square power of two"
_NEIGHBOUR = "±1 neighbour of a power of two: no dimension a multiple of 4 (scalar path today)"

# Square powers of two and their ±1 neighbours.
SQUARE: tuple[GridShape, ...] = (
    _g(1024, 1024, 1024, "1024³", _POW2),
    _g(1023, 1023, 1023, "1023³", _NEIGHBOUR),
    _g(1025, 1025, 1025, "1025³", _NEIGHBOUR),
    _g(2048, 2048, 2048, "2048³", _POW2 + " (the first seed article's size)"),
    _g(4096, 4096, 4096, "4096³", _POW2 + " (issue #12: ≥ 95% of cuBLAS)"),
    _g(4095, 4095, 4095, "4095³", _NEIGHBOUR + " (issue #12: 56% measured)"),
    _g(4097, 4097, 4097, "4097³", _NEIGHBOUR + " (issue #12: 54% measured)"),
)

# GEMV-like products (M or N <= 16): memory-bound, judged against the DRAM copy ceiling too.
SKINNY: tuple[GridShape, ...] = (
    _g(1, 4096, 4096, "batch-1 row × 4096²", "a single token through a 4096-wide layer (issue #12: 12%)"),
    _g(4096, 1, 4096, "4096² × one column", "matrix × vector (issue #12: 5%)"),
    _g(8, 4096, 4096, "8 rows × 4096²", "decode with a batch of 8"),
    _g(16, 4096, 4096, "16 rows × 4096²", "decode with a batch of 16"),
)

# Small K, and large K with too few output tiles to fill the GPU (split-K territory).
K_EXTREMES: tuple[GridShape, ...] = (
    _g(4096, 4096, 16, "K = 16", "rank-16 update (a LoRA-style low-rank product)"),
    _g(1000, 3000, 77, "1000×3000×77", "K = 77: CLIP's text context length (issue #12: 61%)"),
    _g(128, 128, 65536, "128²×64Ki", "large K, one or two 128×128 tiles: a reduction over a long axis"),
    _g(256, 256, 16384, "256²×16Ki", "large K, small M·N: gradient of a small weight over many tokens"),
)

SMALL: tuple[GridShape, ...] = (
    _g(127, 127, 127, "127³", "small odd square: launch- and tail-bound (issue #12: 47%)"),
)

# Shapes from real models. Tokens (M) are chosen to keep the run short; N and K are the models'.
MODELS: tuple[GridShape, ...] = (
    _g(4096, 2304, 768, "BERT-base QKV", "BERT-base fused Q/K/V projection: hidden 768 → 3×768, 8 × 512 tokens"),
    _g(4096, 3072, 768, "BERT-base FFN up", "BERT-base feed-forward: hidden 768 → 3072, 8 × 512 tokens"),
    _g(4096, 768, 3072, "BERT-base FFN down", "BERT-base feed-forward: 3072 → hidden 768, 8 × 512 tokens"),
    _g(1024, 50257, 768, "GPT-2 LM head", "GPT-2 small output layer: hidden 768 → vocabulary 50257 (odd N), 1024 tokens"),
    _g(2048, 11008, 4096, "LLaMA-7B MLP up", "LLaMA-7B gate/up projection: hidden 4096 → 11008, 2048 tokens of prefill"),
    _g(1, 11008, 4096, "LLaMA-7B MLP up, decode", "LLaMA-7B gate/up projection for one token (decode, batch 1)"),
)

# A few seconds on any GPU: small, skinny, K extremes and an odd rectangle, for the GPU tests.
QUICK: tuple[GridShape, ...] = (
    _g(256, 256, 256, "256³", _POW2),
    _g(127, 127, 127, "127³", "small odd square"),
    _g(1, 512, 512, "1×512²", "skinny M"),
    _g(512, 1, 512, "512²×1", "skinny N"),
    _g(300, 200, 7, "K = 7", "small odd K"),
    _g(64, 64, 8192, "64²×8Ki", "large K, small M·N"),
    _g(255, 257, 129, "255×257×129", "odd rectangle"),
)

DEFAULT: tuple[GridShape, ...] = SQUARE + SKINNY + K_EXTREMES + SMALL + MODELS

GRIDS: dict[str, tuple[GridShape, ...]] = {
    "default": DEFAULT,
    "square": SQUARE,
    "skinny": SKINNY,
    "k": K_EXTREMES + SMALL,
    "models": MODELS,
    "quick": QUICK,
}

GRID_HELP = {
    "default": "every shape below: squares and ±1 neighbours, skinny, K extremes, 127³, real models (sized for ~3 min on an H100)",
    "square": "1024, 2048, 4096 cubed and their ±1 neighbours",
    "skinny": "1, 8, 16 rows × 4096², and 4096² × one column",
    "k": "small K (16, 77), large K with small M·N, and 127³",
    "models": "BERT-base, GPT-2 and LLaMA-7B projections",
    "quick": "seven small shapes: small, skinny, small and large K, an odd rectangle (seconds; the GPU tests use it)",
}


def grid(name: str) -> tuple[GridShape, ...]:
    """The grid called ``name``; one InputError line listing the names otherwise."""
    try:
        return GRIDS[name]
    except KeyError:
        raise InputError(f"{name!r}: unknown shape grid; choose one of {', '.join(GRIDS)}", option="grid") from None


def parse_shapes(text: str) -> tuple[GridShape, ...]:
    """``"M,N,K;M,N,K"`` → shapes; every problem named with the part that caused it."""
    parts = [p.strip() for p in str(text).split(";")]
    parts = [p for p in parts if p]
    if not parts:
        raise InputError(f"--shapes expects M,N,K triples separated by ';' (e.g. \"4095,4095,4095;1,4096,4096\"), got {text!r}")
    out = []
    for p in parts:
        dims = [d.strip() for d in p.split(",")]
        if len(dims) != 3 or not all(d.lstrip("-").isdigit() for d in dims):
            raise InputError(f"--shapes: {p!r} is not M,N,K (three integers separated by commas)")
        M, N, K = (int(d) for d in dims)
        out.append(GridShape(M, N, K, f"{M}×{N}×{K}", "--shapes"))
    return tuple(out)


def check_grid_shape(s: GridShape) -> None:
    """One InputError line for a shape the kernels cannot run (≤ 0, or over 32-bit indexing)."""
    from gemmlab.problem import check_shape

    try:
        check_shape(s.M, s.N, s.K)
    except InputError as e:
        if e.message.startswith("shape "):
            raise
        raise InputError(f"shape {s.M},{s.N},{s.K}: {e.message}") from None


@dataclass(frozen=True)
class Goals:
    """What a shape must reach, in % of cuBLAS FP32 timed in the same run (issue #12's bars).

    ``target_pct``: the goal for every shape (85). ``floor_pct``: no shape may fall below it (50).
    Skinny shapes (M or N ≤ 16) are memory-bound: they meet their goal at ``skinny_pct`` of cuBLAS
    or at ``skinny_copy_pct`` of the measured DRAM copy ceiling.
    """

    target_pct: float = 85.0
    floor_pct: float = 50.0
    skinny_pct: float = 60.0
    skinny_copy_pct: float = 80.0

    def __post_init__(self) -> None:
        for name in ("target_pct", "floor_pct", "skinny_pct", "skinny_copy_pct"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 < v <= 1000:
                raise InputError(f"must be a percentage in (0, 1000], got {v!r}", option=name.removesuffix("_pct"))
        if self.floor_pct > self.target_pct:
            raise InputError(f"({self.floor_pct:g}%) must not be above the target ({self.target_pct:g}%)", option="floor")

    def to_dict(self) -> dict:
        return {"target_pct": self.target_pct, "floor_pct": self.floor_pct, "skinny_pct": self.skinny_pct,
                "skinny_copy_pct": self.skinny_copy_pct}


# Memory one shape needs on the GPU during its check: A, B, C in FP32 plus the float64 reference
# and |A|·|B| (two M×N float64) and float64 copies of A and B.
def check_bytes(s: GridShape) -> int:
    M, N, K = s.dims
    return 4 * (M * K + K * N + M * N) + 8 * (2 * M * N + M * K + K * N) + 8 * M * N


@dataclass(frozen=True)
class ShapesOptions:
    """Everything one ``gemmlab shapes`` run needs, validated when it is built."""

    shapes: tuple[GridShape, ...]
    grid_name: str = "default"  # "custom" for --shapes
    rung: str = "dispatch"  # picks its kernels by shape (gemmlab.runtime.dispatch)
    timing: TimingOptions = field(default_factory=lambda: TimingOptions(warmup_ms=10.0, rep_ms=50.0))
    seed: int = 0
    goals: Goals = field(default_factory=Goals)

    def __post_init__(self) -> None:
        shapes = tuple(self.shapes)
        if not shapes:
            raise InputError("no shapes to measure: give --preset NAME or --shapes M,N,K;...")
        seen: set[tuple[int, int, int]] = set()
        for s in shapes:
            if not isinstance(s, GridShape):
                raise InputError(f"shapes must be GridShape entries, got {s!r}")
            check_grid_shape(s)
            if s.dims in seen:
                raise InputError(f"shape {s.M},{s.N},{s.K} is listed twice")
            seen.add(s.dims)
        object.__setattr__(self, "shapes", shapes)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"must be an integer >= 0, got {self.seed!r}", option="seed")
        from gemmlab.kernels import registry

        registry.get(self.rung)  # one line naming the valid rungs otherwise

    def to_dict(self) -> dict:
        return {"grid": self.grid_name, "rung": self.rung, "timing": self.timing.to_dict(), "seed": self.seed,
                "goals": self.goals.to_dict(), "shapes": [s.to_dict() for s in self.shapes]}


def resolve(grid_name: Optional[str], shapes_text: Optional[str]) -> tuple[str, tuple[GridShape, ...]]:
    """(grid name, shapes) from ``--preset`` / ``--shapes`` (not both; default: the default grid)."""
    if grid_name is not None and shapes_text is not None:
        raise InputError(f"give either --preset or --shapes, not both (got --preset {grid_name} and --shapes {shapes_text})")
    if shapes_text is not None:
        return "custom", parse_shapes(shapes_text)
    name = grid_name or "default"
    return name, grid(name)
