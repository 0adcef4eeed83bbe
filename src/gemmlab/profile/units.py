"""Nsight Compute value and unit handling: scaled units → base units, thousands separators.

ncu prints scaled units unless ``--print-units base``: ``ms``/``us`` for time, ``Kbyte``/``Mbyte``
(SI, 1 Kbyte = 1000 byte: ``launch__shared_mem_per_block_driver`` is 1.024 Kbyte = 1024 byte),
``Ghz``, ``Gbyte/s``, ``sector/ns``. gemmlab stores base units: ns, byte, hz, per second.

A whole column of cells is read by ``scale_column``: the same values as ``parse_scaled`` cell by cell,
with the check of which cells are plain numbers done by numpy over the column at once.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Optional, Sequence

from gemmlab.profile.records import Value

if TYPE_CHECKING:
    import numpy as np

_SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# time units → nanoseconds (ncu's base time unit)
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
            "s": 1e9, "second": 1e9}
# time units in a denominator → per second
_PER_TIME_S = {"ns": 1e9, "nsecond": 1e9, "us": 1e6, "usecond": 1e6, "ms": 1e3, "msecond": 1e3,
               "s": 1.0, "second": 1.0}
_PREFIXED = re.compile(r"^([KMGTP])(byte|hz|bit)$", re.IGNORECASE)


def _scale_numerator(unit: str) -> tuple[str, float]:
    if unit in _TIME_NS:
        return "ns", _TIME_NS[unit]
    m = _PREFIXED.match(unit)
    if m:
        return m.group(2).lower(), _SI[m.group(1).upper()]
    if unit.lower() == "hz":
        return "hz", 1.0
    return unit, 1.0


def _scale_denominator(unit: str) -> tuple[str, float]:
    if unit in _PER_TIME_S:
        return "s", _PER_TIME_S[unit]
    m = _PREFIXED.match(unit)
    if m:
        # ncu puts the prefix it scaled by wherever the byte is, even in a denominator: the
        # report's 8297 %/byte (derived__pct_occupancy_per_shared_mem_size) is printed as
        # 8.297 %/Kbyte, and --print-units base prints 8297 %/byte. So the factor multiplies.
        return m.group(2).lower(), _SI[m.group(1).upper()]
    return unit, 1.0


def to_base(unit: str) -> tuple[str, float]:
    """(base unit, factor): value_in_base = value × factor."""
    unit = unit.strip()
    if not unit:
        return "", 1.0
    if "/" in unit:
        num, _, den = unit.partition("/")
        n_unit, n_f = _scale_numerator(num)
        d_unit, d_f = _scale_denominator(den)
        return f"{n_unit}/{d_unit}", n_f * d_f
    return _scale_numerator(unit)


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
# Cells that mean "no value": ncu writes n/a for metrics it could not compute for a launch and
# "no data" for source-level metrics without samples (sass__inst_executed_register_spilling_*).
MISSING = frozenset({"", "n/a", "na", "-", "nan", "no data"})


def parse_number(text: str) -> Optional[float]:
    """``"131,072"`` → 131072.0; ``"n/a"``, ``""`` or text → None."""
    s = text.strip().replace(",", "")
    if not s or not _NUMBER.match(s):
        return None
    return float(s)


@functools.lru_cache(maxsize=None)
def unit_scale(unit: str) -> tuple[str, Optional[Decimal]]:
    """(base unit, exact decimal factor or None for 1) for a unit as ncu printed it."""
    base, factor = to_base(unit)
    return base, (None if factor == 1.0 else Decimal(repr(factor)))


def parse_scaled(text: str, base: str, factor: Optional[Decimal]) -> Optional[Value]:
    """One cell whose unit was already resolved by ``unit_scale``: number in base units, text, or None.

    Scaling is done in decimal so that ``2.088672 ms`` becomes exactly 2088672 ns, the value
    ``--print-units base`` prints, not 2088671.9999999998.
    """
    t = text.strip()
    if t.lower() in MISSING:
        return None
    s = t.replace(",", "")
    if not _NUMBER.match(s):
        return t
    if factor is None:
        return float(s)
    return float(Decimal(s) * factor)


def parse_value(text: str, unit: str) -> tuple[Optional[Value], str]:
    """A cell and its unit → (value in base units, base unit).

    Numbers are scaled to base units; non-numeric text (``PolicySpread``) is kept as str;
    empty, ``n/a`` and ``no data`` cells give None (no value).
    """
    base, factor = unit_scale(unit.strip())
    value = parse_scaled(text, base, factor)
    if value is None or isinstance(value, str):
        return value, unit
    return value, base


# A plain number: an optional sign, then digits, thousands commas and at most one point, at least one
# digit. Up to 25 digits, so that decimal's 28-digit context multiplies exactly (see scale_column).
_MAX_DIGITS = 25
_FEW = 24  # fewer cells than this are converted one by one: numpy's set-up would cost more
_DIGIT_LO, _DIGIT_HI, _POINT, _COMMA, _PLUS, _MINUS = (ord(c) for c in "09.,+-")


def plain_numbers(cells: np.ndarray) -> np.ndarray:
    """Which cells of a numpy str array are plain numbers (a bool array of the same shape).

    Every plain number is one ``parse_scaled`` reads as a number: stripping changes nothing, it is not
    a missing-value word, and without its commas it matches ``_NUMBER``; cells that are not plain
    (text, ``n/a``, exponents, spaces) are left to ``parse_scaled``.
    """
    import numpy as np  # here, not at import: most commands never read a whole column

    width = cells.dtype.itemsize // 4
    if width == 0:
        return np.zeros(cells.shape, bool)
    codes = cells.view(np.uint32).reshape(*cells.shape, width)  # code points, 0 after a cell's end
    digits = ((codes >= _DIGIT_LO) & (codes <= _DIGIT_HI)).sum(-1)
    points = (codes == _POINT).sum(-1)
    commas = (codes == _COMMA).sum(-1)
    sign = (codes[..., 0] == _PLUS) | (codes[..., 0] == _MINUS)
    return ((digits + points + commas + sign == _strings(np).str_len(cells)) & (points <= 1)
            & (digits >= 1) & (digits <= _MAX_DIGITS))


def _strings(np):
    """numpy's string functions: ``np.strings`` (numpy 2, compiled loops), else ``np.char``."""
    return getattr(np, "strings", None) or np.char


