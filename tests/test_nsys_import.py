"""nsys stats CSV import on hand-made files (tests/fixtures/nsys/README.md says how they were made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gemmlab.errors import InputError
from gemmlab.profile import nsys
FIXTURES = Path(__file__).parent / "fixtures"

NSYS = FIXTURES / "nsys"
K2D = "sgemm2DBlocktiling(int, int, int, float, const float *, const float *, float, float *)"
KVEC = "sgemmVectorize(int, int, int, float, const float *, const float *, float, float *)"


def test_single_kern_sum_file_exact_values():
    stats = nsys.load_stats(NSYS / "cuda_gpu_kern_sum.csv")
    assert [r.kind for r in stats.reports] == [nsys.KERN_SUM]
    rows = stats.reports[0].rows
    assert [r.name for r in rows][:2] == [K2D, KVEC]  # quoted names keep their commas
    r = rows[0]
    assert (r.time_pct, r.total, r.instances, r.avg, r.med, r.min, r.max, r.stddev) == (
        55.2, 46431617.0, 10, 4643161.7, 5259999.5, 32104.0, 8890001.0, 4489300.8)
    assert r.unit == "ns"


def test_stdout_with_preamble_reads_all_five_reports_and_skips_others():
    stats = nsys.load_stats(NSYS / "nsys_stats_stdout.txt")
    kinds = [r.kind for r in stats.reports]
    assert kinds == [nsys.OSRT_SUM, nsys.API_SUM, nsys.KERN_SUM, nsys.MEM_TIME_SUM, nsys.MEM_SIZE_SUM]
    assert len(stats.skipped_tables) == 1 and stats.skipped_tables[0].endswith("Style,Range")
    api = stats.get(nsys.API_SUM)
    assert api.source_name == "cuda_api_sum"
    assert [(r.name, r.instances) for r in api.rows] == [
        ("cudaEventSynchronize", 3), ("cudaMalloc", 3), ("cudaMemcpy", 3), ("cudaLaunchKernel", 5)]
    size = stats.get(nsys.MEM_SIZE_SUM).rows[0]
    assert size.unit == "byte" and size.total == pytest.approx(201.327e6) and size.time_pct is None
    mt = stats.get(nsys.MEM_TIME_SUM).rows
    assert [r.name for r in mt] == ["[CUDA memcpy Host-to-Device]", "[CUDA memset]"]
    assert mt[1].total == 2784.0 and mt[1].stddev == 22.6


def test_old_report_names_and_columns():
    stats = nsys.load_stats(NSYS / "nsys_stats_stdout_old.txt")
    assert [(r.kind, r.source_name) for r in stats.reports] == [
        (nsys.API_SUM, "cudaapisum"), (nsys.KERN_SUM, "gpukernsum"), (nsys.MEM_TIME_SUM, "gpumemtimesum"),
        (nsys.MEM_SIZE_SUM, "gpumemsizesum"), (nsys.OSRT_SUM, "osrtsum")]
    k = stats.get(nsys.KERN_SUM).rows[0]
    assert k.name == K2D and k.med is None and k.avg == 4643161.7 and k.min == 32104.0
    size = stats.get(nsys.MEM_SIZE_SUM).rows[0]  # old sizes are KiB
    assert size.unit == "byte" and size.total == pytest.approx(196608.0 * 1024)


def test_old_and_new_kernel_tables_agree():
    new = nsys.load_stats(NSYS / "nsys_stats_stdout.txt").get(nsys.KERN_SUM).rows
    old = nsys.load_stats(NSYS / "nsys_stats_stdout_old.txt").get(nsys.KERN_SUM).rows
    assert [(r.name, r.total, r.instances, r.max) for r in new] == [(r.name, r.total, r.instances, r.max) for r in old]


def test_transitional_gpukernsum_with_current_columns():
    rows = nsys.load_stats(NSYS / "gpukernsum_2022.csv").get(nsys.KERN_SUM).rows
    assert rows[1].name == KVEC and rows[1].med == 7632010.0


def test_os_runtime_table_without_preamble_is_told_from_api_by_row_names():
    stats = nsys.load_stats(NSYS / "osrt_sum.csv")
    assert [r.kind for r in stats.reports] == [nsys.OSRT_SUM]


def test_skipped_line_gives_an_empty_report_with_the_note(tmp_path):
    text = ("Processing [r.sqlite] with [/x/reports/cuda_gpu_kern_sum.py]...\n"
            "SKIPPED: r.sqlite does not contain CUDA kernel data.\n")
    stats = nsys.parse_stats(text)
    assert stats.reports[0].kind == nsys.KERN_SUM and stats.reports[0].rows == []
    assert "does not contain CUDA kernel data" in stats.reports[0].note


def test_report_name_aliases():
    assert nsys.report_kind("gpukernsum") == nsys.KERN_SUM
    assert nsys.report_kind("cuda_gpu_mem_size_sum") == nsys.MEM_SIZE_SUM
    assert nsys.report_kind("nvtx_sum") is None


@pytest.mark.parametrize("content, expect", [
    ("hello\nworld\n", "no nsys summary table"),
    (" Time (%)  Total Time (ns)  Instances  Avg (ns)  Name\n 100.0  5  1  5.0  k\n", "--format csv"),
    ("Time (%),Total Time (ns),Instances,Avg (ns),Name\n100.0,abc,1,5.0,k\n", "expected a number"),
])
def test_bad_input_is_one_line(tmp_path, content, expect):
    p = tmp_path / "x.csv"
    p.write_text(content)
    with pytest.raises(InputError) as e:
        nsys.load_stats(p)
    assert expect in str(e.value) and "\n" not in str(e.value)


def test_binary_and_missing_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        nsys.load_stats(tmp_path / "nope.csv")
    rep = tmp_path / "r.nsys-rep"
    rep.write_bytes(b"\x00\x01binary")
    with pytest.raises(InputError, match="export it first"):
        nsys.load_stats(rep)
