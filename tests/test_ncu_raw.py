"""The raw page (ncu --page raw --csv), scaled units and --print-units base, on the H100 captures."""

from __future__ import annotations

import csv
import itertools

import pytest

from conftest import NCU_H100
from gemmlab.profile import metrics as M
from gemmlab.profile.load import load
from gemmlab.profile.units import unit_scale

# (name, block, grid, registers) of the five launches, in capture order (fixtures/ncu/h100/README.md)
LADDER = [
    ("gemm_uncoalesced", (32, 8, 1), (64, 256, 1), 32),
    ("gemm_coalesced", (32, 8, 1), (64, 256, 1), 32),
    ("gemm_tiled16", (16, 16, 1), (128, 128, 1), 22),
    ("gemm_tiled16_unroll", (16, 16, 1), (128, 128, 1), 32),
    ("gemm_blocktile2d", (256, 1, 1), (16, 16, 1), 96),
]


@pytest.fixture(scope="module")
def raw():
    return load(NCU_H100 / "gemm_ladder_raw.csv")


@pytest.fixture(scope="module")
def raw_base():
    return load(NCU_H100 / "gemm_ladder_raw_base.csv")


def test_one_record_per_launch_with_identity(raw):
    assert [(k.id, k.name, k.block, k.grid) for k in raw] == [
        (i, name, block, grid) for i, (name, block, grid, _) in enumerate(LADDER)
    ]
    k = raw[0]
    assert k.demangled == "gemm_uncoalesced(const float *, const float *, float *, int, int, int)"
    assert (k.device, k.cc, k.arch, k.process, k.format) == ("0", "9.0", "sm_90", "ladder", "raw-csv")
    assert [M.value(k, "registers") for k in raw] == [r for *_, r in LADDER]


def test_scaled_units_become_base_units(raw):
    unc, tiled_unroll = raw[0], raw[3]
    # "34.305472" ms and "2.088672" ms: scaled exactly, as --print-units base prints them
    assert unc.metrics["gpu__time_duration.sum"].value == 34_305_472
    assert unc.metrics["gpu__time_duration.sum"].unit == "ns"
    assert tiled_unroll.number("gpu__time_duration.sum") == 2_088_672
    assert unc.metrics["launch__shared_mem_per_block_driver"].value == 1024  # "1.024000" Kbyte/block
    assert unc.metrics["launch__shared_mem_per_block_driver"].unit == "byte/block"
    assert unc.number("dram__cycles_elapsed.avg.per_second") == 2_619_000_000  # "2.619000" Ghz
    assert unc.metrics["dram__cycles_elapsed.avg.per_second"].unit == "hz"
    assert unc.number("dram__bytes_read.sum") == 33_912_320  # "33.912320" Mbyte
    assert unc.number("dram__bytes.sum.per_second") == 1_432_647_000  # "1.432647" Gbyte/s
    assert unc.metrics["dram__bytes.sum.per_second"].unit == "byte/s"


def test_thousands_separators(raw):
    assert raw[0].number("launch__grid_size") == 16384  # "16,384"
    assert raw[0].number("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") == 536_870_912  # "536,870,912"
    assert raw[4].number("launch__grid_size") == 256


def test_text_metrics_stay_text_and_no_data_is_missing(raw):
    k = raw[2]
    assert k.metrics["launch__cluster_scheduling_policy"].value == "PolicySpread"
    assert k.metrics["device__attribute_display_name"].value == "NVIDIA H100 80GB HBM3"
    assert k.number("device__attribute_display_name") is None
    # ncu writes "no data" for source-level metrics without samples: missing, not a string value
    assert "sass__inst_executed_register_spilling_mem_local" not in k.metrics


def test_scaled_and_base_exports_agree(raw, raw_base):
    """The same capture exported twice: same metrics, same base units, values within ncu's rounding."""
    with open(NCU_H100 / "gemm_ladder_raw.csv", newline="") as f:
        header, units = list(itertools.islice(csv.reader(f), 2))
    factor = {h: float(unit_scale(u)[1] or 1) for h, u in zip(header, units)}
    assert [k.name for k in raw] == [k.name for k in raw_base]
    compared = 0
    for a, b in zip(raw, raw_base):
        assert a.metrics.keys() == b.metrics.keys()
        for name, ma in a.metrics.items():
            mb = b.metrics[name]
            assert ma.unit == mb.unit, name
            if not ma.is_number:
                assert ma.value == mb.value, name
                continue
            # the scaled page prints 6 decimals in its unit, --print-units base 2 decimals
            tolerance = 0.5e-6 * factor[name] + 0.005
            assert abs(ma.value - mb.value) <= tolerance * (1 + 1e-9), name
            compared += 1
    assert compared == 11035


def test_short_names_resolve_on_the_raw_page(raw):
    unc, tiled, bt = raw[0], raw[2], raw[4]
    assert M.resolve(unc, "dram_pct") == ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", 0.042736)
    assert M.value(unc, "gld_sectors") / M.value(unc, "gld_requests") == pytest.approx(16.5, abs=0.01)
    assert M.value(tiled, "stall_long_scoreboard") == 2.263874
    assert M.value(bt, "waves") == 0.97
    assert M.value(bt, "replay_passes") == 38


@pytest.mark.parametrize("demangled, bare", [
    ("void ns::gemm<128>(const float *, int)", "gemm"),
    ("gemm_tiled16", "gemm_tiled16"),
    ("void native::<unnamed>::cunn_SoftMaxForwardReg<float, float, float, long, 4>(T3 *, const T1 *, T5)",
     "cunn_SoftMaxForwardReg"),
    ("native::<unnamed>::fill_reverse_indices_kernel(long *, int, cuda::IntDivider<unsigned int>)",
     "fill_reverse_indices_kernel"),
    ("void (anonymous namespace)::softmax_warp_forward<float>(float *, const float *, int)", "softmax_warp_forward"),
])
def test_bare_name_sees_through_anonymous_namespaces(demangled, bare):
    from gemmlab.profile.records import bare_name

    assert bare_name(demangled) == bare


def test_corpus_capture_names_every_kernel():
    """The H100 corpus has PyTorch kernels in anonymous namespaces: each still gets its bare name."""
    from conftest import FIXTURES

    launches = load(FIXTURES / "corpus" / "h100" / "corpus_targeted_raw.csv")
    assert len(launches) == 125
    assert all(k.name for k in launches), [k.demangled for k in launches if not k.name][:3]
    assert sum(k.name == "multi_tensor_apply_kernel" for k in launches) == 13
