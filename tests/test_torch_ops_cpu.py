"""torch_ops' layout test without PyTorch: ``_column_major`` answers as ``b.t().is_contiguous()`` does,
dimensions of one element and empty tensors included (PyTorch's rule, checked on the GPU by
tests/gpu/test_torch_ops_gpu.py)."""

from __future__ import annotations

import pytest

from gemmlab.runtime.torch_ops import _column_major


class _T:
    def __init__(self, shape, stride):
        self.shape, self._stride = shape, stride

    def stride(self):
        return self._stride


@pytest.mark.parametrize("shape,stride,expected", [
    ((64, 32), (1, 64), True),      # w.t() of a contiguous (32, 64) weight
    ((64, 32), (32, 1), False),     # row-major
    ((64, 32), (1, 128), False),    # a column slice of a wider matrix: rows 128 apart
    ((1, 32), (7, 1), True),        # K = 1: the stride along K is free
    ((64, 1), (1, 999), True),      # N = 1: the stride along N is free
    ((1, 32), (1, 5), False),       # K = 1, yet columns must then be 1 apart
    ((0, 32), (5, 5), True),        # no elements
])
def test_column_major_counts_as_pytorch_does(shape, stride, expected):
    assert _column_major(_T(shape, stride)) is expected


def test_without_a_usable_gpu_the_launch_path_says_so_in_one_line(monkeypatch):
    """No CuPy or no GPU: ToolMissing (exit 3 in the CLI), not an ImportError from deep inside."""
    from gemmlab.errors import ToolMissing
    from gemmlab.runtime import device, torch_ops

    try:
        device.require_gpu()
        pytest.skip("this machine has CuPy and a GPU: the refusal cannot be seen here")
    except ToolMissing:
        pass
    monkeypatch.setattr(torch_ops, "_MODULES", {})
    with pytest.raises(ToolMissing):
        torch_ops._cupy()
