"""Bad input: one line naming the file and what was expected, exit code 2, never a traceback.

Partial input (n/a cells, metrics gemmlab does not know, output cut short while printing live) is
read with what is there.
"""

from __future__ import annotations

import csv
import io
import os

import pytest

from conftest import NCU_H100
from gemmlab.errors import InputError, ToolMissing
from gemmlab.profile import metrics as M
from gemmlab.profile import ncu_rep
from gemmlab.profile.load import load

RAW = NCU_H100 / "gemm_ladder_raw.csv"
DETAILS = NCU_H100 / "gemm_ladder_details.csv"
REP = NCU_H100 / "gemm_tiled16.ncu-rep"


def _has_ncu_report() -> bool:
    try:
        ncu_rep.ncu_report_module()
    except ToolMissing:
        return False
    return True


needs_ncu_report = pytest.mark.skipif(not _has_ncu_report(), reason="ncu_report is not installed")


def bad(path, *fragments: str) -> str:
    """Load ``path``; it must fail with one InputError line naming it and holding ``fragments``."""
    with pytest.raises(InputError) as e:
        load(path)
    msg = str(e.value)
    assert e.value.code == 2
    assert "\n" not in msg
    assert msg.startswith(f"{path}: ")
    for f in fragments:
        assert f in msg, (f, msg)
    return msg


def write(tmp_path, name: str, data: str | bytes):
    p = tmp_path / name
    (p.write_bytes if isinstance(data, bytes) else p.write_text)(data)
    return p


# --- not a file, no data ---------------------------------------------------------------------

def test_missing_file(tmp_path):
    bad(tmp_path / "nope.csv", "no such file", "expected an Nsight Compute export")


def test_directory(tmp_path):
    bad(tmp_path, "is a directory", "expected an Nsight Compute export")


@pytest.mark.parametrize("content", [b"", b"  \n\n"])
def test_empty_file(tmp_path, content):
    bad(write(tmp_path, "empty.csv", content), "file is empty", "expected an Nsight Compute export")


def test_binary_data(tmp_path):
    bad(write(tmp_path, "random.csv", os.urandom(3000) + b"\x00"), "binary data", "expected")


# --- text that is not ncu output ---------------------------------------------------------------

def test_generic_csv(tmp_path):
    bad(write(tmp_path, "other.csv", "name,value\nfoo,1\n"), "not Nsight Compute CSV output",
        "'ID' and 'Kernel Name'")


def test_csv_with_an_id_column_but_not_ncus(tmp_path):
    bad(write(tmp_path, "ids.csv", '"ID","Name","Score"\n"1","a","3"\n'), "not Nsight Compute CSV output")


