"""Reading a .ncu-rep in a child process gives the same records (and the same errors) as in-process."""

from pathlib import Path

import pytest

from gemmlab.errors import InputError
from gemmlab.profile import ncu_rep_isolated
from gemmlab.profile.load import load

pytest.importorskip("ncu_report")
REP = Path(__file__).parent / "fixtures" / "ncu" / "h100" / "gemm_tiled16.ncu-rep"


def test_child_process_reads_the_same_records(monkeypatch):
    monkeypatch.setenv("GEMMLAB_NCU_REP_ISOLATE", "0")
    assert not ncu_rep_isolated.isolate()
    direct = load(REP)
    monkeypatch.delenv("GEMMLAB_NCU_REP_ISOLATE")
    assert ncu_rep_isolated.isolate()  # the default
    child = load(REP)
    assert [k.name for k in child] == [k.name for k in direct] == ["gemm_tiled16"]
    same = lambda a, b: a == b or (a.value != a.value and b.value != b.value and a.unit == b.unit)  # NaN == NaN
    assert child[0].metrics.keys() == direct[0].metrics.keys()
    assert all(same(child[0].metrics[n], m) for n, m in direct[0].metrics.items())
    assert child[0].rules == direct[0].rules
    assert (child[0].block, child[0].grid, child[0].cc) == (direct[0].block, direct[0].grid, direct[0].cc)


def test_child_process_errors_come_back_as_one_line(monkeypatch, tmp_path):
    bad = tmp_path / "bad.ncu-rep"
    bad.write_bytes(b"NVR\x00" + bytes(range(256)) * 4)
    monkeypatch.delenv("GEMMLAB_NCU_REP_ISOLATE", raising=False)
    with pytest.raises(InputError, match="bad.ncu-rep"):
        load(bad)
