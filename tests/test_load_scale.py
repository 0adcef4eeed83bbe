"""Large exports read fast without changing what is read (issue #19, item 6).

- an exported CSV file is read a line at a time (``profile/csv_stream.py``): the same launches as the
  whole text read by ``load.parse_text``, and the same one-line error for a damaged file;
- a large raw page keeps the metric columns gemmlab reads (``needed``): never one the analysis reads,
  and the same diagnoses as all of them;
- ``units.scale_column`` gives the values ``parse_scaled`` gives, cell by cell;
- memory grows with the launches kept, not with the size of the file.

No timings are asserted here; benchmarks/load_speed.py and docs/results/load-scale-2026-11-25/ measure them.
"""

from __future__ import annotations

import csv
import gc
import io
import tracemalloc
from decimal import Decimal

import pytest
from conftest import FIXTURES, NCU_H100
from launch_factory import RecordingMetrics

from gemmlab.errors import InputError
from gemmlab.profile import csv_stream, ncu_csv, needed, units
from gemmlab.profile.load import load, parse_text, read_text
from gemmlab.profile.units import parse_scaled, scale_column, unit_scale

RAW = NCU_H100 / "gemm_ladder_raw.csv"
RAW_BASE = NCU_H100 / "gemm_ladder_raw_base.csv"
DETAILS = NCU_H100 / "gemm_ladder_details.csv"
LIVE = NCU_H100 / "gemm_ladder_basic.csv"
CORPUS_RAW = FIXTURES / "corpus" / "h100" / "corpus_full_b_raw.csv"  # NVTX cells with doubled quotes


@pytest.fixture
def vectorised(monkeypatch):
    """Every column through numpy, however few its cells (small ones are converted one by one)."""
    monkeypatch.setattr(units, "_FEW", 0)


def whole(path, metrics=None):
    """The launches (or the error) of the text read whole, as before streaming."""
    try:
        return parse_text(read_text(path), str(path), metrics)
    except InputError as e:
        return f"InputError: {e}"


def streamed(path, metrics=None):
    try:
        return load(path, metrics=metrics)
    except InputError as e:
        return f"InputError: {e}"


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def _write(path, rows, end="\n"):
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator=end).writerows(rows)
    path.write_text(out.getvalue())
    return path


def with_nvtx(tmp_path, name="nvtx.csv"):
    """The raw page with an NVTX column as ncu 2025 writes it: quotes inside a cell, doubled."""
    rows = _rows(RAW)
    rows[0].insert(4, "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg")
    rows[1].insert(4, "")
    for i, r in enumerate(rows[2:]):
        r.insert(4, f'523  "<default domain>:step {i}, "quoted":none" ')
    return _write(tmp_path / name, rows)


# --- the streamed read is the whole-text read ------------------------------------------------------

@pytest.mark.parametrize("path", [RAW, RAW_BASE, DETAILS], ids=lambda p: p.name)
def test_streamed_launches_are_the_whole_text_launches(path, vectorised):
    got = csv_stream.read_export(path, str(path))
    assert got is not None  # a plain export: read a line at a time
    assert got == whole(path)


def test_doubled_quotes_and_a_corpus_page(tmp_path, vectorised):
    paths = [with_nvtx(tmp_path)] + ([CORPUS_RAW] if CORPUS_RAW.exists() else [])
    for path in paths:
        got = csv_stream.read_export(path, str(path))
        assert got is not None and got == whole(path)
    assert got[0].metrics  # and something was read


def test_batches_and_chunks_of_any_size_give_the_same_launches(monkeypatch, tmp_path, vectorised):
    """Raw rows converted a few launches at a time (records shared across batch boundaries), details
    rows handed over a few launches at a time: the same launches as the whole text."""
    monkeypatch.setattr(ncu_csv, "BATCH_CELLS", 1)  # batches of the minimum, 16 launches
    many = _rows(RAW)
    many = many[:2] + [[str(i), *many[2 + i % 5][1:]] for i in range(37)]
    raw = _write(tmp_path / "many.csv", many)
    assert csv_stream.read_export(raw, str(raw)) == whole(raw)
    monkeypatch.setattr(csv_stream, "LONG_CHUNK_ROWS", 7)
    assert csv_stream.read_export(DETAILS, str(DETAILS)) == whole(DETAILS)


