"""Is there a CUDA GPU, and what is it: the checks every GPU path runs first.

CuPy is imported lazily: the CPU-only parts of gemmlab (parsing, analysis, reports) never need it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import ModuleType

from gemmlab.errors import ToolMissing

_NEED = "running kernels (ladder, bench, lesson, shapes, ceilings --measure) needs an NVIDIA GPU; analyze and the calculators do not"


def require_cupy() -> ModuleType:
    """The cupy module; ToolMissing naming the problem when it cannot be imported."""
    try:
        import cupy
    except ImportError as e:
        raise ToolMissing(
            f"no CUDA GPU found (CuPy: not importable: {e}; install gemmlab[gpu]); {_NEED}"
        ) from None
    except Exception as e:  # a broken CUDA install raises from cupy's __init__
        raise ToolMissing(
            f"no CUDA GPU found (CuPy: {type(e).__name__}: {e}); {_NEED}") from None
    return cupy


def require_gpu() -> ModuleType:
    """The cupy module, after checking that at least one CUDA device is usable."""
    cupy = require_cupy()
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError as e:
        raise ToolMissing(f"no CUDA GPU found (CuPy: {e}); {_NEED}") from None
    if n < 1:
        raise ToolMissing(f"no CUDA GPU found (CuPy: 0 devices); {_NEED}")
    return cupy


@dataclass(frozen=True)
class DeviceInfo:
    """Properties of one CUDA device, as the runtime reports them."""

    index: int
    name: str
    cc_major: int
    cc_minor: int
    sm_count: int
    l2_bytes: int
    smem_per_block_optin: int  # the most dynamic shared memory a block can opt in to, bytes
    smem_per_sm: int
    regs_per_sm: int
    max_threads_per_sm: int
    total_memory: int
    sm_clock_khz: int | None  # cudaDevAttrClockRate (the maximum SM clock); None if 0

    @property
    def arch(self) -> str:
        """The compile target for this device, e.g. ``sm_90``."""
        return f"sm_{self.cc_major}{self.cc_minor}"

    @property
    def compute_capability(self) -> str:
        return f"{self.cc_major}.{self.cc_minor}"


# cudaDeviceAttr values (stable across CUDA versions; CUDA 13 dropped some cudaDeviceProp fields,
# so integer properties are read as attributes).
_ATTR = {"clock_khz": 13, "sm_count": 16, "max_threads_per_sm": 39, "l2_bytes": 38,
         "cc_major": 75, "cc_minor": 76, "smem_per_sm": 81, "regs_per_sm": 82,
         "smem_per_block_optin": 97}


@functools.lru_cache(maxsize=None)
def info(index: int | None = None) -> DeviceInfo:
    """Properties of device ``index`` (default: CuPy's current device)."""
    cupy = require_gpu()
    rt = cupy.cuda.runtime
    if index is None:
        index = rt.getDevice()
    attr = {k: int(rt.deviceGetAttribute(v, index)) for k, v in _ATTR.items()}
    props = rt.getDeviceProperties(index)
    name = props["name"]
    name = name.decode() if isinstance(name, bytes) else str(name)
    with cupy.cuda.Device(index):
        total = int(cupy.cuda.runtime.memGetInfo()[1])
    return DeviceInfo(
        index=index, name=name, cc_major=attr["cc_major"], cc_minor=attr["cc_minor"],
        sm_count=attr["sm_count"], l2_bytes=attr["l2_bytes"],
        smem_per_block_optin=attr["smem_per_block_optin"], smem_per_sm=attr["smem_per_sm"],
        regs_per_sm=attr["regs_per_sm"], max_threads_per_sm=attr["max_threads_per_sm"],
        total_memory=total, sm_clock_khz=attr["clock_khz"] or None,
    )


def blocks_per_sm(kernel: object, threads: int, dynamic_smem: int = 0) -> int:
    """Resident blocks per SM of a loaded kernel (a ``cupy.RawKernel``) launched with ``threads``
    per block and ``dynamic_smem`` bytes of dynamic shared memory, as the driver counts them
    (cuOccupancyMaxActiveBlocksPerMultiprocessor: the kernel's registers and static shared memory
    included)."""
    from cupy.cuda import driver

    return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dynamic_smem))


def clusters_at_once(kernel: object, grid: tuple[int, int, int], block: tuple[int, int, int],
                     dynamic_smem: int = 0) -> int:
    """Clusters of a loaded kernel (a ``cupy.RawKernel`` compiled with ``__cluster_dims__``) the
    GPU holds at once, launched as ``grid`` x ``block`` with ``dynamic_smem`` bytes
    (cuOccupancyMaxActiveClusters: a cluster's CTAs share one GPC). Raises if the driver
    cannot say (RuntimeError)."""
    from cuda.bindings import driver as drv

    cfg = drv.CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
    cfg.sharedMemBytes = dynamic_smem
    err, n = drv.cuOccupancyMaxActiveClusters(drv.CUfunction(kernel.kernel.ptr), cfg)
    if err != drv.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuOccupancyMaxActiveClusters failed: {err}")
    return int(n)
