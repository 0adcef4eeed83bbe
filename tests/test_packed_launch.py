"""The packed launch's argument bytes, checked without a GPU: what CuPy would pass by value."""

from __future__ import annotations

import numpy as np
import pytest

from gemmlab.runtime import packed_launch


class _FakeCupyArray:  # what the packer reads of a CuPy array: .data.ptr
    class _Mem:
        ptr = 0x7F00_1234_5600

    data = _Mem()


def test_scalars_maps_and_arrays_pack_as_cupy_passes_them():
    tmap = np.arange(16, dtype=np.uint64).view(np.dtype((np.void, 128)))
    assert packed_launch._raw(np.int32(-3)) == np.int32(-3).tobytes()
    assert packed_launch._raw(np.float32(1.25)) == np.float32(1.25).tobytes()
    assert packed_launch._raw(tmap) == np.arange(16, dtype=np.uint64).tobytes() and len(packed_launch._raw(tmap)) == 128
    assert packed_launch._raw(_FakeCupyArray()) == np.uint64(0x7F00_1234_5600).tobytes()
    with pytest.raises(TypeError, match="cannot pack"):
        packed_launch._raw(3.0)  # a Python float has no fixed width: the callers pass numpy scalars


def test_without_cuda_bindings_cupy_launches(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_bindings(name, *a, **k):
        if name.startswith("cuda"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_bindings)
    assert packed_launch.packed(object(), (1, 1, 1), (32, 1, 1), 0, (np.int32(1),)) is None


def test_the_cufunction_of_a_raw_kernel_or_a_function():
    class Function:
        ptr = 0xABC0

    class RawKernel:  # cupy.RawModule.get_function returns one of these; its Function is .kernel
        kernel = Function()

    assert packed_launch.function_ptr(RawKernel()) == packed_launch.function_ptr(Function()) == 0xABC0
