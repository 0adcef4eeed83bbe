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


def test_nvrtc_treats_gemmlab_kernels_functions_as_device_code(tmp_path):
    """NVRTC 13.0 rejects a generic lambda in device code (the persistent rungs' per-stage MMAs)
    as a host function; nvcc does not need the option, and the cache key carries it."""
    seen = {}

    class Recording(FakeCompiler):
        def compile(self, source, options, arch, name):
            seen[self.name] = tuple(options)
            return super().compile(source, options, arch, name)

    nvrtc, nvcc = Recording(), Recording()
    nvrtc.name, nvcc.name = "nvrtc", "nvcc"
    src = translation_unit([get("persistent_bf16")])
    a = comp.compile_cubin(src, arch="sm_90a", compiler=nvrtc, name="k", root=tmp_path)
    b = comp.compile_cubin(src, arch="sm_90a", compiler=nvcc, name="k", root=tmp_path)
    assert "--device-as-default-execution-space" in seen["nvrtc"]
    assert seen["nvcc"] == toolchain.BASE_OPTIONS
    assert a != b


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


# --- the cache is keyed by the compiler's exact build and by gemmlab's version --------------------

class FakeBuildCompiler(FakeCompiler):
    """A compiler that, like NVRTC, reports only major.minor as its version, and its build apart."""

    def __init__(self, version="nvrtc 13.0", build="nvrtc 13.0; libnvrtc.so.13.0.48"):
        super().__init__(version)
        self.build = build


def test_two_builds_of_one_major_minor_get_two_cache_entries(tmp_path):
    src = translation_unit([get("coalesced")])
    old = FakeBuildCompiler(build="nvrtc 13.0; /cuda/lib/libnvrtc.so.13.0.48 61000000 1")
    new = FakeBuildCompiler(build="nvrtc 13.0; /cuda/lib/libnvrtc.so.13.0.88 61000400 2")
    assert old.version == new.version
    p_old = comp.compile_cubin(src, arch="sm_90", compiler=old, name="k", root=tmp_path)
    p_new = comp.compile_cubin(src, arch="sm_90", compiler=new, name="k", root=tmp_path)
    assert p_old != p_new and old.calls == 1 and new.calls == 1  # the patch release recompiles
    assert comp.compile_cubin(src, arch="sm_90", compiler=new, name="k", root=tmp_path) == p_new
    assert new.calls == 1  # and its own entry is a hit afterwards
    import json

    meta = json.loads(p_new.with_suffix(".json").read_text())
    assert meta["compiler_build"] == "fake:" + new.build and meta["gemmlab"]


def test_another_gemmlab_version_gets_another_cache_entry(tmp_path, monkeypatch):
    import gemmlab

    src = translation_unit([get("coalesced")])
    fake = FakeBuildCompiler()
    p1 = comp.compile_cubin(src, arch="sm_90", compiler=fake, name="k", root=tmp_path)
    monkeypatch.setattr(gemmlab, "__version__", gemmlab.__version__ + ".post1")
    p2 = comp.compile_cubin(src, arch="sm_90", compiler=fake, name="k", root=tmp_path)
    assert p1 != p2 and fake.calls == 2
    assert comp.cache_key("s", (), "sm_90", "c", "0.1.0") != comp.cache_key("s", (), "sm_90", "c", "0.2.0")


def test_nvrtc_build_tells_two_libraries_of_one_version_apart(tmp_path):
    a, b = tmp_path / "a" / "libnvrtc.so.13", tmp_path / "b" / "libnvrtc.so.13"
    for p, data in ((a, b"x" * 10), (b, b"x" * 11)):
        p.parent.mkdir()
        p.write_bytes(data)
    maps = "\n".join([
        f"7f00-7f10 r-xp 00000000 08:01 1 {a}",
        f"7f10-7f20 r--p 00010000 08:01 1 {a}",
        "7f20-7f30 r-xp 00000000 08:01 2 /usr/lib/libc.so.6",
        "7f30-7f40 rw-p 00000000 00:00 0 ",
    ])
    assert comp.loaded_libraries("libnvrtc.so", maps) == [str(a)]
    build_a = comp.nvrtc_build("nvrtc 13.0", [str(a)], ["cupy 13.6.0"])
    build_b = comp.nvrtc_build("nvrtc 13.0", [str(b)], ["cupy 13.6.0"])
    assert build_a != build_b and build_a.startswith("nvrtc 13.0; ") and "cupy 13.6.0" in build_a
    assert comp.nvrtc_build("nvrtc 13.0", []) != comp.nvrtc_build("nvrtc 13.1", [])


def test_nvcc_build_is_the_whole_version_text(tmp_path):
    nvcc = tmp_path / "nvcc"
    nvcc.write_text("#!/bin/sh\n"
                    "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
                    "echo 'Built on Wed_Jul_16_07:30:01_PM_PDT_2025'\n"
                    "echo 'Cuda compilation tools, release 13.0, V13.0.48'\n"
                    "echo 'Build cuda_13.0.r13.0/compiler.36424714_0'\n")
    nvcc.chmod(0o755)
    nv = comp.NvccCompiler(str(nvcc))
    assert nv.version == "nvcc 13.0.48 (cuda_13.0.r13.0/compiler.36424714_0)"
    assert "Build cuda_13.0.r13.0/compiler.36424714_0" in nv.build and "Built on Wed_Jul_16" in nv.build
    assert comp.compiler_build(nv).startswith("nvcc:nvcc: NVIDIA (R) Cuda compiler driver | ")
