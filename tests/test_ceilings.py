"""Ceilings: the measurement arithmetic with a fake GPU, and the JSON store."""

from __future__ import annotations

import json
import random
import statistics
from datetime import datetime, timezone

import pytest

from gemmlab.bench import ceilings as c
from gemmlab.errors import InputError, UserError


class FakeBackend:
    """A GPU with a seeded timer: SGEMM and copy durations scatter around set medians."""

    def __init__(self, free=80 * 2**30, gemm_s=0.0213, copy_s=0.00072, seed=7, name="NVIDIA H100 80GB HBM3"):
        self.free, self.gemm_s, self.copy_s, self.name = free, gemm_s, copy_s, name
        self.rng = random.Random(seed)
        self.prepared: list[tuple[str, int]] = []
        self.timed: list[tuple[str, int]] = []
        self.released = 0

    def device_name(self):
        return self.name

    def device_info(self):
        return {"cc": "9.0", "sm_count": 132, "software": {"fake": 1}}

    def free_bytes(self):
        return self.free

    def prepare_gemm(self, n):
        self.prepared.append(("gemm", n))
        return "gemm"

    def prepare_copy(self, nbytes):
        self.prepared.append(("copy", nbytes))
        return "copy"

    def time_runs(self, fn, runs):
        self.timed.append((fn, runs))
        base = self.gemm_s if fn == "gemm" else self.copy_s
        return [base * (1 + self.rng.uniform(-0.02, 0.02)) for _ in range(runs)]

    def release(self):
        self.released += 1


FIXED_NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=timezone.utc)


def test_measure_computes_flops_and_bandwidth_from_medians():
    be = FakeBackend()
    m = c.measure(be, runs=9, now=lambda: FIXED_NOW)
    assert be.prepared == [("gemm", 8192), ("copy", 2**30)]
    assert be.timed == [("gemm", 2), ("gemm", 9), ("copy", 2), ("copy", 9)]  # warm-up, then timed runs
    assert m.fp32_flops == 2 * 8192**3 / statistics.median(m.gemm_seconds)
    assert m.copy_bytes_per_s == 2 * 2**30 / statistics.median(m.copy_seconds)  # read + write
    assert len(m.gemm_seconds) == 9 and m.timestamp == "2026-11-21T12:00:00+00:00"
    assert m.fp32_flops == pytest.approx(51.6e12, rel=0.03)  # 2·8192³ / 21.3 ms
    assert (m.gpu, m.cc, m.sm_count) == ("NVIDIA H100 80GB HBM3", "9.0", 132)
    assert be.released >= 1


def test_gemm_size_shrinks_to_fit_memory():
    # 8192² × 4 B × 3 = 768 MiB > 80 % of 900 MiB; 4096 needs 192 MiB.
    assert c.choose_gemm_n(900 * 2**20) == 4096
    with pytest.raises(UserError, match="too little"):
        c.choose_gemm_n(10 * 2**20)


def test_measure_refuses_meaningless_settings():
    with pytest.raises(InputError, match="at least 3"):
        c.measure(FakeBackend(), runs=2)
    with pytest.raises(InputError, match="1024 MiB"):
        c.measure(FakeBackend(), copy_bytes=2**20)
    with pytest.raises(UserError, match="two 1 GiB"):
        c.measure(FakeBackend(free=2 * 2**30))


def test_store_keeps_history_and_replaces_latest(tmp_path):
    path = tmp_path / "sub" / "ceilings.json"
    first = c.measure(FakeBackend(seed=1), now=lambda: FIXED_NOW)
    second = c.measure(FakeBackend(seed=2), now=lambda: FIXED_NOW.replace(hour=13))
    other = c.measure(FakeBackend(name="NVIDIA RTX A6000", gemm_s=0.04), now=lambda: FIXED_NOW)
    for m in (first, second, other):
        c.save_measurement(m, path)
    data = json.loads(path.read_text())
    h100 = data["gpus"]["NVIDIA H100 80GB HBM3"]
    assert [e["timestamp"] for e in h100["history"]] == [first.timestamp, second.timestamp]
    assert h100["latest"] == second.to_dict()
    assert c.latest_for("NVIDIA H100 80GB HBM3", path) == second
    assert c.latest_for("h100", path) == second  # the spec table's key for the same product
    assert c.latest_for("a6000", path) == other
    assert c.latest_for("h200", path) is None
    assert {m.gpu for m in c.stored(path)} == {"NVIDIA H100 80GB HBM3", "NVIDIA RTX A6000"}
    assert c.CeilingMeasurement.from_dict(json.loads(json.dumps(second.to_dict()))) == second


def test_store_rejects_foreign_files(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a gemmlab ceilings store"):
        c.load_store(bad)
    bad.write_text("{not json")
    with pytest.raises(InputError, match="not a readable"):
        c.stored(bad)
    with pytest.raises(InputError):
        c.save_measurement(c.measure(FakeBackend()), bad)
    assert bad.read_text() == "{not json"  # nothing a user saved is overwritten


def test_default_store_path(monkeypatch, tmp_path):
    monkeypatch.delenv("GEMMLAB_CEILINGS", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert c.default_store_path() == tmp_path / "gemmlab" / "ceilings.json"
    monkeypatch.setenv("GEMMLAB_CEILINGS", str(tmp_path / "c.json"))
    assert c.default_store_path() == tmp_path / "c.json"


def test_summarize():
    s = c.summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s["median"] == 3.0 and s["q1"] < s["median"] < s["q3"]
