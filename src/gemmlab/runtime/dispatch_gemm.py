"""The dispatch rung on the GPU: compile the kernels a ``dispatch.Plan`` names, allocate its
workspace once, and launch the plan on every call.

``prepare("dispatch", M, N, K)`` returns a ``DispatchedGemm``. It is used like a ``PreparedGemm``:
call it with (a, b, c, alpha, beta); ``rung`` / ``rung_for(a, b, c)`` say what runs (``Ran``: the
plan's name, e.g. ``skinny-M split-K 9: skinny_m1_v1 + splitk_reduce_v1``, and its parameters), and
``grid``, ``block``, ``smem`` are the main kernel's, so result rows record what actually ran.

Everything the plan launches - the padded copies, the split-K reduction - runs inside the call, so
a timer around the call counts it. The plan depends on the operands' alignment: the one for 16-byte
aligned pointers (every CuPy allocation) is built and its workspace allocated when the object is
made; a call with an unaligned view builds (and keeps) its own plan and workspace the first time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from gemmlab.errors import InputError
from gemmlab.kernels.paths import PathKernel, translation_unit
from gemmlab.kernels.families import Rung
from gemmlab.problem import check_shape
from gemmlab.runtime import dispatch
from gemmlab.runtime.dispatch import Operands, Plan, Policy

_STATIC_SMEM_LIMIT = 48 * 1024  # above this a launch needs the dynamic-shared-memory opt-in


@dataclass(frozen=True)
class Ran:
    """What a dispatch call launches, in the shape result rows record (``name``, ``params``)."""

    name: str
    params: Mapping[str, int] = field(hash=False)
    kernel: str  # the main kernel's symbol (what a profiler filter looks for)
    summary: str

    @classmethod
    def of(cls, p: Plan) -> "Ran":
        return cls(p.name, p.params, p.main_launch.kernel.kernel, dispatch.describe(p))


def default_backend() -> str:
    """nvcc when the toolkit is installed, else NVRTC. The same tile kernel ran 5-9% faster from
    nvcc 13.0 than from CuPy's NVRTC on the H100 (4096^3: 91.7 vs 86.9% of cuBLAS; 4095^3 padded:
    90.8 vs 83.7%; docs/results/shapes-dispatch-h100-2026-11-23/tile_probe)."""
    from gemmlab.runtime.toolchain import available_backends

    return available_backends()[-1]


def _operands(a: Any, b: Any, c: Any) -> Operands:
    return Operands(a.data.ptr % 16 == 0, b.data.ptr % 16 == 0, c.data.ptr % 16 == 0)


class DispatchedGemm:
    """The dispatch rung bound to one (M, N, K)."""

    def __init__(self, rung: Rung, M: int, N: int, K: int, backend: str | None = None,
                 policy: Policy = Policy()) -> None:
        from gemmlab.runtime import device

        check_shape(M, N, K)
        self._cupy = device.require_gpu()
        self._dev = device.info()
        self.requested = rung
        self.M, self.N, self.K = M, N, K
        self.backend = backend or default_backend()
        self.policy = policy
        self._kernels: dict[str, Any] = {}
        self._occupancy: dict[str, int] = {}
        self.machine = dispatch.Machine(self._dev.sm_count, self._blocks_per_sm)
        self._plans: dict[Operands, tuple[Plan, dict[str, Any], list]] = {}
        self.plan = self._prepared(Operands())[0]

    # --- what runs ---------------------------------------------------------------------------
    @property
    def rung(self) -> Ran:
        """What a call with 16-byte aligned operands launches."""
        return Ran.of(self.plan)

    def rung_for(self, a: Any, b: Any, c: Any) -> Ran:
        return Ran.of(self._prepared(_operands(a, b, c))[0])

    @property
    def grid(self) -> tuple[int, int, int]:
        return self.plan.main_launch.grid

    @property
    def block(self) -> tuple[int, int, int]:
        return self.plan.main_launch.block

    @property
    def smem(self) -> int:
        return self.plan.main_launch.smem

    @property
    def workspace_bytes(self) -> int:
        return sum(int(x.nbytes) for _, bufs, _ in self._plans.values() for x in bufs.values())

    # --- compiling -----------------------------------------------------------------------------
    def _kernel(self, k: PathKernel) -> Any:
        kernel = self._kernels.get(k.name)
        if kernel is None:
            from gemmlab.runtime.compile import compile_module

            smem = k.dynamic_smem
            if smem > self._dev.smem_per_block_optin:
                raise InputError(f"dispatch kernel {k.name} needs {smem} bytes of shared memory per "
                                 f"block; {self._dev.name} allows at most "
                                 f"{self._dev.smem_per_block_optin}")
            module = compile_module(translation_unit([k]), k.kernel, backend=self.backend)
            kernel = module.get_function(k.kernel)
            if smem > _STATIC_SMEM_LIMIT:
                kernel.max_dynamic_shared_size_bytes = smem
            self._kernels[k.name] = kernel
        return kernel

    def _blocks_per_sm(self, k: PathKernel) -> int:
        """Resident blocks per SM of the loaded kernel, as the driver counts them
        (cuOccupancyMaxActiveBlocksPerMultiprocessor: its registers, static and dynamic shared
        memory, block size); at least 1, so a wave is never empty."""
        if k.name not in self._occupancy:
            from gemmlab.runtime import device

            blocks = device.blocks_per_sm(self._kernel(k), k.threads, k.dynamic_smem)
            self._occupancy[k.name] = max(1, blocks)
        return self._occupancy[k.name]

    def _prepared(self, ops: Operands) -> tuple[Plan, dict[str, Any], list]:
        """The plan for this alignment, its workspace (allocated once) and its launch list."""
        hit = self._plans.get(ops)
        if hit is not None:
            return hit
        cp = self._cupy
        p = dispatch.plan(self.M, self.N, self.K, self.machine, ops, self.policy)
        bufs = {name: cp.empty(n, dtype=cp.float32) for name, n in p.buffers.items()}
        launches = []
        for L in p.launches:
            kernel = self._kernel(L.kernel)
            args = []
            for (ctype, _), v in zip(L.kernel.signature, L.args):
                if "*" in ctype:
                    args.append(("buf", v))
                elif v in ("alpha", "beta"):
                    args.append((v, None))
                elif ctype == "float":
                    args.append(("val", np.float32(v)))
                elif ctype == "long long":
                    args.append(("val", np.int64(v)))
                else:
                    args.append(("val", np.int32(v)))
            launches.append((kernel, L.grid, L.block, L.smem, args))
        self._plans[ops] = (p, bufs, launches)
        return self._plans[ops]

    # --- calling -------------------------------------------------------------------------------
    def __call__(self, a: Any, b: Any, c: Any, alpha: float = 1.0, beta: float = 0.0) -> None:
        if a.shape != (self.M, self.K) or b.shape != (self.K, self.N) or c.shape != (self.M, self.N):
            raise InputError(
                f"operands a {a.shape}, b {b.shape}, c {c.shape} do not match the prepared "
                f"M={self.M}, N={self.N}, K={self.K}")
        f32 = np.dtype(np.float32)
        if a.dtype != f32 or b.dtype != f32 or c.dtype != f32:
            raise InputError(f"operands a {a.dtype}, b {b.dtype}, c {c.dtype}: rung "
                             f"{self.requested.name} takes float32 a, b, c")
        _, bufs, launches = self._prepared(_operands(a, b, c))
        named = {"A": a, "B": b, "C": c, **bufs}
        scal = {"alpha": np.float32(alpha), "beta": np.float32(beta)}
        for kernel, grid, block, smem, spec in launches:
            args = tuple(named[v] if kind == "buf" else scal[kind] if kind in scal else v
                         for kind, v in spec)
            kernel(grid, block, args, shared_mem=smem)
