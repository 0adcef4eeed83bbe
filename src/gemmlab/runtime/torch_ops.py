"""gemmlab's tensor-core dispatch on PyTorch tensors: try its GEMMs inside a model.

    from gemmlab.runtime.torch_ops import mm, scaled_mm, plan

    y = mm(x, w)                            # bf16: x (M, K) @ w (K, N), fp32 accumulate, bf16 out
    y = scaled_mm(x8, w8.t(), 0.5, 2.0)     # e4m3: torch._scaled_mm's layout, bf16 out
    plan(x, w)                              # which kernel runs at this shape, and why

``mm`` is ``torch.mm`` for 2-D bfloat16 tensors, through ``dispatch_bf16``. ``scaled_mm`` is
``torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)`` for float8_e4m3fn with
per-tensor scales, through ``dispatch_fp8``: A row-major (M, K), B column-major (K, N) - the
transpose of a row-major (N, K) matrix such as an ``nn.Linear`` weight, so ``scaled_mm(x, w.t())``
is ``F.linear``. The kernels read and write PyTorch's memory in place (no copy) and run on
PyTorch's current stream of the operands' device, so they order with the model's other work.

The first call at a shape compiles its kernels (seconds; cached on disk afterwards) and encodes
its tensor maps; later calls only launch. A prepared shape is kept per device (the last
``CACHE_SIZE``). Each prepared shape owns one split-K workspace: run one shape on one stream at a
time. Scales given as tensors are read with ``.item()``, which waits for the GPU; pass floats to
keep a call asynchronous.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Optional, Union

from gemmlab.errors import InputError

CACHE_SIZE = 64  # prepared shapes kept per process (each holds compiled kernels, maps, workspace)
_PREPARED: "OrderedDict[tuple, Any]" = OrderedDict()

Scale = Union[float, int, Any]  # a number or a one-element tensor


_MODULES: dict[str, Any] = {}  # torch and cupy once imported: an import statement costs ~0.5 us a call


def _torch():
    torch = _MODULES.get("torch")
    if torch is None:
        try:
            import torch
        except ImportError as e:  # pragma: no cover - torch is what this module is for
            raise InputError(f"gemmlab.runtime.torch_ops needs PyTorch: {e}") from None
        _MODULES["torch"] = torch
    return torch


def _cupy():
    cupy = _MODULES.get("cupy")
    if cupy is None:  # a missing CuPy is gemmlab's one-line ToolMissing, not an ImportError
        from gemmlab.runtime.device import require_gpu

        cupy = _MODULES["cupy"] = require_gpu()
    return cupy


def _check_matrix(label: str, t: Any, dtype: Any, dtype_word: str) -> None:
    torch = _torch()
    if not isinstance(t, torch.Tensor):
        raise InputError(f"{label}: expected a torch.Tensor, got {type(t).__name__}")
    if t.dtype != dtype:
        raise InputError(f"{label}: expected dtype {dtype_word}, got {t.dtype}")
    if t.dim() != 2:
        raise InputError(f"{label}: expected a 2-D matrix, got shape {tuple(t.shape)}")
    if not t.is_cuda:
        raise InputError(f"{label}: expected a CUDA tensor, got one on {t.device}")


def _out(out: Optional[Any], M: int, N: int, a: Any, b: Any) -> Any:
    """``out``, checked, or a new (M, N) bf16 tensor on ``a``'s device."""
    torch = _torch()
    if out is None:
        return torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    _check_matrix("out", out, torch.bfloat16, "torch.bfloat16")
    if tuple(out.shape) != (M, N):
        raise InputError(f"out: expected shape ({M}, {N}), got {tuple(out.shape)}")
    if not out.is_contiguous():
        raise InputError("out: expected a contiguous (row-major) tensor")
    if out.get_device() != a.get_device():
        raise InputError(f"out: expected a tensor on {a.device}, got one on {out.device}")
    lo = out.data_ptr()
    hi = lo + out.numel() * out.element_size()
    for t in (a, b):  # contiguous (or, fp8's b, the transpose of contiguous): numel x size bytes
        t_lo = t.data_ptr()
        if t_lo < hi and lo < t_lo + t.numel() * t.element_size():
            raise InputError("out: shares memory with an input; give it its own storage")
    return out


