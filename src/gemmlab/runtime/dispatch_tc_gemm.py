"""The tensor-core dispatch rungs on the GPU: compile what a ``dispatch_tc.Plan`` names, allocate its
workspace and operand copies once, encode its tensor maps once per operand pointers, and launch
the plan on every call (at most two launches: a copy of A and/or B to 16-byte pitches, then the
persistent kernel, whose split-K slices reduce among themselves).

``prepare("dispatch_bf16", M, N, K)`` (or ``dispatch_fp8``) returns a ``TcDispatchedGemm``, used
like a ``PreparedGemm``: call it with (a, b, c, alpha, beta); ``rung`` / ``rung_for(a, b, c)`` say
what runs (a ``dispatch_gemm.Ran``: the plan's name and parameters) and ``grid``, ``block``,
``smem`` are the main kernel's. The copies run inside the call, so a timer around the call counts
them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from gemmlab.errors import InputError
from gemmlab.hardware import find_gpu
from gemmlab.kernels import paths
from gemmlab.kernels.families import Rung, b_shape
from gemmlab.problem import check_shape
from gemmlab.runtime import dispatch_tc, packed_launch
from gemmlab.runtime.dispatch_gemm import Ran, _operands, default_backend
from gemmlab.runtime.dispatch_tc import Operands, Plan, Policy
from gemmlab.runtime.operands import ARRAY_DTYPES

# Tensor-map sets kept per prepared shape (three 128-byte maps each): every layer of a model that
# shares a shape brings its own weight pointer - 80 layers x a few activation buffers fit.
MAP_SETS = 512
_REPITCH_BLOCK_ELEMS = 256 * 4  # repitch: 256 threads x 4 elements per row piece
_REPITCH_MAX_ROW_BLOCKS = 8192  # grid.y; each block then walks rows y, y + gridDim.y, ...


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def describe(p: Plan) -> str:
    return f"{p.name}: {p.why}"


def ran(p: Plan) -> Ran:
    return Ran(p.name, p.params, p.kernel, describe(p))


class TcDispatchedGemm:
    """A tensor-core dispatch rung bound to one (M, N, K)."""

    def __init__(self, rung: Rung, M: int, N: int, K: int, backend: str | None = None,
                 policy: Policy = Policy()) -> None:
        from gemmlab.runtime import device

        check_shape(M, N, K)
        self._cupy = device.require_gpu()
        self._dev = device.info()
        spec = find_gpu(self._dev.name)  # the datasheet bandwidth the decode rule weighs
        self._dram_gbps = spec.dram_bytes_per_s / 1e9 if spec is not None else None
        self.requested = rung
        self.dtype = rung.dtype
        self.M, self.N, self.K = M, N, K
        self.backend = backend or default_backend()
        self.policy = policy
        self._helpers: Any = None
        self._decode: Any = None
        self._functions: dict[str, Any] = {}  # kernel symbol -> CuPy Function (a call's hot path)
        self._plans: dict[Operands, tuple[Plan, Any, dict[str, Any]]] = {}
        self._maps: OrderedDict[tuple[int, int, int], tuple[Any, ...]] = OrderedDict()
        self._geometries: dict[Plan, tuple[tuple[int, int, int], tuple[int, int, int], int]] = {}
        self._launches: OrderedDict[tuple, Any] = OrderedDict()  # (pointers, alpha, beta) -> packed launch
        self._b_shape = b_shape(self.dtype, K, N)
        self.plan = self._prepared(Operands())[0]

    # --- what runs ---------------------------------------------------------------------------
    @property
    def rung(self) -> Ran:
        return ran(self.plan)

    def rung_for(self, a: Any, b: Any, c: Any) -> Ran:
        return ran(self._prepared(_operands(a, b, c))[0])

    @property
    def grid(self) -> tuple[int, int, int]:
        return self._geometry(self.plan)[0]

    @property
    def block(self) -> tuple[int, int, int]:
        return self._geometry(self.plan)[1]

    @property
    def smem(self) -> int:
        return self._geometry(self.plan)[2]

    @property
    def workspace_bytes(self) -> int:
        return sum(int(x.nbytes) for _, _, bufs in self._plans.values() for x in bufs.values())

    def _geometry(self, p: Plan) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
        # once per plan: a call's hot path must not rebuild the rung and its launch config (~40 us)
        hit = self._geometries.get(p)
        if hit is None:
            hit = self._geometries[p] = self._launch_geometry(p)
        return hit

    def _launch_geometry(self, p: Plan) -> tuple[tuple[int, int, int], tuple[int, int, int], int]:
        if p.decode:
            return p.grid, (p.gemv.threads, 1, 1), p.gemv.dynamic_smem
        r = p.rung
        if p.config == "wgmma":
            return r.launch_config(self.M, self.N, self.K)
        _, block, smem = r.launch_config(self.M, self.N, self.K, sms=self._dev.sm_count)
        return (p.ctas, 1, 1), block, smem

    # --- compiling -----------------------------------------------------------------------------
    def _helper(self, k: paths.PathKernel) -> Any:
        fn = self._functions.get(k.kernel)
        if fn is None:
            if self._helpers is None:
                from gemmlab.runtime.compile import compile_module

                self._helpers = compile_module(paths.translation_unit(paths.tc_helper_kernels()),
                                               "tc_helpers", backend=self.backend)
            fn = self._functions[k.kernel] = self._helpers.get_function(k.kernel)
        return fn

    def _decode_kernel(self, k: paths.PathKernel) -> Any:
        """A decode kernel (every instantiation is one translation unit, compiled once)."""
        if self._decode is None:
            from gemmlab.runtime.compile import compile_module

            self._decode = compile_module(paths.translation_unit(paths.gemv_kernels()),
                                          "decode_tc", backend=self.backend)
        return self._decode.get_function(k.kernel)

    def _smem_fits(self, name: str, smem: int) -> int:
        """``smem`` (dynamic shared memory, bytes) unless this GPU cannot give a block that much."""
        if smem > self._dev.smem_per_block_optin:
            raise InputError(f"dispatch kernel {name} needs {smem} bytes of shared memory per "
                             f"block; {self._dev.name} allows at most "
                             f"{self._dev.smem_per_block_optin}")
        return smem

    def _cached_maps(self, key: tuple[int, int, int], make: Any) -> tuple[Any, ...]:
        """The tensor maps for one set of operand pointers (``make()`` encodes them), the last
        ``MAP_SETS`` sets kept: a model calls one shape with every layer's weights."""
        maps = self._maps.get(key)
        if maps is None:
            maps = self._maps[key] = make()
            while len(self._maps) > MAP_SETS:
                self._maps.popitem(last=False)
        else:
            self._maps.move_to_end(key)
        return maps

    def _swap_kernel(self, k: paths.PathKernel) -> Any:
        """A swapped-operand wgmma decode kernel (one translation unit, compiled once for
        sm_90a), with its shared-memory opt-in set."""
        fn = self._functions.get(k.kernel)
        if fn is None:
            from gemmlab.runtime.compile import compile_module

            if (self._dev.cc_major, self._dev.cc_minor) != (9, 0):
                raise InputError(f"dispatch kernel {k.name} runs wgmma: it needs an sm_90 GPU "
                                 f"(Hopper), not {self._dev.name}")
            smem = self._smem_fits(k.name, k.dynamic_smem)
            module = compile_module(paths.translation_unit(paths.swap_kernels()), "decode_wgmma",
                                    arch="sm_90a", backend=self.backend)
            fn = module.get_function(k.kernel)
            fn.max_dynamic_shared_size_bytes = smem
            self._functions[k.kernel] = fn
        return fn

    def _swap_maps(self, p: Plan, a: Any, b: Any) -> tuple[Any, Any]:
        """The swapped-operand kernel's maps: B (the weights) in 64-column (bf16: N-major) or
        64-row (fp8: K-major) boxes, A (the tokens) in boxes of the kernel's token count, or of
        its M rows where the kernel trims them (``paths.SWAP_TRIM_TN``, ``tma.box_rows``)."""
        from gemmlab.runtime import tma

        def make() -> tuple[Any, ...]:
            M, N, K = self.M, self.N, self.K
            rows = tma.box_rows(p.gemv_rows, M) if p.gemv.params["TRIM"] else p.gemv_rows
            if self.dtype == "fp8":
                spec_x, spec_w = tma.fp8_specs(M, N, K, rows, dispatch_tc.BK["fp8"],
                                               dispatch_tc.SWAP_COLS)
            else:
                spec_x, spec_w = tma.specs(M, N, K, rows, dispatch_tc.BK["bf16"])
            return tma.encode(spec_w, b.data.ptr), tma.encode(spec_x, a.data.ptr)

        # -1: the persistent kernels' maps of the same pointers differ (their boxes, C's map)
        return self._cached_maps((a.data.ptr, b.data.ptr, -1), make)

    def _prepared(self, ops: Operands) -> tuple[Plan, Any, dict[str, Any]]:
        hit = self._plans.get(ops)
        if hit is not None:
            return hit
        from gemmlab.runtime.compile import compile_rung

        cp = self._cupy
        p = dispatch_tc.plan(self.dtype, self.M, self.N, self.K, self._dev.sm_count, ops,
                             self.policy, self._dram_gbps)
        if p.config == "swap":
            self._plans[ops] = (p, self._swap_kernel(p.gemv), {})
            return self._plans[ops]
        if p.decode:
            self._plans[ops] = (p, self._decode_kernel(p.gemv), {})
            return self._plans[ops]
        refusal = p.rung.refusal(self.M, self.N, self.K) if p.config == "wgmma" else None
        if refusal:
            raise InputError(refusal)
        kernel = compile_rung(p.rung, backend=self.backend)
        self._smem_fits(p.rung.name, self._geometry(p)[2])
        bufs: dict[str, Any] = {}
        store = cp.uint8 if self.dtype == "fp8" else cp.uint16
        if p.workspace_floats:  # partial sums, then the arrival counters (zero; the kernel resets them)
            bufs["W"] = cp.zeros(p.workspace_floats, dtype=cp.float32)
        if p.copy_a:
            bufs["Ap"] = cp.empty((self.M, p.lda), dtype=store)
        if p.copy_b:
            rows = self.N if self.dtype == "fp8" else self.K
            bufs["Bp"] = cp.empty((rows, p.ldb), dtype=store)
        self._plans[ops] = (p, kernel, bufs)
        return self._plans[ops]

    # --- calling -------------------------------------------------------------------------------
    def _check(self, a: Any, b: Any, c: Any) -> None:
        if a.shape != (self.M, self.K) or b.shape != self._b_shape or c.shape != (self.M, self.N):
            tn = " (b given N x K, 'TN')" if self.dtype == "fp8" else ""
            raise InputError(
                f"operands a {a.shape}, b {b.shape}, c {c.shape} do not match the prepared "
                f"M={self.M}, N={self.N}, K={self.K}{tn}")
        t_in = np.dtype(ARRAY_DTYPES[self.dtype])
        t_out = np.dtype(ARRAY_DTYPES["bf16"])
        if a.dtype != t_in or b.dtype != t_in or c.dtype != t_out:
            raise InputError(f"operands a {a.dtype}, b {b.dtype}, c {c.dtype}: rung "
                             f"{self.requested.name} takes a, b as {t_in} and c as {t_out}")
        for name, x in (("a", a), ("b", b), ("c", c)):
            if not x.flags.c_contiguous:
                raise InputError(f"operand {name} is not C-contiguous (row-major): pass "
                                 f"cupy.ascontiguousarray({name})")

    def _repitch(self, src: Any, dst: Any, rows: int, cols: int) -> None:
        k = paths.REPITCH[paths_elem(self.dtype)]
        grid = (_cdiv(cols, _REPITCH_BLOCK_ELEMS), min(rows, _REPITCH_MAX_ROW_BLOCKS), 1)
        self._helper(k)(grid, (256, 1, 1), (np.int32(rows), np.int32(cols), np.int64(cols),
                                            np.int64(dst.shape[1]), src, dst))

    def _tensor_maps(self, p: Plan, a: Any, b: Any, c: Any) -> tuple[Any, ...]:
        from dataclasses import replace

        from gemmlab.runtime import tma

        def make() -> tuple[Any, ...]:
            r = p.rung
            eb = dispatch_tc.ELEM_BYTES[self.dtype]
            spec_a, spec_b = tma.rung_specs(r, self.M, self.N, self.K)
            spec_a = replace(spec_a, pitch=p.lda * eb)
            spec_b = replace(spec_b, pitch=p.ldb * eb)
            maps = tma.operand_maps(r, spec_a, spec_b, self.M, a.data.ptr, b.data.ptr)
            if r.takes_c_map:
                if r.tma_store and self.N % 8 == 0 and c.data.ptr % 16 == 0:
                    maps += (tma.encode(tma.c_spec(self.M, self.N, r.c_box_cols), c.data.ptr),)
                elif r.tma_store:  # the kernel stores C directly (persistent_*.cu)
                    maps += (tma.zero_param(),)
            return maps

        return self._cached_maps((a.data.ptr, b.data.ptr, c.data.ptr), make)

    def repeat(self, a_ptr: int, b_ptr: int, c_ptr: int, alpha: float, beta: float, stream: int) -> bool:
        """Launch again, on the raw CUDA ``stream``, a call made before with these operand pointers
        and scalars: one driver call, nothing checked or wrapped (the first call checked them). False
        where no such call was made, or its plan copies an operand first: then call the object. For
        callers holding raw pointers already (``torch_ops``)."""
        key = (a_ptr, b_ptr, c_ptr, float(alpha), float(beta))
        fast = self._launches.get(key)
        if fast is None:
            return False
        self._launches.move_to_end(key)
        fast(stream)
        return True

    def __call__(self, a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
        self._check(a, b, c)
        key = (a.data.ptr, b.data.ptr, c.data.ptr, float(alpha), float(beta))
        if key in self._launches:  # the same pointers and scalars as a call before: one driver call
            self.repeat(*key, self._cupy.cuda.get_current_stream().ptr)
            return
        p, kernel, bufs = self._prepared(_operands(a, b, c))
        grid, block, smem = self._geometry(p)
        M, N, K = self.M, self.N, self.K
        if p.config == "swap":
            tm_w, tm_x = self._swap_maps(p, a, b)
            self._launch(key, kernel, grid, block, smem, (tm_w, tm_x, np.int32(M), np.int32(N), np.int32(K),
                                                          np.float32(alpha), np.float32(beta), c))
            return
        if p.config == "wgmma" or p.decode:
            self._launch(key, kernel, grid, block, smem, (np.int32(M), np.int32(N), np.int32(K),
                                                          np.float32(alpha), a, b, np.float32(beta), c))
            return
        if p.copy_a:
            self._repitch(a, bufs["Ap"], M, K)
            a = bufs["Ap"]
        if p.copy_b:
            rows, cols = (N, K) if self.dtype == "fp8" else (K, N)
            self._repitch(b, bufs["Bp"], rows, cols)
            b = bufs["Bp"]
        maps = self._tensor_maps(p, a, b, c)
        dims = (np.int32(M), np.int32(N), np.int32(K))
        if p.streamk:
            dims += (np.int32(p.streamk), bufs["W"])
        elif p.splits > 1:
            dims += (np.int32(p.splits), bufs["W"])
        args = (*maps, *dims, np.float32(alpha), a, b, np.float32(beta), c)
        if p.copy_a or p.copy_b:  # the copies launch first on every call: no packed repeat
            kernel(grid, block, args, shared_mem=smem)
            return
        self._launch(key, kernel, grid, block, smem, args)

    def _launch(self, key: tuple, kernel: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
                smem: int, args: tuple) -> None:
        """Launch on CuPy's current stream, keeping the packed launch for a call with the same
        pointers and scalars (``packed_launch``; CuPy's own launch where cuda-bindings is absent)."""
        fast = packed_launch.packed(kernel, grid, block, smem, args)
        if fast is None:
            kernel(grid, block, args, shared_mem=smem)
            return
        self._launches[key] = fast
        while len(self._launches) > MAP_SETS:
            self._launches.popitem(last=False)
        fast(self._cupy.cuda.get_current_stream().ptr)


def paths_elem(dtype: str) -> int:
    """Bytes per element of A and B: the repitch kernel to use."""
    return dispatch_tc.ELEM_BYTES[dtype]
