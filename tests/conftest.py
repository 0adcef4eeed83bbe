"""Shared test setup: fixture paths, and the gpu marker that skips with a stated reason."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest

# .ncu-rep fixtures are decoded afresh, never from (or into) the user's cache of decoded reports;
# tests/test_ncu_rep_speed.py turns the cache on in a temporary folder.
os.environ.setdefault("GEMMLAB_NCU_REP_CACHE", "0")

FIXTURES = Path(__file__).parent / "fixtures"
NCU_H100 = FIXTURES / "ncu" / "h100"


@functools.lru_cache(maxsize=None)
def gpu_status() -> tuple[bool, str]:
    """(available, reason) for an NVIDIA GPU usable through CuPy."""
    try:
        import cupy  # noqa: F401
    except Exception as e:  # ImportError or a broken CUDA install
        return False, f"CuPy is not importable ({type(e).__name__}: {e})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return False, f"no CUDA device ({e})"
    if n < 1:
        return False, "no CUDA device"
    return True, ""


def pytest_collection_modifyitems(config, items):
    ok, reason = gpu_status()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"GPU test: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `gemmlab ARGV`, run in-process through the real front door."""
    from gemmlab.cli import main

    try:
        main(list(argv))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def ncu_h100() -> Path:
    return NCU_H100


def have_nvcc() -> bool:
    """Whether the CUDA toolkit's nvcc is found (the nvcc resource-report tests need it)."""
    from gemmlab.errors import ToolMissing
    from gemmlab.runtime import toolchain

    try:
        toolchain.find_nvcc()
    except ToolMissing:
        return False
    return True


# nvcc runs in parallel, one translation unit and architecture per job: the compile tests are the
# slowest part of the suite, and every core a CI machine has shortens them.
NVCC_JOBS = max(2, os.cpu_count() or 1)

requires_nvcc = pytest.mark.skipif(not have_nvcc(),
                                   reason="nvcc (CUDA toolkit) not found: the resource report needs it")


@pytest.fixture(scope="session")
def emu_workdir(tmp_path_factory):
    """One folder for the CUDA emulation's g++ binaries (tests/emulate_cuda.py), shared by every
    test of the session: a binary is named by the hash of its source, and each takes seconds to
    build."""
    return tmp_path_factory.mktemp("emu")