def _power_of_ten(factor: Optional[Decimal]) -> Optional[int]:
    """k when ``factor`` is exactly 10**k (None: 1), else None."""
    if factor is None:
        return 0
    sign, digits, exponent = factor.normalize().as_tuple()
    return exponent if sign == 0 and digits == (1,) and isinstance(exponent, int) else None


def scale_column(cells: Sequence[str], base: str, factor: Optional[Decimal]) -> list[Optional[Value]]:
    """``[parse_scaled(c, base, factor) for c in cells]``, computed a column at a time.

    The plain numbers (``plain_numbers``) are converted by ``float`` at C speed, a factor of 10**k
    applied by writing the exponent into the text (``"2.088672" + "e6"``): one correctly rounded
    conversion of the exact product, the value ``float(Decimal(s) * factor)`` gives (the product of
    at most 25 digits and a power of ten is exact in decimal's 28 digits). Other cells go through
    ``parse_scaled`` one by one.
    """
    return scale_numbers(cells, base, factor)[0]


def scale_numbers(cells: Sequence[str], base: str, factor: Optional[Decimal],
                  nul_free: bool = False) -> tuple[list[Optional[Value]], bool]:
    """(``scale_column``'s values, whether every one is a number); ``nul_free``: the caller knows no
    cell holds a NUL character (a numpy str array would drop a trailing one)."""
    import numpy as np

    n = len(cells)
    k = _power_of_ten(factor)
    if n < _FEW or k is None or (not nul_free and "\x00" in "".join(cells)):
        values = [parse_scaled(c, base, factor) for c in cells]
        return values, all(isinstance(v, float) for v in values)
    arr = np.array(cells, dtype=str)
    plain = plain_numbers(arr)
    if not plain.any():
        return [parse_scaled(c, base, factor) for c in cells], False
    numbers = arr if plain.all() else arr[plain]
    numbers = _strings(np).replace(numbers, ",", "")
    if k:
        numbers = _strings(np).add(numbers, f"e{k}")
    values = list(map(float, numbers.tolist()))
    if len(values) == n:
        return values, True
    out: list[Optional[Value]] = [None] * n
    for i, v in zip(np.flatnonzero(plain).tolist(), values):
        out[i] = v
    for i in np.flatnonzero(~plain).tolist():
        out[i] = parse_scaled(cells[i], base, factor)
    return out, False
