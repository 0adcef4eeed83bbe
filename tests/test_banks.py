"""Bank conflicts: hand-derived values (bank = 32-bit word % 32; same word = broadcast; 8-byte
accesses per half-warp, 16-byte per quarter-warp) and a safe expression evaluator."""

from __future__ import annotations

import pytest

from gemmlab.analysis.banks import _c_div, _c_mod, bank_conflicts, parse_var
from gemmlab.errors import InputError


def way(expr: str, **kw) -> int:
    return bank_conflicts(expr, **kw).conflict_way


def test_the_classic_cases():
    assert way("tid") == 1  # 32 consecutive words, one per bank
    assert way("tid * 32") == 32  # every lane in bank 0, 32 different words
    assert way("tid * 33") == 1  # padded: lane i in bank i
    assert way("tid * 2") == 2  # banks 0, 2, ..., 30 each hold two words
    assert way("0") == 1  # one word for everybody: a broadcast
    assert way("tid / 2") == 1  # pairs of lanes share a word: broadcast, not a conflict


def test_transposed_16_by_16_read():
    # lanes 0..15 read rows 0..15 of column 0, lanes 16..31 rows 0..15 of column 1: word 16r + c, bank
    # 0 or 16 (r even/odd) plus c: each of banks 0, 1, 16, 17 holds 8 words → 8-way.
    r = bank_conflicts("(tid % 16) * 16 + tid / 16")
    assert (r.conflict_way, r.wavefronts) == (8, 8)
    # Stride 17 leaves lane 31 (row 15, column 1: word 256) in bank 0 with lane 0: 2-way; 18 is clean.
    assert r.padding.padded_stride == 18 and r.padding.conflict_way == 1


def test_two_dimensional_subscript_and_padding():
    r = bank_conflicts("As[tid][k]", row_length=32, variables={"k": 3})
    assert r.conflict_way == 32
    assert (r.padding.stride, r.padding.padded_stride, r.padding.conflict_way) == (32, 33, 1)
    assert r.padding.expression == "tid * 33 + k" and r.padding.extra_bytes_per_row == 4


def test_block_shape_gives_thread_indices():
    # 16×16 block, warp 0: tx = 0..15 twice, ty = 0 then 1.
    assert way("As[ty][k]", row_length=16, block=(16, 16, 1), variables={"k": 0}) == 1  # 2 words, broadcast
    # Bs[tx][k]: word 16·tx, banks 0 and 16, 8 words each (lanes 16..31 repeat lanes 0..15) → 8-way.
    r = bank_conflicts("Bs[tx][k]", row_length=16, block=(16, 16, 1), variables={"k": 0})
    assert r.conflict_way == 8 and r.padding.padded_stride == 17 and r.padding.conflict_way == 1
    # Warp 1 of the block has ty = 2 and 3.
    r = bank_conflicts("threadIdx.y", block=(16, 16, 1), warp=1)
    assert {a.index for a in r.accesses} == {2, 3}


def test_register_blocked_gemm_read():
    # A 2D-blocktiled kernel reading Bs[k][threadCol * 8 + i] with threadCol = tid % 16: word 8·tc,
    # banks 0, 8, 16, 24, four words each (tc and tc + 4, + 8, + 12) → 4-way.
    assert way("k * 128 + (tid % 16) * 8 + i", variables={"k": 0, "i": 0}) == 4


def test_eight_byte_accesses_per_half_warp():
    r = bank_conflicts("tid", elem_bytes=8)  # LDS.64, consecutive: 2 wavefronts, no conflict
    assert (r.conflict_way, r.wavefronts, r.ideal_wavefronts) == (1, 2, 2)
    # Stride of two doubles: a half-warp's 16 lanes start at words 0, 4, ..., 60 → banks repeat every
    # 8 lanes → 2-way in each half → 4 wavefronts.
    r = bank_conflicts("tid * 2", elem_bytes=8)
    assert (r.conflict_way, r.wavefronts, r.phase_ways) == (2, 4, (2, 2))


def test_sixteen_byte_accesses_per_quarter_warp():
    r = bank_conflicts("tid", elem_bytes=16)  # LDS.128: 4 wavefronts by design, not a conflict
    assert (r.conflict_way, r.wavefronts, r.ideal_wavefronts) == (1, 4, 4)
    assert r.padding is None
    # Two float4 apart: 8 lanes cover words 8i..8i+3 → banks {0..3, 8..11, 16..19, 24..27} twice → 2-way.
    r = bank_conflicts("tid * 2", elem_bytes=16)
    assert (r.conflict_way, r.wavefronts) == (2, 8)


def test_sub_word_accesses():
    assert way("tid", elem_bytes=1) == 1  # 32 bytes = 8 words, lanes share words
    assert way("tid * 64", elem_bytes=2) == 32  # 128 B apart: bank 0 every time


def test_banks_per_lane():
    r = bank_conflicts("tid * 3")
    assert [a.banks[0] for a in r.accesses[:12]] == [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 1]
    assert r.accesses[5].address == 60
    r = bank_conflicts("tid", elem_bytes=16)
    assert r.accesses[9].banks == (4, 5, 6, 7)


def test_no_padding_when_the_form_does_not_fit():
    r = bank_conflicts("(tid * 4) ^ 3")
    assert r.conflict_way == 4 and r.padding is None and "row * STRIDE" in r.padding_note


def test_stride_from_a_variable():
    r = bank_conflicts("tid * N + k", variables={"N": 32, "k": 0})
    assert r.conflict_way == 32 and r.padding.padded_stride == 33


def test_c_integer_semantics():
    assert (_c_div(-7, 2), _c_mod(-7, 2), _c_div(7, -2), _c_mod(7, -2)) == (-3, -1, -3, 1)
    assert way("(tid - 1) / 2 + 1") == 1  # lane 0: (-1)/2 = 0 in C


@pytest.mark.parametrize(
    "expr,kw,fragment",
    [
        ("__import__('os').system('true')", {}, "not allowed"),
        ("tid ** 2", {}, "not allowed"),
        ("tid if tid else 0", {}, "not allowed"),
        ("a.b.c", {}, "not allowed"),
        ("tid +", {}, "not an expression"),
        ("tid * k", {}, "--var k=VALUE"),
        ("tid / (lane - lane)", {}, "division by zero"),
        ("1 << 70", {}, "shift by 70"),
        ("tid - 40", {}, "negative"),
        ("As[tid][0]", {}, "--row-length"),
        ("tid", {"elem_bytes": 3}, "elem_bytes 3"),
        ("tid", {"variables": {"lane": 1}}, "set per lane"),
        ("tid", {"warp": 32}, "warp 32"),
        ("x" * 600, {}, "at most 500"),
    ],
)
def test_bad_expressions_are_one_line_errors(expr, kw, fragment):
    with pytest.raises(InputError) as e:
        bank_conflicts(expr, **kw)
    assert fragment in e.value.message


def test_parse_var():
    assert parse_var("k=3") == ("k", 3) and parse_var(" n = -2 ") == ("n", -2)
    with pytest.raises(InputError, match="NAME=INTEGER"):
        parse_var("k=three")
