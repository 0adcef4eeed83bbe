"""prepare("dispatch", ...) end to end on a CPU: DispatchedGemm with a stand-in for CuPy whose
arrays are NumPy arrays and whose kernels run in the g++ emulation (tests/emulate_cuda.py). This
covers what the planner tests cannot: the launcher's argument marshalling (types, buffer names,
alpha / beta), the workspace allocated once per alignment, occupancy from the compiled kernel, what
``rung`` / ``rung_for`` / ``grid`` report, and the InputErrors of a bad call. Skipped without g++."""

from __future__ import annotations

import types

import numpy as np
import pytest

from emulate_cuda import Emulator, have_gxx
from gemmlab.errors import InputError
from gemmlab.kernels import paths, registry
from gemmlab.runtime import device

pytestmark = pytest.mark.skipif(not have_gxx(), reason="g++ with C++20 <barrier> not found: the CUDA emulation needs it")

H100_INFO = device.DeviceInfo(0, "Fake H100", 9, 0, 132, 50 << 20, 227 << 10, 228 << 10, 65536, 2048,
                              80 << 30, 1980000)
BY_SYMBOL = {k.kernel: k for k in paths.all_path_kernels()}


class Arr(np.ndarray):
    """A NumPy array answering ``.data.ptr`` as a CuPy array does."""

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])


def arr(x) -> Arr:
    return np.ascontiguousarray(x, dtype=np.float32).view(Arr)


def _root(x: np.ndarray) -> np.ndarray:
    while isinstance(x.base, np.ndarray):
        x = x.base
    return x


