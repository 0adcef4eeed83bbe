"""Autotune records: buckets, storage and lookup (CPU only; tuning itself is a GPU test)."""

from __future__ import annotations

import logging

from gemmlab.kernels.registry import autotune_candidates, get
from gemmlab.runtime import autotune


def test_size_bucket_rounds_up_to_powers_of_two_and_clamps():
    assert autotune.size_bucket(4096, 4096, 4096) == "m4096_n4096_k4096_vec"
    assert autotune.size_bucket(4097, 129, 257) == "m8192_n256_k512_odd"
    assert autotune.size_bucket(1, 7, 64) == "m64_n64_k64_odd"
    assert autotune.size_bucket(10**6, 20000, 16384) == "m16384_n16384_k16384_vec"


def test_the_shape_class_separates_the_vector_path_from_the_scalar_twins():
    """4095³ and 4096³ share a size bucket but not a path: a winner tuned on one is not reused for the other."""
    assert autotune.size_bucket(4095, 4095, 4095) != autotune.size_bucket(4096, 4096, 4096)
    assert autotune.shape_class(4095, 4096, 4096) == "vec"  # M does not decide the access width
    assert autotune.shape_class(4096, 4096, 77) == "odd"
    cand = autotune.registry.autotune_candidates()[0]
    for shape in ((4096, 4096, 4096), (4096, 4095, 4096), (1000, 3000, 77), (7, 8, 12)):
        assert (autotune.shape_class(*shape) == "vec") == cand.accepts(*shape), shape


def _result(winner, bucket="m4096_n4096_k4096_vec", backend="nvcc"):
    return autotune.TuneResult(device="NVIDIA H100 80GB HBM3", arch="sm_90", bucket=bucket,
                               shape=(4096, 4096, 4096), winner=winner, backend=backend,
                               median_ms={f"{winner}@{backend}": 3.0},
                               tuned_at="2026-01-01T00:00:00")


def test_store_then_lookup_by_device_arch_and_bucket(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path))
    name = autotune_candidates()[2].name
    autotune._store(_result(name))
    dev = "NVIDIA H100 80GB HBM3"
    assert autotune.lookup(4000, 3000, 4096, dev, "sm_90") == (get(name), "nvcc")  # same bucket
    assert autotune.lookup(4096, 4096, 4096, dev, "sm_80") is None
    assert autotune.lookup(4096, 4096, 4096, "NVIDIA A100", "sm_90") is None
    assert autotune.lookup(1024, 4096, 4096, dev, "sm_90") is None
    # a second bucket is added, the first kept
    other = autotune_candidates()[0].name
    autotune._store(_result(other, bucket="m1024_n1024_k1024_vec", backend="nvrtc"))
    assert autotune.lookup(1024, 1024, 1024, dev, "sm_90") == (get(other), "nvrtc")
    assert autotune.lookup(4096, 4096, 4096, dev, "sm_90") == (get(name), "nvcc")
    assert not list(tmp_path.glob("*.tmp"))


def test_stale_winner_and_corrupt_file_mean_retune(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path))
    autotune._store(_result("autotuned_no_longer_exists"))
    assert autotune.lookup(4096, 4096, 4096, "NVIDIA H100 80GB HBM3", "sm_90") is None
    autotune._store(_result(autotune_candidates()[0].name, backend="clang"))
    assert autotune.lookup(4096, 4096, 4096, "NVIDIA H100 80GB HBM3", "sm_90") is None
    (tmp_path / autotune.RECORD_FILE).write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert autotune.load_records() == {}
    assert "unreadable" in caplog.text


def test_backends_include_nvcc_only_where_installed(monkeypatch):
    from gemmlab.errors import ToolMissing
    from gemmlab.runtime import toolchain

    monkeypatch.setattr(toolchain, "find_nvcc", lambda: "/usr/local/cuda/bin/nvcc")
    assert toolchain.available_backends() == ("nvrtc", "nvcc")

    def missing():
        raise ToolMissing("nvcc not found")

    monkeypatch.setattr(toolchain, "find_nvcc", missing)
    assert toolchain.available_backends() == ("nvrtc",)
