"""Nsight Compute value and unit handling: scaled units → base units, thousands separators.

ncu prints scaled units unless ``--print-units base``: ``ms``/``us`` for time, ``Kbyte``/``Mbyte``
(SI, 1 Kbyte = 1000 byte: ``launch__shared_mem_per_block_driver`` is 1.024 Kbyte = 1024 byte),
``Ghz``, ``Gbyte/s``, ``sector/ns``. gemmlab stores base units: ns, byte, hz, per second.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal
from typing import Optional

from gemmlab.profile.records import Value

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
