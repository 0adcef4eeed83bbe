"""GPU: our occupancy() against the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor.

Two sweeps: synthetic kernels (register pressure, static shared memory, every block size, dynamic
shared memory up to the opt-in maximum, three carve-out preferences), and every ladder rung.
"""

from __future__ import annotations

import pytest

from gemmlab.analysis.occupancy import occupancy
from gemmlab.hardware import find_arch

pytestmark = pytest.mark.gpu

PROBE = r"""
extern "C" __global__ void probe(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float buf[SMEM_FLOATS];
    float acc[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = in[(threadIdx.x * NACC + i) % n];
    buf[threadIdx.x % SMEM_FLOATS] = acc[0];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int i = 0; i < NACC; ++i)
            acc[i] = fmaf(acc[i], acc[(i + 1) % NACC], buf[(i + j + threadIdx.x) % SMEM_FLOATS]);
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < NACC; ++i) s += acc[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"""

# (accumulators, static shared floats, --maxrregcount or None). With nvcc 13.0 for sm_90 these use
# 16, 32, 72, 40, 255, 96, 128, 64 and 168 registers and 4 B to 40 KiB of static shared memory.
PROBES = [
    (4, 1, None),
    (16, 512, None),
    (32, 3072, None),
    (64, 1, 40),
    (96, 10240, None),
    (128, 1, 96),
    (128, 1, 128),
    (128, 256, 64),
    (200, 1, 168),
]
BLOCKS = [32, 64, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024]


def _device_arch():
    import cupy

    cc = cupy.cuda.Device().compute_capability
    arch = find_arch(cc)
    assert arch is not None, f"the GPU's compute capability {cc} is missing from gemmlab.hardware.ARCHS"
    return arch


def _driver_blocks(kernel, block: int, dyn: int) -> int:
    from cupy.cuda import driver

    return driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, block, dyn)


def _compare(kernel, arch, dyn_values, carveout=None) -> list[str]:
    regs, static = kernel.num_regs, kernel.shared_size_bytes
    bad = []
    for block in BLOCKS:
        if block > kernel.max_threads_per_block:
            continue
        for dyn in dyn_values:
            ours = occupancy(arch, block, regs, static + dyn, carveout_pct=carveout, advise=False).blocks_per_sm
            theirs = _driver_blocks(kernel, block, dyn)
            if ours != theirs:
                bad.append(
                    f"regs={regs} static={static} dyn={dyn} block={block} carveout={carveout}: ours {ours}, driver {theirs}"
                )
    return bad


def test_synthetic_kernels_match_the_driver():
    import cupy

    arch = _device_arch()
    bad, checked = [], 0
    for nacc, smem_floats, maxreg in PROBES:
        options = ("-std=c++17", f"-DNACC={nacc}", f"-DSMEM_FLOATS={smem_floats}")
        if maxreg:
            options += (f"--maxrregcount={maxreg}",)
        kernel = cupy.RawModule(code=PROBE, options=options).get_function("probe")
        static = kernel.shared_size_bytes
        room = arch.smem_per_block_optin - static
        kernel.max_dynamic_shared_size_bytes = room  # opt in, as occupancy() assumes
        dyn_values = sorted({0, 1000, 8192, 30000, min(room, 48 * 1024 - static), min(room, 100_000), room})
        for carveout in (None, 50, 0):
            if carveout is not None:
                kernel.preferred_shared_memory_carveout = carveout
            bad += _compare(kernel, arch, dyn_values, carveout)
            checked += len(BLOCKS) * len(dyn_values)
    assert not bad, f"{len(bad)} of ~{checked} launches differ:\n" + "\n".join(bad[:30])


def test_every_rung_matches_the_driver():
    """Each rung as compiled by gemmlab, at every block size it allows, without dynamic shared memory
    and with its own (when the registry states one)."""
    from gemmlab.kernels.registry import all_rungs
    from gemmlab.runtime.compile import compile_rung

    arch = _device_arch()
    bad, names = [], []
    for rung in all_rungs():
        kernel = compile_rung(rung)
        for attr in ("num_regs", "shared_size_bytes", "max_threads_per_block", "kernel"):
            assert hasattr(kernel, attr), f"compile_rung({rung!r}) should return a cupy.RawKernel (no .{attr})"
        dyn = int(getattr(rung, "dynamic_smem_bytes", 0) or 0)
        if dyn > 48 * 1024 - kernel.shared_size_bytes:
            kernel.max_dynamic_shared_size_bytes = arch.smem_per_block_optin - kernel.shared_size_bytes
        names.append(getattr(rung, "name", repr(rung)))
        bad += [f"{names[-1]}: {b}" for b in _compare(kernel, arch, sorted({0, dyn}))]
    assert names, "the registry has no rungs"
    assert not bad, "\n".join(bad[:30])