class FakeKernel:
    def __init__(self, emu_for, k):
        self.k, self.emu_for = k, emu_for
        self.num_regs, self.shared_size_bytes = 64, 0
        self.max_dynamic_shared_size_bytes = 0
        self.calls = []

    def __call__(self, grid, block, args, shared_mem=0):
        assert len(args) == len(self.k.signature)
        buffers, out = {}, []
        for (ctype, _), v in zip(self.k.signature, args):
            if "*" in ctype:
                assert isinstance(v, np.ndarray) and v.dtype == np.float32, (self.k.name, ctype, v)
                root = _root(v)
                name = f"b{id(root)}"
                buffers[name] = root.view(np.ndarray).reshape(-1) if root.flags.c_contiguous else root
                out.append((name, (v.__array_interface__["data"][0] - root.__array_interface__["data"][0]) // 4))
            else:
                want = {"int": np.int32, "long long": np.int64, "float": np.float32}[ctype]
                assert type(v) is want, (self.k.name, ctype, type(v))
                out.append(v.item())
        self.calls.append((tuple(grid), tuple(block), shared_mem))
        self.emu_for(self.k).launch(self.k.kernel, grid, block, shared_mem, out, buffers)


@pytest.fixture
def fake_gpu(monkeypatch, emu_workdir):
    emus = {}

    def emu_for(k):
        if k.source not in emus:
            emus[k.source] = Emulator([x for x in paths.all_path_kernels() if x.source == k.source], emu_workdir)
        return emus[k.source]

    compiled = []
    cp = types.SimpleNamespace(float32=np.float32, empty=lambda n, dtype: arr(np.full(n, np.nan)))
    monkeypatch.setattr(device, "require_gpu", lambda: cp)
    monkeypatch.setattr(device, "info", lambda index=None: H100_INFO)

    def blocks_per_sm(kernel, threads, dynamic_smem=0):
        # the driver's answer, by the occupancy calculator (tests/gpu/test_occupancy_driver.py checks
        # that the two agree on the H100)
        from gemmlab.analysis.occupancy import occupancy

        return occupancy(H100_INFO.arch, threads, kernel.num_regs, kernel.shared_size_bytes + dynamic_smem,
                         advise=False).blocks_per_sm

    monkeypatch.setattr(device, "blocks_per_sm", blocks_per_sm)

    def compile_module(source, name, arch=None, backend="nvrtc"):
        k = BY_SYMBOL[name]
        assert source == paths.translation_unit([k]) and backend == dispatch_gemm.default_backend()
        compiled.append(name)
        return types.SimpleNamespace(get_function=lambda sym: FakeKernel(emu_for, BY_SYMBOL[sym]))

    import gemmlab.runtime.compile as comp
    from gemmlab.runtime import dispatch_gemm

    monkeypatch.setattr(comp, "compile_module", compile_module)
    return compiled


def operands(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    a = arr(rng.uniform(-1, 1, (M, K)))
    b = arr(rng.uniform(-1, 1, (K, N)))
    c0 = arr(rng.uniform(-1, 1, (M, N)))
    return a, b, c0


def reference(a, b, c0, alpha, beta):
    return alpha * (a.astype(np.float64) @ b.astype(np.float64)) + (beta * c0 if beta else 0.0)


@pytest.mark.parametrize("dims, path", [((3, 200, 700), "skinny-M"), ((200, 3, 700), "skinny-N"),
                                        ((300, 600, 101), "padded"), ((68, 68, 600), "vector split-K"),
                                        ((40, 50, 30), "tiny")])
def test_prepare_dispatch_runs_the_plan(fake_gpu, dims, path):
    from gemmlab.runtime import dispatch_gemm
    from gemmlab.runtime.dispatch_gemm import DispatchedGemm
    from gemmlab.runtime.launch import prepare

    M, N, K = dims
    run = prepare("dispatch", M, N, K)
    assert isinstance(run, DispatchedGemm) and run.requested is registry.get("dispatch")
    assert run.rung.name.startswith(path) and run.backend == dispatch_gemm.default_backend()
    assert run.grid == run.plan.main_launch.grid and run.block == run.plan.main_launch.kernel.block
    assert run.rung.kernel == run.plan.main_launch.kernel.kernel and run.rung.params["SPLIT"] == run.plan.split
    allocated = run.workspace_bytes
    assert allocated == run.plan.workspace_bytes
    a, b, c0 = operands(M, N, K)
    for beta in (0.0, -0.5):
        c = arr(np.full((M, N), np.nan)) if beta == 0 else arr(c0.copy())
        run(a, b, c, 1.25, beta)
        ref = reference(a, b, c0, 1.25, beta)
        assert np.isfinite(c).all() and np.linalg.norm(c - ref) / np.linalg.norm(ref) < 1e-5
    assert run.workspace_bytes == allocated  # allocated once, not per call
    # compiled what it launches, plus at most the other tile kernel (its occupancy sizes the split
    # the tile choice compares)
    launched = {L.kernel.kernel for L in run.plan.launches}
    assert launched <= set(fake_gpu) and all(x.startswith("gemmlab_tile_ld_") for x in set(fake_gpu) - launched)


def test_unaligned_operands_get_their_own_plan(fake_gpu):
    from gemmlab.runtime.launch import prepare

    M, N, K = 3, 132, 600  # M <= SKINNY_M: the skinny-M path
    run = prepare("dispatch", M, N, K)
    a, b, c0 = operands(M, N, K, seed=3)
    flat = arr(np.full(a.size + 1, np.nan))
    a_off = flat[1:].reshape(M, K)
    a_off[...] = a
    assert a_off.data.ptr % 16 == 4
    assert run.rung_for(a, b, c0).name == run.rung.name
    assert "skinny_m4_v0" in run.rung_for(a_off, b, c0).name and "skinny_m4_v1" in run.rung.name
    c = arr(np.full((M, N), np.nan))
    run(a_off, b, c, 1.0, 0.0)
    assert np.linalg.norm(c - reference(a, b, c0, 1.0, 0.0)) / np.linalg.norm(c) < 1e-5


def test_bad_calls_are_one_line_input_errors(fake_gpu):
    from gemmlab.runtime.launch import prepare

    run = prepare("dispatch", 4, 40, 8)
    a, b, c = operands(4, 40, 8)
    with pytest.raises(InputError, match="do not match the prepared"):
        run(a, b, arr(np.zeros((4, 41))))
    with pytest.raises(InputError, match="float32"):
        run(a.astype(np.float64).view(Arr), b, c)
    with pytest.raises(InputError, match="M=0"):
        prepare("dispatch", 0, 4, 4)


def test_blocks_per_sm_come_from_the_compiled_kernel(fake_gpu):
    from gemmlab.runtime.launch import prepare

    run = prepare("dispatch", 128, 128, 65536)
    small = paths.tile_kernel("small", 1, 1)
    # The fake kernel reports 64 registers: with 128 threads and 24 KiB of shared memory that is 8
    # blocks per SM on sm_90 (registers: 8 warps per sub-partition; shared memory would allow 9).
    assert run._blocks_per_sm(small) == 8
    assert run.plan.split == 256  # 4 tiles, 1056 slots -> 264 slices wanted, kc 249 -> 256


def test_dispatch_compiles_with_nvcc_when_the_toolkit_is_there(monkeypatch):
    # nvcc's code ran 5-9% faster than NVRTC's for the same tile kernel on the H100; without a
    # toolkit (a laptop, CuPy wheels only) the rung still runs, built by NVRTC.
    from gemmlab.errors import ToolMissing
    from gemmlab.runtime import dispatch_gemm, toolchain

    monkeypatch.setattr(toolchain, "find_nvcc", lambda: "/opt/cuda/bin/nvcc")
    assert dispatch_gemm.default_backend() == "nvcc"

    def missing():
        raise ToolMissing("nvcc not found")

    monkeypatch.setattr(toolchain, "find_nvcc", missing)
    assert dispatch_gemm.default_backend() == "nvrtc"
