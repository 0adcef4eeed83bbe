"""The calculator commands end to end: JSON, tables, one-line errors and exit codes."""

from __future__ import annotations

import shutil
from pathlib import Path

import json

import pytest
from conftest import run_cli as run
from ncu_raw_records import NCU_H100, RAW_BASE


RAW = str(NCU_H100 / "gemm_ladder_raw.csv")  # scaled units, as ncu prints by default




def run_json(capsys, *argv: str):
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def empty_store(tmp_path, monkeypatch):
    path = tmp_path / "ceilings.json"
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(path))
    return path


def test_occupancy_json(capsys):
    d = run_json(capsys, "occupancy", "--arch", "sm_90", "--threads", "256", "--regs", "96", "--smem", "8K")
    assert (d["blocks_per_sm"], d["limiter"], d["occupancy"]) == (2, "registers", 0.25)
    assert d["limits"]["shared_mem"] == 25 and d["advice"][0]["blocks_per_sm"] == 3


def test_occupancy_table(capsys):
    code, out, _ = run(capsys, "occupancy", "--arch", "9.0", "--threads", "16x16", "--regs", "96", "--smem", "8KiB")
    assert code == 0
    assert "registers ◀" in out and "occupancy 25.0%" in out and "from 96 to 80" in out


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["--arch", "sm_42", "--threads", "256", "--regs", "32"], "known: sm_60"),
        (["--arch", "sm_90", "--threads", "2000", "--regs", "32"], "1..1024"),
        (["--arch", "sm_90", "--threads", "0", "--regs", "32"], "≥ 1"),
        (["--arch", "sm_90", "--threads", "256", "--regs", "256"], "0..255"),
        (["--arch", "sm_90", "--threads", "256", "--regs", "32", "--smem", "228K"], "opt-in maximum"),
        (["--arch", "sm_90", "--threads", "256", "--regs", "32", "--smem", "8 bananas"], "K = 1024"),
        (["--threads", "256"], "missing --arch, --regs"),
        (["--rung", "naive"], "--rung needs --arch"),
    ],
)
def test_occupancy_bad_input_is_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, "occupancy", *argv)
    assert code == 2 and out == ""
    assert err.startswith("gemmlab: error: ") and err.count("\n") == 1 and fragment in err


def test_occupancy_rung_unknown_name_is_an_input_error(capsys):
    code, _, err = run(capsys, "occupancy", "--arch", "sm_90", "--rung", "naive")
    assert code == 2 and err.startswith("gemmlab: error:") and "naive_uncoalesced" in err


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc for the resource report")
def test_occupancy_rung_from_the_resource_report(capsys):
    d = run_json(capsys, "occupancy", "--arch", "sm_90", "--rung", "blocktile_2d")
    # 256 threads and 8 KiB of static shared memory (two 128x8 fp32 tiles) are the rung's design;
    # registers come from ptxas, so only sane bounds are fixed, and blocks/SM must be the least limit.
    assert d["threads_per_block"] == 256 and d["smem_per_block"] == 2 * 128 * 8 * 4
    assert 32 <= d["regs_per_thread"] <= 255
    assert d["blocks_per_sm"] == min(d["limits"].values())


def test_occupancy_from_capture_agrees_with_ncu(capsys):
    rows = run_json(capsys, "occupancy", "--from-capture", RAW)
    assert [r["kernel"] for r in rows] == [
        "gemm_uncoalesced", "gemm_coalesced", "gemm_tiled16", "gemm_tiled16_unroll", "gemm_blocktile2d"]
    assert all(r["ncu_agrees"] for r in rows)
    assert [r["blocks_per_sm"] for r in rows] == [8, 8, 8, 8, 2]
    assert all(r["ncu_agrees"] for r in run_json(capsys, "occupancy", "--from-capture", str(RAW_BASE)))
    code, out, _ = run(capsys, "occupancy", "--from-capture", RAW, "--kernel", "blocktile")
    assert code == 0 and "gemm_blocktile2d" in out and "gemm_tiled16" not in out
    code, _, err = run(capsys, "occupancy", "--from-capture", RAW, "--kernel", "nope")
    assert code == 2 and "no kernel" in err and "gemm_coalesced" in err


