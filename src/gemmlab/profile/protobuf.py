"""The few protobuf wire-format pieces the ``.ncu-rep`` readers need: varints and a message's fields.

Nsight Compute writes its reports as length-prefixed protobuf messages (NVIDIA's
ProfilerReport.proto). gemmlab never needs the schema: walking a message's top-level fields and
reading varints is enough to find block sizes (``ncu_rep``) and to drop unread results
(``rep_strip``). Malformed bytes raise ``Malformed`` (a ``ValueError``).
"""

from __future__ import annotations

from typing import NamedTuple, Optional


class Malformed(ValueError):
    """The bytes do not walk as protobuf."""


def read_varint(b: bytes, i: int) -> tuple[int, int]:
    """(value, index after it) of the varint starting at ``b[i]``."""
    value = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise Malformed("bad varint")
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def encode_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if not n:
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


class Field(NamedTuple):
    number: int
    wire: int  # 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
    start: int  # where the field (its key) starts in the message
    end: int  # where it ends
    value_start: int
    value_end: int
    value: Optional[int]  # the varint's value (wire type 0), else None


def fields(message: bytes) -> list[Field]:
    """Every top-level field of a protobuf message, in order."""
    out = []
    i = 0
    while i < len(message):
        start = i
        key, i = read_varint(message, i)
        number, wire = key >> 3, key & 7
        value = None
        if wire == 0:
            vs = i
            value, i = read_varint(message, i)
            ve = i
        elif wire == 2:
            n, vs = read_varint(message, i)
            ve = i = vs + n
        elif wire == 5:
            vs, ve = i, i + 4
            i = ve
        elif wire == 1:
            vs, ve = i, i + 8
            i = ve
        else:
            raise Malformed(f"wire type {wire}")
        if i > len(message) or number == 0:
            raise Malformed("field overruns its message")
        out.append(Field(number, wire, start, i, vs, ve, value))
    return out


def varint_of(message_fields: list[Field], number: int) -> int:
    """The (last) value of varint field ``number``; 0 when absent, as protobuf reads it."""
    value = 0
    for f in message_fields:
        if f.number == number:
            if f.wire != 0:
                raise Malformed(f"field {number} is not a varint")
            value = f.value
    return value


def with_varint(message: bytes, message_fields: list[Field], number: int, value: int) -> bytes:
    """``message`` with varint field ``number`` set to ``value`` (in place of each occurrence)."""
    parts = []
    for f in message_fields:
        if f.number == number:
            parts.append(encode_varint(number << 3) + encode_varint(value))
        else:
            parts.append(message[f.start:f.end])
    return b"".join(parts)
