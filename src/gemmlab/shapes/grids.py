"""Grids of GEMM shapes for the shape map, and the validated options of one ``gemmlab shapes`` run.

A grid is a tuple of ``GridShape``: M, N, K (C[M,N] = A[M,K] @ B[K,N], row-major; for FP8, B is
given N x K), a short label and where the shape comes from. The FP32 grids (``default`` and its
parts) come from issue #12; the tensor grids (``tensor``: squares 512-16384 with their ±1
neighbours, and LLaMA / Mistral / GPT-2 projections at 1, 16, 128, 2048 and 8192 tokens) from
issue #20 and are the default of ``--dtype bf16`` / ``fp8``. ``GRIDS`` maps a name (``gemmlab shapes --preset NAME``) to a grid; any other
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

# --- tensor-core grids (issue #20) ----------------------------------------------------------
_T_POW2 = "square power of two"
_T_ODD = "±1 neighbour: K and N break TMA's 16-byte row pitch (an operand copy or a scalar path)"
TENSOR_SQUARES: tuple[GridShape, ...] = tuple(
    _g(n + d, n + d, n + d, f"{n + d}³", _T_POW2 if d == 0 else _T_ODD)
    for n in (512, 1024, 2048, 4096, 8192, 16384) for d in (-1, 0, 1))

# (label, N, K, where from): the projections of a transformer layer, C = X W with X tokens x K.
TOKENS = (1, 16, 128, 2048, 8192)  # decode batch 1 and 16, a small batch, prefill chunks
_PROJECTIONS = (
    ("LLaMA-3-8B QKV", 6144, 4096, "LLaMA-3-8B / Mistral-7B fused Q, K, V (32 + 2 x 8 heads of 128)"),
    ("LLaMA-3-8B O", 4096, 4096, "LLaMA-3-8B / Mistral-7B attention output"),
    ("LLaMA-3-8B gate+up", 28672, 4096, "LLaMA-3-8B / Mistral-7B fused gate and up (2 x 14336)"),
    ("LLaMA-3-8B down", 4096, 14336, "LLaMA-3-8B / Mistral-7B MLP down"),
    ("LLaMA-3-70B QKV", 10240, 8192, "LLaMA-3-70B fused Q, K, V (64 + 2 x 8 heads of 128)"),
    ("LLaMA-3-70B O", 8192, 8192, "LLaMA-3-70B attention output"),
    ("LLaMA-3-70B up", 28672, 8192, "LLaMA-3-70B gate or up projection"),
    ("LLaMA-3-70B down", 8192, 28672, "LLaMA-3-70B MLP down"),
    ("LLaMA-2-7B up", 11008, 4096, "LLaMA-2-7B gate or up projection (11008: not a multiple of 128)"),
    ("GPT-2 XL QKV", 4800, 1600, "GPT-2 XL fused Q, K, V (hidden 1600)"),
    ("GPT-2 XL MLP down", 1600, 6400, "GPT-2 XL MLP down (6400 -> 1600)"),
)
TENSOR_MODELS: tuple[GridShape, ...] = tuple(
    _g(m, n, k, f"{label}, {m} token{'s' if m > 1 else ''}", f"{where}; {m} token(s)")
    for label, n, k, where in _PROJECTIONS for m in TOKENS)
# Serving batches between the grid's 16 and 128 tokens, where tiles and token boxes are partly
# empty (docs/results/tc-rows-2026-11-29: 72-96 rows read 51-82% of cuBLAS until A's boxes
# stopped at M): the LLaMA-3-8B layer and LLaMA-3-70B's down projection, off the grid.
BATCH_TOKENS = (24, 40, 64, 72, 96, 112)
_BATCH_PROJECTIONS = ("LLaMA-3-8B QKV", "LLaMA-3-8B O", "LLaMA-3-8B gate+up", "LLaMA-3-8B down",
                      "LLaMA-3-70B down")
TENSOR_BATCHES: tuple[GridShape, ...] = tuple(
    _g(m, n, k, f"{label}, {m} tokens", f"{where}; a serving batch of {m} tokens")
    for label, n, k, where in _PROJECTIONS if label in _BATCH_PROJECTIONS for m in BATCH_TOKENS)
TENSOR_QUICK: tuple[GridShape, ...] = (
    _g(512, 512, 512, "512³", _T_POW2),
    _g(511, 511, 511, "511³", _T_ODD),
    _g(1, 4096, 4096, "1 token × 4096²", "decode, batch 1"),
    _g(16, 6144, 4096, "LLaMA-3-8B QKV, 16 tokens", "decode, batch 16"),
    _g(128, 4096, 4096, "128 tokens × 4096²", "a small batch"),
    _g(1000, 3000, 77, "1000×3000×77", "odd K (CLIP's text context length)"),
)
# 8192 tokens through LLaMA-3-70B's O projection is 8192^3, already a square.
TENSOR: tuple[GridShape, ...] = TENSOR_SQUARES + tuple(
    s for s in TENSOR_MODELS if s.dims not in {q.dims for q in TENSOR_SQUARES})

GRIDS: dict[str, tuple[GridShape, ...]] = {
    "default": DEFAULT,
    "square": SQUARE,
    "skinny": SKINNY,
    "k": K_EXTREMES + SMALL,
    "models": MODELS,
    "quick": QUICK,
    "tensor": TENSOR,
    "tensor-squares": TENSOR_SQUARES,
    "tensor-models": TENSOR_MODELS,
    "tensor-quick": TENSOR_QUICK,
    "tensor-batches": TENSOR_BATCHES,
}
# What ``--preset`` defaults to per dtype.
DEFAULT_GRID = {"fp32": "default", "bf16": "tensor", "fp8": "tensor"}

GRID_HELP = {
    "default": "every shape below: squares and ±1 neighbours, skinny, K extremes, 127³, real models (sized for ~3 min on an H100)",
    "square": "1024, 2048, 4096 cubed and their ±1 neighbours",
    "skinny": "1, 8, 16 rows × 4096², and 4096² × one column",
    "k": "small K (16, 77), large K with small M·N, and 127³",
    "models": "BERT-base, GPT-2 and LLaMA-7B projections",
    "quick": "seven small shapes: small, skinny, small and large K, an odd rectangle (seconds; the GPU tests use it)",
    "tensor": "BF16/FP8 (issue #20): squares 511-16385 (powers of two and ±1) and LLaMA-3-8B/70B, LLaMA-2-7B, "
              "GPT-2 XL projections at 1, 16, 128, 2048, 8192 tokens",
    "tensor-squares": "BF16/FP8: squares 512-16384 and their ±1 neighbours",
    "tensor-models": "BF16/FP8: model projections at 1, 16, 128, 2048, 8192 tokens",
    "tensor-quick": "BF16/FP8: six small shapes (square, odd square, decode, small batch, odd K; seconds)",
    "tensor-batches": "BF16/FP8: serving batches of 24-112 tokens on the LLaMA-3-8B layer and LLaMA-3-70B's "
                      "down projection (off the issue's grid)",
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

    @classmethod
    def for_dtype(cls, dtype: str, target_pct: Optional[float] = None,
                  floor_pct: Optional[float] = None) -> "Goals":
        """The bars of the issue that set them: FP32 issue #12's (85% of cuBLAS, floor 50%,
        skinny 60% or 80% of copy); BF16/FP8 issue #20's (95% of cuBLAS at its best; decode
        shapes, M <= 64, at 100% of it or 85% of the copy ceiling; floor 50%)."""
        base = cls() if dtype == "fp32" else cls(95.0, 50.0, 100.0, 85.0)
        return cls(base.target_pct if target_pct is None else target_pct,
                   base.floor_pct if floor_pct is None else floor_pct,
                   base.skinny_pct, base.skinny_copy_pct)


# The rung each dtype's map measures by default: the dispatcher that picks its kernels by shape.
DISPATCH = {"fp32": "dispatch", "bf16": "dispatch_bf16", "fp8": "dispatch_fp8"}


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
    rung: str = ""  # "": the dtype's dispatch rung (DISPATCH), which picks its kernels by shape
    timing: TimingOptions = field(default_factory=lambda: TimingOptions(warmup_ms=10.0, rep_ms=50.0))
    seed: int = 0
    goals: Goals = field(default_factory=Goals)
    dtype: str = "fp32"  # A and B: fp32, bf16 or fp8 (C: fp32 for fp32, bf16 otherwise)

    def __post_init__(self) -> None:
        if self.dtype not in DISPATCH:
            raise InputError(f"must be one of {', '.join(DISPATCH)}, got {self.dtype!r}", option="dtype")
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

        object.__setattr__(self, "rung", self.rung or DISPATCH[self.dtype])
        rung = registry.get(self.rung)  # one line naming the valid rungs otherwise
        if rung.dtype != self.dtype:
            raise InputError(f"rung {self.rung!r} takes {rung.dtype} A and B; the map is --dtype {self.dtype} "
                             f"(its dispatch rung: {DISPATCH[self.dtype]})", option="rung")

    def to_dict(self) -> dict:
        return {"grid": self.grid_name, "rung": self.rung, "dtype": self.dtype, "timing": self.timing.to_dict(),
                "seed": self.seed, "goals": self.goals.to_dict(), "shapes": [s.to_dict() for s in self.shapes]}


def resolve(grid_name: Optional[str], shapes_text: Optional[str],
            dtype: str = "fp32") -> tuple[str, tuple[GridShape, ...]]:
    """(grid name, shapes) from ``--preset`` / ``--shapes`` (not both; default: the dtype's
    default grid, ``DEFAULT_GRID``)."""
    if grid_name is not None and shapes_text is not None:
        raise InputError(f"give either --preset or --shapes, not both (got --preset {grid_name} and --shapes {shapes_text})")
    if shapes_text is not None:
        return "custom", parse_shapes(shapes_text)
    name = grid_name or DEFAULT_GRID.get(dtype, "default")
    return name, grid(name)