def test_waves(capsys):
    (d,) = run_json(capsys, "waves", "--grid", "64x256", "--blocks-per-sm", "8", "--sms", "132")
    assert d["waves"] == pytest.approx(16384 / 1056) and d["tail_cost_pct"] == pytest.approx(6.25)
    (d,) = run_json(capsys, "waves", "--gpu", "h100", "--grid", "16x16", "--threads", "256", "--regs", "96",
                    "--smem", "8K")
    assert (d["sm_count"], d["blocks_per_sm"], round(d["waves"], 2)) == (132, 2, 0.97)
    rows = run_json(capsys, "waves", "--from-capture", RAW)
    assert [round(r["waves"], 2) for r in rows] == [15.52] * 4 + [0.97]
    code, out, _ = run(capsys, "waves", "--grid", "100", "--blocks-per-sm", "4", "--sms", "132")
    assert code == 0 and "get no block" in out
    code, _, err = run(capsys, "waves", "--grid", "100")
    assert code == 2 and "--sms" in err


def test_waves_in_clusters(capsys):
    # 33 clusters of 4 at one block an SM on 132 SMs: the H100's and H200's 30 at once are known
    (d,) = run_json(capsys, "waves", "--grid", "132", "--blocks-per-sm", "1", "--sms", "132", "--cluster", "4")
    assert (d["clusters_at_once"], d["blocks_per_wave"], d["tail_blocks"]) == (30, 120, 12)
    (d,) = run_json(capsys, "waves", "--grid", "128", "--blocks-per-sm", "1", "--sms", "132", "--cluster", "8",
                    "--clusters-at-once", "16")
    assert (d["blocks_per_wave"], d["waves"]) == (128, 1.0)
    code, _, err = run(capsys, "waves", "--grid", "132", "--blocks-per-sm", "1", "--sms", "114", "--cluster", "4")
    assert code == 2 and "--clusters-at-once" in err
    code, _, err = run(capsys, "waves", "--grid", "130", "--blocks-per-sm", "1", "--sms", "132", "--cluster", "4")
    assert code == 2 and "not a whole number of clusters of 4" in err
    code, _, err = run(capsys, "waves", "--grid", "132", "--blocks-per-sm", "1", "--sms", "132",
                       "--clusters-at-once", "30")
    assert code == 2 and "needs --cluster" in err
    code, _, err = run(capsys, "waves", "--from-capture", RAW, "--cluster", "2")
    assert code == 2 and "drop the other options" in err


def test_banks(capsys):
    d = run_json(capsys, "banks", "tid * 32")
    assert d["conflict_way"] == 32 and d["padding"]["padded_stride"] == 33 and d["padding"]["conflict_way"] == 1
    d = run_json(capsys, "banks", "As[tid][k]", "--row-length", "32", "--var", "k=3")
    assert d["conflict_way"] == 32 and len(d["lanes"]) == 32
    code, out, _ = run(capsys, "banks", "(tid % 16) * 16 + tid / 16", "--lanes")
    assert code == 0 and "8-way" in out and "padded" in out
    code, _, err = run(capsys, "banks", "open('x')")
    assert code == 2 and err.count("\n") == 1 and "not allowed" in err
    code, _, err = run(capsys, "banks", "tid", "--bytes", "3")
    assert code == 2 and "--bytes 3" in err


