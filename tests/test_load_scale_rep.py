"""The lean copy of a many-launch ``.ncu-rep`` (issue #19, item 6): what ``rep_strip`` leaves out.

ncu 2025 writes a report's string table (the metric names) once, in the first results block; each
later launch's block has an empty table and names its metrics by the first one. The lean copy drops
the unread metrics of every launch, not only the first one's, and the blocks of kernel sources
(SASS, PTX, source text), which no record reads; it decodes to the same records as the report as
written. A layout it cannot be sure of is read as written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import NCU_H100
from gemmlab.profile import ncu_rep, needed, protobuf, rep_strip

pytest.importorskip("ncu_report")

REP = NCU_H100 / "gemm_tiled16.ncu-rep"


@pytest.fixture(autouse=True)
def in_process(monkeypatch):
    monkeypatch.setenv("GEMMLAB_NCU_REP_ISOLATE", "0")
    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "0")


def _with_table(block: bytes, table: bytes) -> bytes:
    """A results block with its header's string table (field 4) replaced."""
    n = int.from_bytes(block[:4], "little")
    header, payload = block[4:4 + n], block[4 + n:]
    parts = [protobuf.encode_varint((4 << 3) | 2) + protobuf.encode_varint(len(table)) + table
             if f.number == 4 else header[f.start:f.end] for f in protobuf.fields(header)]
    header = b"".join(parts)
    return len(header).to_bytes(4, "little") + header + payload


def _table(block: bytes) -> bytes:
    n = int.from_bytes(block[:4], "little")
    header = block[4:4 + n]
    (f,) = [f for f in protobuf.fields(header) if f.number == 4]
    return header[f.value_start:f.value_end]


def _report(tables: list[bytes | None]) -> bytes:
    """The fixture's one launch repeated, one results block per entry: None keeps its string table, bytes
    replace it (b"": the empty table of a later block, as ncu 2025 writes a many-launch report)."""
    head, blocks = rep_strip.blocks(REP.read_bytes())
    out = [head]
    for kind, b in blocks:
        if kind == "results":
            out += [b if t is None else _with_table(b, t) for t in tables]
        else:
            out.append(b)
    return b"".join(out)


def _decode(path: Path, source: Path | None = None) -> str:
    return json.dumps(ncu_rep.decode(path, "needed", source=str(source or path)), sort_keys=True)


def test_later_launches_lose_their_unread_metrics_too(tmp_path):
    rep = tmp_path / "three.ncu-rep"
    rep.write_bytes(_report([None, b"", b""]))
    as_written = ncu_rep.decode(rep, "needed")
    assert as_written["total"] == 3
    assert [len(d["metrics"][0]) for d in as_written["launches"]] == [432] * 3  # the first table names them (the L1 crossbar and texture-in request paths, the FP8 tensor-op counter among them)
    data = rep.read_bytes()
    lean = b"".join(rep_strip.strip_sections(data, needed.is_needed))
    sections_only = b"".join(rep_strip.strip_sections(data))
    results = [len(b) for kind, b in rep_strip.blocks(lean)[1] if kind == "results"]
    unread_kept = [len(b) for kind, b in rep_strip.blocks(sections_only)[1] if kind == "results"]
    assert results[1] == results[2] < unread_kept[1] / 5  # before: only the first launch was made lean
    table = len(_table(rep_strip.blocks(data)[1][2][1]))
    assert abs(results[0] - results[1] - table) < 8  # the first block is larger by its table only
    copy = tmp_path / "lean.ncu-rep"
    copy.write_bytes(lean)
    assert _decode(copy, rep) == _decode(rep)


def test_sources_are_left_out_and_not_missed(tmp_path):
    data = REP.read_bytes()
    kinds = [kind for kind, _ in rep_strip.blocks(data)[1]]
    assert "sources" in kinds
    for keep in (None, needed.is_needed):
        lean = b"".join(rep_strip.strip_sections(data, keep))
        assert "sources" not in [kind for kind, _ in rep_strip.blocks(lean)[1]]
        copy = tmp_path / "lean.ncu-rep"
        copy.write_bytes(lean)
        sel = "all" if keep is None else "needed"
        assert json.dumps(ncu_rep.decode(copy, sel, source=str(REP))) == json.dumps(ncu_rep.decode(REP, sel))


def test_an_empty_table_after_two_different_ones_is_not_guessed(tmp_path):
    table = _table(rep_strip.blocks(REP.read_bytes())[1][2][1])
    other = table + protobuf.encode_varint((1 << 3) | 2) + protobuf.encode_varint(9) + b"x__other."
    data = _report([None, other, b""])
    with pytest.raises(rep_strip.Layout, match="empty string table after two different"):
        rep_strip.strip_sections(data, needed.is_needed)
    odd = tmp_path / "odd.ncu-rep"
    odd.write_bytes(data)
    with rep_strip.lean_copy(odd, keep=needed.is_needed) as path:
        assert path == odd  # read as written
    assert rep_strip.strip_sections(_report([None, table, b""]), needed.is_needed)  # the same table again: fine


def test_a_report_read_through_the_cache_path_is_the_same(tmp_path, monkeypatch):
    """read_rep end to end (lean copy, one child process) on a many-launch report."""
    monkeypatch.setenv("GEMMLAB_NCU_REP_ISOLATE", "1")
    rep = tmp_path / "five.ncu-rep"
    rep.write_bytes(_report([None] + [b""] * 4))
    launches = ncu_rep.read_rep(rep)
    monkeypatch.setenv("GEMMLAB_NCU_REP_LEAN", "0")
    as_written = ncu_rep.read_rep(rep)
    assert [k.id for k in launches] == [0, 1, 2, 3, 4]
    assert launches == as_written
    assert os.environ["GEMMLAB_NCU_REP_CACHE"] == "0"


def test_stripped_while_hashed_when_the_cache_surely_misses(tmp_path, monkeypatch):
    from gemmlab.profile import rep_cache

    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "1")
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path / "cache"))
    rep = tmp_path / "three.ncu-rep"
    rep.write_bytes(_report([None, b"", b""]))
    size = rep.stat().st_size
    calls = []
    real = rep_strip.lean_pieces
    monkeypatch.setattr(rep_strip, "lean_pieces", lambda *a: calls.append(1) or real(*a))
    assert not rep_cache.may_hold(size, "needed")
    first = ncu_rep.read_rep(rep)  # a miss for sure: stripped while hashed, once
    assert calls == [1] and rep_cache.may_hold(size, "needed")
    again = ncu_rep.read_rep(rep)  # an entry of that size: hashed first, then a hit, nothing stripped
    assert calls == [1] and again == first
    monkeypatch.setenv("GEMMLAB_NCU_REP_CACHE", "0")
    assert ncu_rep.read_rep(rep) == first and calls == [1, 1]  # stripped after (no cache: no hash)
