"""A concrete rung bound to one M x N x K: compiled once, then only checked and launched on each call.

The vector instantiation runs when the shape allows it and A, B, C sit on 16-byte boundaries, the
rung's scalar twin otherwise; TMA rungs get their tensor maps encoded once per operand pointers.
Abstract rungs (``autotuned``, ``dispatch``) are resolved before they get here
(``gemmlab.runtime.launch.prepare``).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from gemmlab.errors import InputError
from gemmlab.kernels import registry
from gemmlab.kernels.families import Rung, b_shape
from gemmlab.kernels.ladders import scalar_twin
from gemmlab.problem import check_shape
from gemmlab.runtime.operands import ARRAY_DTYPES, aligned16

log = logging.getLogger(__name__)


class PreparedGemm:
    """A rung bound to one (M, N, K): call it with (a, b, c, alpha, beta) to launch."""

    def __init__(self, rung: Rung, M: int, N: int, K: int, backend: str = "nvrtc") -> None:
        from gemmlab.runtime import compile as _compile

        check_shape(M, N, K)
        if registry.abstract(rung.name):
            raise InputError(f"rung {rung.name} is abstract (it picks an instantiation per GPU and shape): "
                             f"launch it through gemmlab.runtime.launch.prepare")
        self.requested = rung
        self.M, self.N, self.K = M, N, K
        refusal = rung.refusal(M, N, K)
        if refusal:
            raise InputError(refusal)
        sms = None
        if rung.persistent:
            from gemmlab.runtime import device

            sms = device.info().sm_count
        self.grid, self.block, self.smem = rung.launch_config(M, N, K, sms=sms)
        self._maps: dict[tuple[int, int, int], tuple[Any, ...]] = {}
        self.backend = backend
        self._dtypes = (ARRAY_DTYPES[rung.dtype], ARRAY_DTYPES[rung.out_dtype])
        self._vec_rung = rung if rung.vectorized and rung.accepts(M, N, K) else None
        self._scalar_rung = scalar_twin(rung)
        self._vec = (_compile.compile_rung(self._vec_rung, backend=backend)
                     if self._vec_rung else None)
        self._scalar = (None if self._vec is not None
                        else _compile.compile_rung(self._scalar_rung, backend=backend))
        self._args = (np.int32(M), np.int32(N), np.int32(K))
        self._b_shape = b_shape(rung.dtype, K, N)

    @property
    def rung(self) -> Rung:
        """The instantiation launched for aligned operands."""
        return self._vec_rung or self._scalar_rung

    def rung_for(self, a: Any, b: Any, c: Any) -> Rung:
        """The instantiation that a call with these operands launches."""
        if self._vec_rung is not None and aligned16(a, b, c):
            return self._vec_rung
        return self._scalar_rung

    def _kernel_for(self, a: Any, b: Any, c: Any):
        if self._vec is not None and aligned16(a, b, c):
            return self._vec
        if self._scalar is None:
            from gemmlab.runtime import compile as _compile

            self._scalar = _compile.compile_rung(self._scalar_rung, backend=self.backend)
        return self._scalar

    def __call__(self, a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
        if a.shape != (self.M, self.K) or b.shape != self._b_shape or c.shape != (self.M,
                                                                                   self.N):
            tn = " (b given N x K, 'TN')" if self.requested.b_layout == "nk" else ""
            raise InputError(
                f"operands a {a.shape}, b {b.shape}, c {c.shape} do not match the prepared "
                f"M={self.M}, N={self.N}, K={self.K}{tn}")
        t_in, t_out = self._dtypes
        if a.dtype != t_in or b.dtype != t_in or c.dtype != t_out:
            raise InputError(
                f"operands a {a.dtype}, b {b.dtype}, c {c.dtype}: rung {self.requested.name} "
                f"takes a, b as {t_in} and c as {t_out}")
        kernel = self._kernel_for(a, b, c)
        args = (*self._args, np.float32(alpha), a, b, np.float32(beta), c)
        if self.requested.tma:
            args = (*self._tensor_maps(a, b, c), *args)
        kernel(self.grid, self.block, args, shared_mem=self.smem)

    def _tensor_maps(self, a: Any, b: Any, c: Any) -> tuple[Any, ...]:
        """The TMA tensor maps of a and b (and c for a TMA-store epilogue). They hold the
        addresses, so they are cached per operand pointers: a timing loop encodes them once."""
        rung = self.requested
        key = (a.data.ptr, b.data.ptr, c.data.ptr if rung.tma_store else 0)
        maps = self._maps.get(key)
        if maps is None:
            from gemmlab.runtime import tma

            spec_a, spec_b = tma.rung_specs(rung, self.M, self.N, self.K)
            if len(self._maps) >= 8:  # many operand buffers: keep the cache small
                self._maps.clear()
            maps = tma.operand_maps(rung, spec_a, spec_b, self.M, a.data.ptr, b.data.ptr)
            if rung.tma_store and rung.dtype == "fp8" and self.N % 8:
                # C's rows are not 16-byte multiples: the kernel stores C directly and never
                # reads this map (persistent_fp8.cu)
                maps += (tma.zero_param(),)
            elif rung.tma_store:
                maps += (tma.encode(tma.c_spec(self.M, self.N, rung.c_box_cols), c.data.ptr),)
            self._maps[key] = maps
        return maps
