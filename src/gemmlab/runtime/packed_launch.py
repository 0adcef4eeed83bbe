"""A kernel launch whose arguments are packed once: ``cuLaunchKernel`` on a parameter array built
when the launch is first made, for call paths that repeat the same launch (a model's layers).

CuPy packs a kernel's arguments on every call (about 15-20 us for the dispatch's 8-11 arguments,
three of them 128-byte tensor maps; docs/results/corpus-clusters-2026-11-29). Packed here, a
repeat is one driver call. Only what CuPy would pass by value is packed: numpy scalars and
one-element numpy arrays (a tensor map) as their bytes, CuPy arrays as their device pointer.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Optional, Sequence

import numpy as np

Launch = Callable[[int], None]  # takes the raw CUDA stream to launch on


def _raw(x: Any) -> bytes:
    data = getattr(x, "data", None)
    ptr = getattr(data, "ptr", None)
    if ptr is not None and not isinstance(x, np.ndarray):  # a CuPy array: its device pointer
        return np.uint64(ptr).tobytes()
    if isinstance(x, (np.generic, np.ndarray)):
        return np.asarray(x).tobytes()
    raise TypeError(f"cannot pack a kernel argument of type {type(x).__name__}")


def function_ptr(kernel: Any) -> int:
    """The CUfunction of a CuPy kernel: a ``RawKernel`` (what ``RawModule.get_function`` returns)
    holds it in ``.kernel``, a ``cupy.cuda.function.Function`` is it."""
    return int(getattr(kernel, "kernel", kernel).ptr)


def packed(kernel: Any, grid: Sequence[int], block: Sequence[int], smem: int,
           args: Sequence[Any]) -> Optional[Launch]:
    """The launch of ``kernel`` (a CuPy ``RawKernel`` or function: ``function_ptr``) with ``args``
    packed now; None where cuda-bindings is absent (then CuPy launches it)."""
    try:
        from cuda.bindings import driver as cu
    except ImportError:
        return None
    bufs = [ctypes.create_string_buffer(r, len(r)) for r in map(_raw, args)]
    params = (ctypes.c_void_p * len(bufs))(*(ctypes.addressof(b) for b in bufs))
    fn = cu.CUfunction(function_ptr(kernel))
    (gx, gy, gz), (bx, by, bz) = tuple(grid), tuple(block)
    address = ctypes.addressof(params)
    streams: dict[int, Any] = {}
    ok = cu.CUresult.CUDA_SUCCESS

    def launch(stream: int) -> None:
        s = streams.get(stream)
        if s is None:
            s = streams[stream] = cu.CUstream(stream)
        (err,) = cu.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, smem, s, address, 0)
        if err != ok:
            import cupy

            raise cupy.cuda.driver.CUDADriverError(int(err))

    launch.keep = (bufs, params)  # type: ignore[attr-defined]  # alive as long as the launch
    return launch