def test_live_output_with_only_an_error(tmp_path):
    text = ("==PROF== Connected to process 5 (/tmp/ladder)\n"
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
            "Counters on the target device 0.\n"
            "==PROF== Disconnected from process 5\n")
    bad(write(tmp_path, "perm.txt", text), "ncu printed no results",
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission")


def test_live_output_with_no_kernels(tmp_path):
    text = ("==PROF== Connected to process 5 (/tmp/ladder)\nhello from the program\n"
            "==PROF== Disconnected from process 5\n==WARNING== No kernels were profiled.\n")
    bad(write(tmp_path, "none.txt", text), "no CSV results", "==WARNING== No kernels were profiled.")


# --- truncated or empty CSV ----------------------------------------------------------------------

def test_raw_cut_inside_the_header(tmp_path):
    bad(write(tmp_path, "cut.csv", RAW.read_bytes()[:100_000]), "line 1 ends inside a quoted cell", "truncated")


def test_raw_cut_inside_a_kernel_row(tmp_path):
    data = RAW.read_bytes()
    third_row = data.index(b"\n", data.index(b"\n") + 1) + 1
    bad(write(tmp_path, "cut.csv", data[: third_row + 5000]), "line 3 ends inside a quoted cell", "truncated")


def test_raw_row_shorter_than_the_header(tmp_path):
    lines = RAW.read_text().splitlines()
    lines[4] = lines[4][: lines[4].rindex(",")]  # drop the last cell, keep the line whole
    msg = bad(write(tmp_path, "short.csv", "\n".join(lines) + "\n"), "line 5 has", "truncated")
    assert "cells, header has" in msg


def test_raw_units_row_and_no_data(tmp_path):
    lines = RAW.read_text().splitlines()
    bad(write(tmp_path, "units.csv", "\n".join(lines[:2]) + "\n"), "header and a units row but no kernel rows")


def test_details_cut_mid_row(tmp_path):
    bad(write(tmp_path, "cut.csv", DETAILS.read_bytes()[:50_000]), "line 203 has 5 cells", "truncated")


def test_details_cut_after_a_value(tmp_path):
    text = DETAILS.read_text()
    end = text.index('"Duration","ms","34.31"') + len('"Duration","ms","34.31"')
    bad(write(tmp_path, "cut.csv", text[:end]), "line 7 has 15 cells", "line break", "truncated")


def test_details_cut_after_a_whole_row_is_read(tmp_path):
    text = DETAILS.read_text()
    end = text.index('"Duration","ms","34.31",') + len('"Duration","ms","34.31",')
    (k,) = load(write(tmp_path, "whole_rows.csv", text[:end]))  # every row complete: nothing is lost
    assert M.value(k, "duration") == 34_310_000
    assert len(k.metrics) == 6


def test_details_header_and_no_rows(tmp_path):
    bad(write(tmp_path, "header.csv", DETAILS.read_text().splitlines()[0] + "\n"), "no kernel rows")


# --- partial data is read, not refused ------------------------------------------------------------

def test_na_cells_are_missing_values(tmp_path):
    rows = list(csv.reader(io.StringIO(RAW.read_text())))
    rows[2][rows[0].index("gpu__time_duration.sum")] = "n/a"  # the first kernel row
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    launches = load(write(tmp_path, "na.csv", out.getvalue()))
    assert M.value(launches[0], "duration") is None
    assert M.value(launches[1], "duration") == 2_506_176
    assert M.value(launches[0], "dram_pct") == 0.042736


def test_unknown_metrics_are_kept(tmp_path):
    text = RAW.read_text().replace('"gpu__time_duration.sum"', '"gpu__time_duration_v2.sum"', 1)
    launches = load(write(tmp_path, "renamed.csv", text))
    assert launches[0].number("gpu__time_duration_v2.sum") == 34_305_472
    assert M.value(launches[0], "duration") is None  # and the table says it is missing


# --- kernel filter -------------------------------------------------------------------------------

def test_kernel_filter_that_matches_nothing():
    with pytest.raises(InputError) as e:
        load(RAW, kernel="sgemm_cublas")
    msg = str(e.value)
    assert msg == (f"{RAW}: no kernel matches --kernel 'sgemm_cublas'; kernels in the file: gemm_blocktile2d, "
                   "gemm_coalesced, gemm_tiled16, gemm_tiled16_unroll, gemm_uncoalesced")


def test_kernel_filter_that_is_not_a_regex():
    with pytest.raises(InputError, match=r"kernel '\(': not a valid regular expression"):
        load(RAW, kernel="(")


# --- files named .ncu-rep that are not reports ------------------------------------------------

def test_text_named_ncu_rep(tmp_path):
    bad(write(tmp_path, "details.ncu-rep", DETAILS.read_bytes()), "is text, not an Nsight Compute report",
        "expected a .ncu-rep")


def test_empty_ncu_rep(tmp_path):
    bad(write(tmp_path, "empty.ncu-rep", b""), "file is empty")


@needs_ncu_report
def test_random_bytes_named_ncu_rep(tmp_path):
    bad(write(tmp_path, "random.ncu-rep", b"\x01\x02" + os.urandom(5000)), "not an Nsight Compute report",
        "expected a .ncu-rep")


@needs_ncu_report
@pytest.mark.parametrize("keep", [100_000, 2_900_000])
def test_truncated_ncu_rep(tmp_path, keep):
    bad(write(tmp_path, "cut.ncu-rep", REP.read_bytes()[:keep]), "damaged or truncated Nsight Compute report")


# --- damaged copies of real captures: read, or one clear line, never a traceback -----------------

def _damaged(data: bytes, rnd) -> bytes:
    kind = rnd.randrange(4)
    if kind == 0:  # cut anywhere
        return data[: rnd.randrange(len(data))]
    if kind == 1:  # a few bytes overwritten with CSV-significant characters
        b = bytearray(data)
        for _ in range(rnd.randrange(1, 8)):
            b[rnd.randrange(len(b))] = rnd.choice(b'",\n\r0a \xff')
        return bytes(b)
    lines = data.split(b"\n")
    i = rnd.randrange(len(lines))
    if kind == 2:  # a line lost
        del lines[i]
    else:  # a line written twice, the copy cut short
        lines.insert(i, lines[i][: rnd.randrange(len(lines[i]) + 1)])
    return b"\n".join(lines)


@pytest.mark.parametrize("name,cases", [("gemm_ladder_details.csv", 25), ("gemm_ladder_raw.csv", 10),
                                        ("gemm_ladder_basic.csv", 25)])
def test_damaged_copies_never_raise_anything_but_one_line(tmp_path, name, cases):
    import random

    rnd = random.Random(name)  # fixed seed: the same damaged copies on every run
    data = (NCU_H100 / name).read_bytes()
    refused = read = reported = 0
    for i in range(cases):
        p = write(tmp_path, f"damaged{i}.csv", _damaged(data, rnd))
        try:
            launches = load(p)
        except InputError as e:
            assert "\n" not in str(e) and str(e).startswith(f"{p}: ")
            refused += 1
        else:
            assert launches and all(k.name for k in launches)
            read += 1
            reported += any(n.startswith("gemmlab: skipped") for n in launches[0].notes)
    if name == "gemm_ladder_basic.csv":
        # live output is read with what is there; the notes say what was skipped
        assert read == cases and reported > 0
    else:
        assert read and refused  # an export is refused when damaged in a way that loses data
