"""The compile cache and compile-error formatting (CPU only; nvcc where present)."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from gemmlab.kernels.registry import get
from gemmlab.kernels.source import translation_unit
from gemmlab.runtime import compile as comp
from gemmlab.runtime import toolchain


class FakeCompiler:
    name = "fake"

    def __init__(self, version="1.0"):
        self.version = version
        self.calls = 0

    def compile(self, source, options, arch, name):
        self.calls += 1
        return b"\x7fELF" + f"{arch}:{len(source)}".encode()


def test_cache_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("GEMMLAB_CACHE_DIR", str(tmp_path / "x"))
    assert comp.cache_dir() == tmp_path / "x"
    monkeypatch.delenv("GEMMLAB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert comp.cache_dir() == tmp_path / "xdg" / "gemmlab" / "kernels"


def test_cache_key_covers_source_options_arch_and_compiler():
    base = comp.cache_key("src", ("-std=c++17",), "sm_90", "nvrtc:13.0")
    assert base == comp.cache_key("src", ["-std=c++17"], "sm_90", "nvrtc:13.0")
    others = {
        comp.cache_key("src2", ("-std=c++17",), "sm_90", "nvrtc:13.0"),
        comp.cache_key("src", ("-std=c++17", "-G"), "sm_90", "nvrtc:13.0"),
        comp.cache_key("src", ("-std=c++17",), "sm_80", "nvrtc:13.0"),
        comp.cache_key("src", ("-std=c++17",), "sm_90", "nvrtc:13.1"),
    }
    assert base not in others and len(others) == 4


def test_compile_cubin_caches_and_writes_atomically(tmp_path):
    fake = FakeCompiler()
    src = translation_unit([get("coalesced")])
    p1 = comp.compile_cubin(src, arch="sm_90", compiler=fake, name="k", root=tmp_path)
    p2 = comp.compile_cubin(src, arch="sm_90", compiler=fake, name="k", root=tmp_path)
    assert p1 == p2 and fake.calls == 1
    assert p1.read_bytes() == b"\x7fELF" + f"sm_90:{len(src)}".encode()
    assert p1.with_suffix(".json").is_file()
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    comp.compile_cubin(src, arch="sm_80", compiler=fake, name="k", root=tmp_path)
    comp.compile_cubin(src, arch="sm_90", compiler=FakeCompiler("2.0"), name="k", root=tmp_path)
    assert fake.calls == 2 and len(list(tmp_path.glob("*.cubin"))) == 3


def test_base_options_exclude_fast_math():
    assert "-std=c++17" in toolchain.BASE_OPTIONS
    assert not any("fast" in o for o in toolchain.BASE_OPTIONS)


def test_format_compile_error_numbers_the_lines_it_names():
    src = "\n".join(f"line{i}" for i in range(1, 21))
    msg = toolchain.format_compile_error("k", "nvrtc 13.0", "sm_90", ["-std=c++17"], src,
                                    'k.cu(10): error: identifier "x" is undefined')
    first = msg.splitlines()[0]
    assert first == "compiling k for sm_90 with nvrtc 13.0 failed (options: -std=c++17)"
    assert " 8 | line8" in msg and "10 | line10" in msg and "12 | line12" in msg
    assert "line7" not in msg and "line13" not in msg
    assert 'identifier "x" is undefined' in msg


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_nvcc_backend_compiles_caches_and_reports_errors(tmp_path):
    nv = comp.NvccCompiler()
    assert nv.version.startswith("nvcc ")
    src = translation_unit([get("coalesced")])
    path = comp.compile_cubin(src, arch="sm_90", compiler=nv, name="gemmlab_coalesced",
                              root=tmp_path)
    assert path.read_bytes()[:4] == b"\x7fELF"
    bad = src.replace("acc += A[row * K + k]", "acc += Q[row * K + k]", 1)
    with pytest.raises(toolchain.KernelCompileError) as e:
        comp.compile_cubin(bad, arch="sm_90", compiler=nv, name="bad", root=tmp_path)
    msg = str(e.value)
    assert msg.startswith("compiling bad for sm_90 with nvcc")
    assert "-std=c++17" in msg.splitlines()[0]
    assert '"Q" is undefined' in msg
    assert re.search(r"^ *\d+ \| .*acc \+= Q\[row \* K \+ k\]", msg, re.M)