def _scale(label: str, s: Scale) -> float:
    torch = _torch()
    if isinstance(s, torch.Tensor):
        if s.numel() != 1:
            raise InputError(f"{label}: expected one number (a per-tensor scale), got a tensor of shape "
                             f"{tuple(s.shape)}")
        s = s.item()
    try:
        v = float(s)
    except (TypeError, ValueError):
        raise InputError(f"{label}: expected a number, got {type(s).__name__}") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise InputError(f"{label}: expected a finite number, got {v}")
    return v


def _prepared(dtype: str, M: int, N: int, K: int, device_index: int) -> Any:
    key = (dtype, M, N, K, device_index)
    run = _PREPARED.get(key)
    if run is None:
        from gemmlab.kernels import registry
        from gemmlab.runtime.dispatch_tc_gemm import TcDispatchedGemm

        run = TcDispatchedGemm(registry.get(f"dispatch_{dtype}"), M, N, K)
        _PREPARED[key] = run
        while len(_PREPARED) > CACHE_SIZE:
            _PREPARED.popitem(last=False)
    else:
        _PREPARED.move_to_end(key)
    return run


# CuPy views of PyTorch memory, by (pointer, rows, columns, element bytes, device): a model calls with
# the same weights and, through PyTorch's caching allocator, mostly the same activation addresses.
# A view owns nothing (it is used only while the call's tensors are alive), so keeping it keeps no
# memory alive. DLPack would build three arrays a call (~25 us each, measured: r4 and r5 of
# docs/results/corpus-clusters-2026-11-29).
_VIEWS: "OrderedDict[tuple, Any]" = OrderedDict()
_VIEW_CACHE = 256
_STREAMS: dict[tuple[int, int], Any] = {}


def _view(cupy: Any, t: Any, index: int) -> Any:
    rows, cols = t.shape
    eb = t.element_size()
    key = (t.data_ptr(), rows, cols, eb, index)
    v = _VIEWS.get(key)
    if v is None:
        mem = cupy.cuda.UnownedMemory(t.data_ptr(), max(1, rows * cols * eb), None, index)
        kind = cupy.uint16 if eb == 2 else cupy.uint8
        v = cupy.ndarray((rows, cols), kind, cupy.cuda.MemoryPointer(mem, 0))
        _VIEWS[key] = v
        if len(_VIEWS) > _VIEW_CACHE:
            _VIEWS.popitem(last=False)
    return v


