"""What ncu --csv APP prints: ncu's messages, the program's output and the CSV on one stream."""

from __future__ import annotations

import pytest

from conftest import NCU_H100
from gemmlab.profile import metrics as M
from gemmlab.profile.load import load, profiler_notes

BASIC = NCU_H100 / "gemm_ladder_basic.csv"
NOTES = [
    "==WARNING== Note: Running with unmodified GPU clocks. If not controlled otherwise, profiling results "
    "may be inconsistent.",
    "==PROF== Connected to process 2195 (/tmp/ladder)",
    "==PROF== Disconnected from process 2195",
]


@pytest.fixture(scope="module")
def basic():
    return load(BASIC)


def test_live_output_of_the_default_sections(basic):
    assert [(k.id, k.name) for k in basic] == [
        (0, "gemm_uncoalesced"), (1, "gemm_coalesced"), (2, "gemm_tiled16"), (3, "gemm_tiled16_unroll"),
        (4, "gemm_blocktile2d")]
    assert {k.format for k in basic} == {"live-csv"}
    unc = basic[0]
    assert unc.notes == NOTES
    assert unc.process == "ladder"
    assert M.value(unc, "duration") == 34_566_848  # this run printed base units: "34,566,848" ns
    assert M.value(unc, "smem_config") == 32_768  # "32,768" byte
    assert M.value(unc, "sm_clock") == 1_979_949_835.17  # the GPC clock, "1,979,949,835.17" hz
    assert M.value(basic[4], "occ_limit_registers") == 2
    assert [r.name for r in basic[4].rules] == ["SOLBottleneck", "LaunchConfiguration", "TheoreticalOccupancy"]


def test_default_sections_leave_the_stall_metrics_missing(basic):
    # the incomplete input a public analyzer called "no bottleneck, high confidence": the
    # records must say these are absent, not zero
    for short in ("warp_cpi", "stall_long_scoreboard", "issue_active", "gld_sectors", "smem_ld_conflicts"):
        assert M.value(basic[0], short) is None, short
    assert len(basic[0].metrics) == 49


def test_program_output_between_csv_rows_is_skipped(tmp_path, basic):
    lines = BASIC.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    noisy = (lines[: header + 3]
             + ["checking results...", '"result","ok"', '"42","x"', "max error 0.0"]
             + lines[header + 3:])
    p = tmp_path / "noisy.txt"
    p.write_text("\n".join(noisy) + "\n")
    launches = load(p)
    assert [(k.id, k.name, k.metrics) for k in launches] == [(k.id, k.name, k.metrics) for k in basic]
    # a line that starts like an ncu row but is not one is reported in the notes
    assert launches[0].notes == NOTES + [
        f"gemmlab: skipped line {header + 6} has 2 cells; a metric row has 15 to 20"]


def test_output_cut_off_keeps_what_is_there(tmp_path):
    text = BASIC.read_text()
    cut = text[: text.rindex('"Total SMSP Elapsed Cycles","cycle","720,6')]  # mid-cell of the last row
    cut += '"Total SMSP Elapsed Cycles","cycle","720,6'
    p = tmp_path / "cut.txt"
    p.write_text(cut)
    launches = load(p)
    assert len(launches) == 5
    assert "smsp__cycles_elapsed.sum" not in launches[4].metrics
    assert M.value(launches[4], "duration") == 689_760
    assert launches[4].notes[-1].startswith("gemmlab: skipped line 262: it ends inside a quoted cell")


def test_two_processes_two_headers(tmp_path):
    text = BASIC.read_text()
    second = text.replace("2195", "2301")
    p = tmp_path / "two.txt"
    p.write_text(text + second)
    launches = load(p)
    assert [k.id for k in launches] == [0, 1, 2, 3, 4] * 2  # grouped by process and ID
    assert launches[0].metrics == launches[5].metrics
    assert len(launches[0].notes) == 6


def test_live_raw_page(tmp_path):
    """Hand-assembled from the exported raw page: ncu --csv --page raw prints the same rows among
    its messages and the program's output."""
    export = (NCU_H100 / "gemm_ladder_raw.csv").read_text()
    p = tmp_path / "live_raw.txt"
    p.write_text("==PROF== Connected to process 1889 (/tmp/ladder)\n"
                 "zoo done (all) on NVIDIA H100 80GB HBM3, 132 SMs\n"
                 "==PROF== Disconnected from process 1889\n" + export)
    live = load(p)
    exported = load(NCU_H100 / "gemm_ladder_raw.csv")
    assert {k.format for k in live} == {"live-raw-csv"}
    assert [(k.id, k.name, k.metrics) for k in live] == [(k.id, k.name, k.metrics) for k in exported]
    assert live[0].notes[0] == "==PROF== Connected to process 1889 (/tmp/ladder)"


def test_profiler_notes_for_the_profile_command():
    text = ('==PROF== Connected to process 5 (/tmp/a)\n'
            '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance '
            'Counters on the target device 0.\n'
            'program output\n'
            '==PROF== Disconnected from process 5\n')
    notes = profiler_notes(text)
    assert len(notes) == 3
    assert "ERR_NVGPUCTRPERM" in notes[1]


def test_a_stray_quote_does_not_swallow_the_rest(tmp_path, basic):
    lines = BASIC.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    # the program prints an unbalanced quote before the CSV, and one ncu row lost a closing quote
    lines.insert(header, 'He said "hello')
    damaged = header + 5  # 0-based index of an ncu metric row after the insertion
    assert lines[damaged].endswith('",')
    lines[damaged] = lines[damaged][:-2] + ","  # "98.11", → "98.11,
    p = tmp_path / "quotes.txt"
    p.write_text("\n".join(lines) + "\n")
    launches = load(p)
    assert len(launches) == 5
    assert launches[0].notes[-1] == f"gemmlab: skipped line {damaged + 1}: not a valid CSV row (a quoted cell is not closed)"
    lost = set(basic[0].metrics) - set(launches[0].metrics)
    assert len(lost) == 1  # only the damaged row's metric is missing
    assert launches[1].metrics == basic[1].metrics


def test_a_metric_name_ncu_lacks_reads_absent_not_an_error():
    """A name the GPU or ncu does not have (a Hopper-only pipe on an A100; here a made-up name on the
    H200, docs/results/corpus-clusters-2026-11-29 run 2): ncu exits 0 and prints n/a for it, so one
    collection serves every GPU and the analyzer lists that evidence as missing."""
    (k,) = load(NCU_H100.parent / "h200" / "names_ncu_lacks_live.csv")
    assert k.name == "gemmlab_probe" and M.value(k, "duration") == 2592
    assert k.metrics.get("smsp__pcsamp_warps_issue_stalled_no_such") is None
    assert M.value(k, "pipe_tensor_gmma_pct") == 0
