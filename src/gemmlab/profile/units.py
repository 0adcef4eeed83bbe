"""Nsight Compute value and unit handling: scaled units → base units, thousands separators.

ncu prints scaled units unless ``--print-units base``: ``ms``/``us`` for time, ``Kbyte``/``Mbyte``
(SI, 1 Kbyte = 1000 byte: ``launch__shared_mem_per_block_driver`` is 1.024 Kbyte = 1024 byte),
``Ghz``, ``Gbyte/s``, ``sector/ns``. gemmlab stores base units: ns, byte, hz, per second.
"""

from __future__ import annotations

import re
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
    if m:  # e.g. %/Kbyte → %/byte: divide by 1000
        return m.group(2).lower(), 1.0 / _SI[m.group(1).upper()]
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


def parse_number(text: str) -> Optional[float]:
    """``"131,072"`` → 131072.0; ``"n/a"``, ``""`` or text → None."""
    s = text.strip().replace(",", "")
    if not s or not _NUMBER.match(s):
        return None
    return float(s)


def parse_value(text: str, unit: str) -> tuple[Optional[Value], str]:
    """A cell and its unit → (value in base units, base unit).

    Numbers are scaled to base units; non-numeric text (``PolicySpread``) is kept as str;
    empty and ``n/a`` cells give None (no value).
    """
    t = text.strip()
    if t == "" or t.lower() in ("n/a", "na", "-", "nan"):
        return None, unit
    num = parse_number(t)
    if num is None:
        return t, unit
    base, factor = to_base(unit)
    return num * factor, base