def _raw_stream(torch: Any, index: int) -> int:
    """PyTorch's current stream on device ``index``: the raw handle."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)  # a pointer, without a Stream object
    return raw(index) if raw is not None else torch.cuda.current_stream(index).cuda_stream


def _stream(cupy: Any, handle: int, index: int) -> Any:
    """The raw stream ``handle`` of device ``index`` as a CuPy stream (one object per raw stream)."""
    s = _STREAMS.get((index, handle))
    if s is None:
        try:  # the CUDA stream protocol (CuPy 14 deprecates ExternalStream)
            s = cupy.cuda.Stream.from_external(_RawStream(handle))
        except (AttributeError, TypeError, ValueError):
            s = cupy.cuda.ExternalStream(handle, index)
        _STREAMS[(index, handle)] = s
    return s


class _RawStream:
    """A raw CUDA stream handle, offered through the CUDA stream protocol."""

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, self.handle)


def _launch(dtype: str, a: Any, b: Any, out: Any, M: int, N: int, K: int, alpha: float) -> None:
    """Run the dispatch on PyTorch's current stream: A (M, K), B (K, N; bf16 row-major, fp8
    column-major - the rung takes it as N x K row-major, the same memory), C = out."""
    cupy, torch = _cupy(), _torch()
    index = a.get_device()
    if cupy.cuda.runtime.getDevice() != index:  # entering a device costs more than asking
        with cupy.cuda.Device(index):
            _launch(dtype, a, b, out, M, N, K, alpha)
        return
    run = _prepared(dtype, M, N, K, index)
    stream = _raw_stream(torch, index)
    if run.repeat(a.data_ptr(), b.data_ptr(), out.data_ptr(), alpha, 0.0, stream):
        return  # the pointers and scale of a call before: one driver call, no CuPy view or stream
    b_rows = b.t() if dtype == "fp8" else b
    with _stream(cupy, stream, index):
        run(_view(cupy, a, index), _view(cupy, b_rows, index), _view(cupy, out, index), alpha, 0.0)


def _pair(a: Any, b: Any, dtype: Any, word: str) -> tuple[int, int, int]:
    """(M, N, K) of a (M, K) @ b (K, N) after the checks both entry points share."""
    _check_matrix("a", a, dtype, word)
    _check_matrix("b", b, dtype, word)
    if (a.requires_grad or b.requires_grad) and _torch().is_grad_enabled():
        # the result would carry no gradient back: a silent hole in a training step
        raise InputError(f"{'a' if a.requires_grad else 'b'}: requires grad, and gemmlab's kernels have no "
                         "backward; call them under torch.no_grad() (inference) or on .detach()ed tensors")
    (M, K), (K2, N) = a.shape, b.shape
    if K2 != K:
        raise InputError(f"b: expected {K} rows to match a's {tuple(a.shape)}, got shape {tuple(b.shape)}")
    if a.get_device() != b.get_device():
        raise InputError(f"b: expected a tensor on {a.device} (where a is), got one on {b.device}")
    if not a.is_contiguous():
        raise InputError("a: expected a contiguous (row-major) tensor; use .contiguous()")
    return M, N, K


def _shape_bf16(a: Any, b: Any) -> tuple[int, int, int]:
    shape = _pair(a, b, _torch().bfloat16, "torch.bfloat16")
    if not b.is_contiguous():
        raise InputError("b: expected a contiguous (row-major) tensor; use .contiguous()")
    return shape


def _column_major(b: Any) -> bool:
    """``b.t().is_contiguous()`` for a 2-D ``b`` without making the view: strides (1, rows) but
    where a dimension has one element (its stride is then free) or there are none, as PyTorch counts."""
    (K, N), (s0, s1) = b.shape, b.stride()
    return K == 0 or N == 0 or ((K == 1 or s0 == 1) and (N == 1 or s1 == K))


def _shape_fp8(a: Any, b: Any) -> tuple[int, int, int]:
    e4m3 = getattr(_torch(), "float8_e4m3fn", None)
    if e4m3 is None:
        raise InputError("scaled_mm needs a PyTorch with torch.float8_e4m3fn")
    shape = _pair(a, b, e4m3, "torch.float8_e4m3fn")
    if not _column_major(b):
        raise InputError("b: expected a column-major (K, N) tensor, torch._scaled_mm's layout: the .t() of "
                         "a contiguous (N, K) tensor such as an nn.Linear weight")
    return shape


def _empty_or_zero(M: int, N: int, K: int, out: Any) -> bool:
    """torch.mm's answer where a dimension is 0: nothing to compute (M or N) or a zero sum (K)."""
    if M and N and K:
        return False
    if K == 0:
        out.zero_()
    return True


def mm(a: Any, b: Any, *, out: Optional[Any] = None) -> Any:
    """``torch.mm(a, b)`` for bfloat16 (M, K) @ (K, N), row-major, through ``dispatch_bf16``:
    FP32 accumulate, bf16 out (into ``out`` when given: contiguous, (M, N), bf16, its own storage)."""
    M, N, K = _shape_bf16(a, b)
    out = _out(out, M, N, a, b)
    if not _empty_or_zero(M, N, K, out):
        _launch("bf16", a, b, out, M, N, K, 1.0)
    return out


def scaled_mm(a: Any, b: Any, scale_a: Scale = 1.0, scale_b: Scale = 1.0, *,
              out: Optional[Any] = None) -> Any:
    """``torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)`` for float8_e4m3fn with
    per-tensor scales, through ``dispatch_fp8``: a (M, K) row-major, b (K, N) column-major (``w.t()``
    of a row-major (N, K) ``w``); bf16 out = scale_a × scale_b × (a @ b), FP32 accumulate."""
    M, N, K = _shape_fp8(a, b)
    alpha = _scale("scale_a", scale_a) * _scale("scale_b", scale_b)
    out = _out(out, M, N, a, b)
    if not _empty_or_zero(M, N, K, out):
        _launch("fp8", a, b, out, M, N, K, alpha)
    return out


def plan(a: Any, b: Any) -> str:
    """The kernel ``mm`` (bf16 operands) or ``scaled_mm`` (e4m3) runs for these operands, and why."""
    torch = _torch()
    dtype = "fp8" if a.dtype == getattr(torch, "float8_e4m3fn", None) else "bf16"
    M, N, K = _shape_fp8(a, b) if dtype == "fp8" else _shape_bf16(a, b)
    if not (M and N and K):
        return "no kernel: a dimension is 0"
    index = a.get_device()
    with _cupy().cuda.Device(index):
        run = _prepared(dtype, M, N, K, index)
    return f"{run.plan.name}: {run.plan.why}"