@pytest.mark.parametrize("text", [
    LIVE.read_text(),  # ncu's messages and the program's lines: live output
    RAW.read_text().replace('"gemm_tiled16(', '"gemm_\ntiled16(', 1),  # a cell holding a line break
    RAW.read_text() + RAW.read_text().split("\n", 1)[0] + "\n",  # a second header
    RAW.read_text().replace("\n", "\r\n").replace('"2","', '"2\r",', 1),  # a lone carriage return
    "\n\n" + RAW.read_text().replace('"ID",', "ID,", 1),  # re-saved unquoted
], ids=["live", "line-break-in-cell", "second-header", "carriage-return", "unquoted"])
def test_anything_but_a_plain_export_is_read_whole(tmp_path, text):
    p = tmp_path / "odd.csv"
    p.write_text(text)
    assert csv_stream.read_export(p, str(p)) is None
    assert streamed(p) == whole(p)


def _cuts(data: bytes) -> list[int]:
    """Cut points: inside the header, inside and at the ends of the last rows, after a comma, after a
    quote, and a few spread over the file."""
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    points = {100, 300, len(data) - 1, len(data) - 2, len(data) - 3}
    for e in ends[1:3] + ends[-3:] + ends[3:-3:max(1, len(ends) // 4)]:
        points |= {e, e - 1, e - 2, e + 1, e + 3, e + 7, e + 100}
    return sorted(p for p in points if 0 < p < len(data))


def _narrow(tmp_path, columns=40):
    """The raw page with its first ``columns`` columns: cheap to read, cut the same way."""
    return _write(tmp_path / "narrow.csv", [r[:columns] for r in _rows(RAW)])


@pytest.mark.parametrize("page", ["raw", "details"])
def test_a_cut_file_reads_or_fails_as_before(tmp_path, page):
    source = _narrow(tmp_path) if page == "raw" else DETAILS
    data = source.read_bytes()
    p = tmp_path / "cut.csv"
    checked = 0
    for cut in _cuts(data):
        for tail in (b"", b"\n\n  \n"):
            p.write_bytes(data[:cut] + tail)
            assert streamed(p) == whole(p), (cut, tail)
            checked += 1
    assert checked > 60


def test_a_cut_last_row_is_refused_without_reading_the_text_again(tmp_path, monkeypatch):
    data = RAW.read_bytes()
    p = tmp_path / "cut.csv"
    last = data.rindex(b"\n", 0, len(data) - 1) + 1
    monkeypatch.setattr("gemmlab.profile.load.parse_text", lambda *a: pytest.fail("read whole"))
    p.write_bytes(data[: last + 5000])  # cut inside a cell
    with pytest.raises(InputError, match=r"line 7 ends inside a quoted cell; the CSV is truncated"):
        load(p)
    p.write_bytes(data[: data.rindex(b'","', 0, len(data) - 1) + 1] + b"\n")  # cut after a cell
    with pytest.raises(InputError, match=r"line 7 has 2237 cells, header has 2238: the CSV is truncated"):
        load(p)


# --- a large raw page keeps the metrics gemmlab reads --------------------------------------------

def test_needed_columns_only_and_never_one_that_is_read():
    full, lean = load(RAW, metrics="all"), load(RAW, metrics="needed")
    for a, b in zip(full, lean):
        assert len(b.metrics) < len(a.metrics) / 3
        assert all(needed.is_needed(n) for n in b.metrics)
        assert b.metrics == {n: m for n, m in a.metrics.items() if needed.is_needed(n)}
        assert (a.id, a.name, a.block, a.grid, a.cc) == (b.id, b.name, b.block, b.grid, b.cc)


@pytest.mark.parametrize("path", [RAW, RAW_BASE], ids=lambda p: p.name)
def test_needed_columns_give_the_same_diagnoses_and_keep_what_the_rules_touch(path):
    from gemmlab.analysis.diagnose import diagnose_all

    full, lean = load(path, metrics="all"), load(path, metrics="needed")
    assert [d.to_dict() for d in diagnose_all(lean)] == [d.to_dict() for d in diagnose_all(full)]
    RecordingMetrics.touched = set()
    for k in full:
        k.metrics = RecordingMetrics(k.metrics)
    diagnose_all(full)
    present = {n for k in full for n in dict.keys(k.metrics)}
    touched = RecordingMetrics.touched & present
    assert len(touched) > 50
    assert sorted(n for n in touched if not any(n in k.metrics for k in lean)) == []


def test_which_columns_by_default(monkeypatch):
    monkeypatch.delenv("GEMMLAB_NCU_REP_METRICS", raising=False)
    assert ncu_csv.raw_keep(None, ncu_csv.AUTO_ALL_BYTES) is None  # a page of ordinary size: all
    assert ncu_csv.raw_keep(None, ncu_csv.AUTO_ALL_BYTES + 1) is needed.is_needed
    assert ncu_csv.raw_keep("all", 10**12) is None
    assert ncu_csv.raw_keep("needed", 10) is needed.is_needed
    monkeypatch.setenv("GEMMLAB_NCU_REP_METRICS", "needed")
    assert ncu_csv.raw_keep(None, 10) is needed.is_needed
    monkeypatch.setattr(ncu_csv, "AUTO_ALL_BYTES", 1000)
    monkeypatch.delenv("GEMMLAB_NCU_REP_METRICS")
    assert len(load(RAW)[0].metrics) < 600 and len(load(RAW, metrics="all")[0].metrics) > 2000


# --- units scaled a column at a time ------------------------------------------------------------

def _same_values(cells, unit):
    base, factor = unit_scale(unit)
    want = [parse_scaled(c, base, factor) for c in cells]
    got = scale_column(cells, base, factor)
    assert [(type(v), repr(v)) for v in got] == [(type(v), repr(v)) for v in want], unit
    return len(cells)


@pytest.mark.parametrize("path", [RAW, CORPUS_RAW], ids=lambda p: p.name)
def test_scale_column_is_parse_scaled_on_every_column(path, vectorised):
    if not path.exists():
        pytest.skip(f"{path} not present")
    rows = _rows(path)
    header, units, data = rows[0], rows[1], rows[2:]
    cells = sum(_same_values([r[i] for r in data], units[i]) for i in range(len(header)))
    assert cells > 10_000


@pytest.mark.parametrize("unit", ["", "ms", "us", "Kbyte", "Mbyte/s", "Ghz", "%/Kbyte", "Tbyte/second"])
def test_scale_column_on_awkward_cells(unit, vectorised):
    cells = ["1,024", "-0", "+.5", "5.", ".", "-", "+", "1e5", "1E-3", " 12", "12 ", "n/a", "N/A", "no data",
             "inf", "nan", "-inf", "1_000", "\u0661\u0662", "1.2.3", "", ",", ",5", "5,", "-,5", "2.088672",
             "34.305472", "1" * 25, "1" * 26, "9" * 30 + ".5", "0.000000000000000000000001", "12\x00", "a,1",
             "PolicySpread", "0x10", "--5", "+-5", "3.14159265358979323846264338", "1,234,567.891"]
    _same_values(cells, unit)  # with a NUL: every cell one by one
    cells.remove("12\x00")
    _same_values(cells, unit)
    _same_values(cells[::-1], unit)
    _same_values([c for c in cells if c.strip(",.+-")[:1].isdigit()], unit)


def test_scale_column_with_a_factor_that_is_not_a_power_of_ten():
    cells = ["1.5", "2,000", "n/a", "x"]
    assert scale_column(cells, "byte", Decimal("2.5")) == [parse_scaled(c, "byte", Decimal("2.5")) for c in cells]


# --- memory follows the launches kept, not the file -------------------------------------------------

def _page(path, n: int, padding: int) -> int:
    """A raw page of ``n`` launches (cycling the capture's 5): the identity columns, the first 60
    metric columns gemmlab reads, and one it does not read holding ``padding`` characters."""
    rows = _rows(RAW)
    cols = [i for i, h in enumerate(rows[0]) if h in ncu_csv.ID_COLUMNS]
    cols += [i for i, h in enumerate(rows[0]) if h not in ncu_csv.ID_COLUMNS and needed.is_needed(h)][:60]
    pad = "7" * padding
    out = [[rows[0][i] for i in cols] + ["zz__padding.sum"], [rows[1][i] for i in cols] + [""]]
    out += [[str(k)] + [rows[2 + k % 5][i] for i in cols[1:]] + [pad] for k in range(n)]
    _write(path, out)
    return path.stat().st_size


def _peak(path) -> tuple[int, list]:
    gc.collect()
    tracemalloc.start()
    try:
        launches = load(path, metrics="needed")
        return tracemalloc.get_traced_memory()[1], launches
    finally:
        tracemalloc.stop()


def test_memory_follows_the_launches_not_the_file(tmp_path):
    """2,000 launches, read twice: from a page of 1.5 MB and from the same page with a 10 KB cell of an
    unread metric in every row (22 MB). The peak is set by the launches kept; the text is never held."""
    n = 2000
    small, big = tmp_path / "small.csv", tmp_path / "big.csv"
    small_size, big_size = _page(small, n, 0), _page(big, n, 10_000)
    assert big_size > 10 * small_size
    small_peak, a = _peak(small)
    big_peak, b = _peak(big)
    assert len(a) == len(b) == n and a[-1].id == n - 1
    assert [k.metrics for k in a] == [k.metrics for k in b] and "zz__padding.sum" not in a[0].metrics
    assert small_peak < 6_000 * n  # a launch's record and its ~60 metrics, and the cells of a batch
    assert big_peak < small_peak + 2_000_000  # plus one line of text at a time
    assert big_peak < big_size / 2