def test_roofline_analytic_on_spec_ceilings(capsys, empty_store):
    d = run_json(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", "2.69", "--gpu", "h100")
    assert d["ceilings"]["source"] == "spec" and d["ceilings"]["gpu"] == "NVIDIA H100 SXM5"
    (p,) = d["points"]
    assert p["achieved_flops"] == pytest.approx(2 * 4096**3 / 2.69e-3) and p["bound"] == "compute"
    code, _, err = run(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", "2.69")
    assert code == 2 and "no ceilings" in err and "h100-sxm" in err


def test_roofline_prefers_measured_ceilings(capsys, empty_store):
    from test_ceilings import FakeBackend

    from gemmlab.bench import ceilings as c

    c.save_measurement(c.measure(FakeBackend()), empty_store)
    d = run_json(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", "2.69", "--gpu", "h100")
    assert d["ceilings"]["source"] == "measured" and d["ceilings"]["gpu"] == "NVIDIA H100 80GB HBM3"
    d = run_json(capsys, "roofline", "--shape", "4096,4096,4096", "--ms", "2.69", "--gpu", "h100", "--ceilings", "spec")
    assert d["ceilings"]["source"] == "spec"


def test_roofline_from_capture_and_plot(capsys, empty_store, tmp_path):
    plot = tmp_path / "roof.png"
    d = run_json(capsys, "roofline", "--from-capture", RAW, "--plot", str(plot))
    assert d["ceilings"]["source"] == "ncu" and len(d["points"]) == 5 and plot.exists()
    assert all(p["source"] == "ncu" for p in d["points"])
    code, _, err = run(capsys, "roofline", "--from-capture", RAW, "--plot", str(plot))
    assert code == 2 and "--force" in err
    d = run_json(capsys, "roofline", "--from-capture", RAW, "--shape", "2048,2048,2048", "--plot", str(plot), "--force")
    assert all(p["source"] == "analytic" for p in d["points"])
    assert d["points"][0]["dram_bytes"] == 4 * 3 * 2048**2


def test_ceilings_listing(capsys, empty_store):
    code, out, _ = run(capsys, "ceilings")
    assert code == 0 and "No measured ceilings" in out
    assert run_json(capsys, "ceilings") == []
    keys = [g["key"] for g in run_json(capsys, "ceilings", "--spec")]
    assert {"h100-sxm", "h200", "a100-80gb", "a6000", "rtx4090", "rtx5060", "a4000", "mx330"} <= set(keys)


def test_ceilings_measure_without_a_gpu(capsys, empty_store):
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is importable here: --measure would measure (covered by tests/gpu)")
    except ImportError:
        pass
    code, _, err = run(capsys, "ceilings", "--measure")
    assert code == 3 and err.startswith("gemmlab: error: CuPy is not importable")
    assert not empty_store.exists()


def test_missing_capture_is_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "occupancy", "--from-capture", str(tmp_path / "none.csv"))
    assert code == 2 and err.count("\n") == 1 and "no such file" in err


def test_capture_mode_refuses_manual_options(capsys):
    code, _, err = run(capsys, "occupancy", "--from-capture", RAW, "--regs", "32")
    assert code == 2 and "drop" in err
    code, _, err = run(capsys, "waves", "--from-capture", RAW, "--grid", "10")
    assert code == 2 and "drop" in err


def test_argument_parsers():
    from gemmlab.commands.calc_parse import parse_count, parse_gemm, parse_size
    from gemmlab.errors import InputError
    from gemmlab.hardware import parse_arch_name

    assert [parse_size(s) for s in ("8192", "8K", "8KiB", "48KB", "1.5k", "1M", "0")] == [
        8192, 8192, 8192, 49152, 1536, 1 << 20, 0]
    for bad in ("0.3K", "-1K", "8Q", ""):
        with pytest.raises(InputError):
            parse_size(bad)
    assert parse_count("(16, 16, 1)", "--block") == 256 and parse_count("32x8", "--block") == 256
    assert parse_gemm("4096") == (4096, 4096, 4096) and parse_gemm("128x256x64") == (128, 256, 64)
    with pytest.raises(InputError):
        parse_gemm("1x2")
    assert [parse_arch_name(s) for s in ("sm_90", "sm90a", "9.0", "90", "compute_86", "12.0", "sm_100")] == [
        "sm_90", "sm_90", "sm_90", "sm_90", "sm_86", "sm_120", "sm_100"]
    assert parse_arch_name("hopper") is None


@pytest.mark.parametrize("rung", ["bank_conflict_free", "warptiling", "double_buffered", "autotuned"])
def test_occupancy_agrees_with_ncu_on_the_ladder_captures(capsys, rung):
    """The top rungs use dynamic shared memory and large register counts: every limit ncu reported
    (registers, shared memory with the carve-out it picked, warps, blocks, barriers) must match."""
    pytest.importorskip("ncu_report")
    rep = Path(__file__).parent / "fixtures" / "ncu" / "h100" / f"ladder_{rung}_2048_full.ncu-rep"
    (row,) = run_json(capsys, "occupancy", "--from-capture", str(rep))
    assert row["ncu_agrees"] and row["limiter"] == "registers"
    assert row["blocks_per_sm"] == (3 if rung == "autotuned" else 2)
