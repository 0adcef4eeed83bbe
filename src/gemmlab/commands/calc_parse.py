"""Parsing of calculator arguments: sizes (8K), dimensions (16x16), GEMM shapes (MxNxK)."""

from __future__ import annotations

import math
import re

from gemmlab.errors import InputError
from gemmlab.hardware import MAX_BLOCK_DIMS, MAX_GRID_DIMS

_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2}


def parse_size(text: str, option: str = "--smem") -> int:
    """Bytes from ``8192``, ``8K``, ``8KiB``, ``48KB``, ``1.5K``, ``1M``. K and KB mean 1024 bytes,
    as shared-memory sizes are always counted in the CUDA documentation."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text or "")
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS:
        raise InputError(f"{option} {text!r}: expected a size such as 8192, 8K, 8KiB or 48KB (K = 1024 bytes)")
    value = float(m.group(1)) * _UNITS[unit]
    if value != int(value):
        raise InputError(f"{option} {text!r}: {value} is not a whole number of bytes")
    return int(value)


def parse_dims(text: str, option: str, *, max_dims: int = 3) -> tuple[int, ...]:
    """``256`` → (256,); ``16x16`` / ``16,16`` / ``(16, 16, 1)`` → (16, 16) / (16, 16, 1)."""
    parts = [p for p in re.split(r"[x×,\s]+", (text or "").strip().strip("()").lower()) if p]
    if not parts or len(parts) > max_dims or not all(p.isdigit() for p in parts):
        raise InputError(f"{option} {text!r}: expected up to {max_dims} positive integers such as 256 or 16x16")
    dims = tuple(int(p) for p in parts)
    if min(dims) < 1:
        raise InputError(f"{option} {text!r}: every dimension must be ≥ 1")
    return dims


def parse_count(text: str, option: str) -> int:
    """The product of ``parse_dims``: a thread or block count."""
    return math.prod(parse_dims(text, option))


def _within(dims: tuple[int, ...], limits: tuple[int, ...], text: str, option: str, what: str) -> tuple[int, ...]:
    for axis, n, most in zip("xyz", dims, limits):
        if n > most:
            raise InputError(f"{option} {text!r}: a {what}'s {axis} dimension must be 1..{most} on every GPU; got {n}")
    return dims


def parse_block3(text: str, option: str = "--block") -> tuple[int, int, int]:
    """Block dimensions (x, y, z), each within what any GPU launches (x, y ≤ 1024, z ≤ 64)."""
    d = _within(parse_dims(text, option), MAX_BLOCK_DIMS, text, option, "block")
    return (d + (1, 1))[:3]  # type: ignore[return-value]


def parse_block_threads(text: str, option: str = "--threads") -> int:
    """Threads per block from ``256`` or ``16x16``; each dimension within the block limits (the total is
    checked against the architecture's own limit by the occupancy calculator)."""
    return math.prod(parse_block3(text, option))


def parse_grid_blocks(text: str, option: str = "--grid") -> int:
    """Blocks in a grid from ``16384`` or ``64x256``; each dimension within what any GPU launches
    (x ≤ 2^31 - 1, y, z ≤ 65535)."""
    return math.prod(_within(parse_dims(text, option), MAX_GRID_DIMS, text, option, "grid"))


def parse_gemm(text: str, option: str = "--gemm") -> tuple[int, int, int]:
    """``4096`` (square) or ``MxNxK``."""
    d = parse_dims(text, option)
    if len(d) == 1:
        return d[0], d[0], d[0]
    if len(d) != 3:
        raise InputError(f"{option} {text!r}: expected N or MxNxK")
    return d  # type: ignore[return-value]
