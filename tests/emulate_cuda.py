"""Run the dispatch rung's CUDA kernels on the CPU (g++, one std::thread per CUDA thread), for tests on
machines without a GPU.

The kernel sources are compiled as they are, with ``GEMMLAB_HOST_EMULATION`` defined and a shim
header in front (``SHIM``): ``threadIdx``/``blockIdx`` are thread-local, ``__shared__`` variables are
function-local statics (blocks run one at a time, so a static is exactly one block's shared memory),
``__syncthreads`` is a ``std::barrier`` over the block's threads (a thread that returns drops out,
as an exited CUDA thread does), ``__shfl_xor_sync`` exchanges through a per-warp buffer between
two per-warp barriers, and cp.async (cp_async.cuh) is a synchronous copy into the emulated dynamic
shared memory. What this proves: the index arithmetic, guards, zero fills, slicing and reductions
of the real kernel text produce the right numbers; it says nothing about speed, memory ordering
beyond barriers, or the PTX paths that emulation replaces (the cp.async asm itself).

``Emulator(source).launch(symbol, grid, block, smem, args, buffers)`` runs one launch; pointer
arguments name entries of ``buffers`` (float32 numpy arrays, updated in place), optionally with an
element offset (``("A", 1)``).
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

SHIM = r"""
#include <barrier>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <algorithm>

#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))

struct dim3 { unsigned x = 1, y = 1, z = 1; };
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline void __trap() { std::fprintf(stderr, "__trap() called\n"); std::abort(); }

thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace emu {
// A barrier among the threads still running the current block: a thread that returns from the
// kernel drops out (as an exited CUDA thread no longer counts at __syncthreads).
struct Barrier {
    std::mutex m;
    std::condition_variable cv;
    int expected = 0, arrived = 0;
    long gen = 0;
    void reset(int n) { expected = n; arrived = 0; }
    void release() { arrived = 0; ++gen; cv.notify_all(); }
    void wait() {
        std::unique_lock<std::mutex> l(m);
        const long g = gen;
        if (++arrived == expected) { release(); return; }
        cv.wait(l, [&] { return gen != g; });
    }
    void drop() {
        std::unique_lock<std::mutex> l(m);
        --expected;
        if (arrived > 0 && arrived == expected) release();
    }
};
struct Warp {
    Barrier bar;
    float buf[32];
};
Barrier block_bar;
std::vector<Warp> warps;
std::vector<unsigned char> dyn;  // dynamic shared memory of the current launch
thread_local int tid = 0;
inline unsigned smem_offset(const void* p) {
    return unsigned(static_cast<const unsigned char*>(p) - dyn.data());
}
inline void copy_to_smem(unsigned dst, const float* src, bool pred, int bytes) {
    if (pred) std::memcpy(dyn.data() + dst, src, bytes);
    else std::memset(dyn.data() + dst, 0, bytes);
}
template <class T> T* dynamic_smem() { return reinterpret_cast<T*>(dyn.data()); }
inline unsigned dynamic_smem_size() { return unsigned(dyn.size()); }

// Blocks run one after another on one pool of threads (one per CUDA thread of a block).
inline void launch(dim3 grid, dim3 block, size_t smem, const std::function<void()>& body) {
    gridDim = grid;
    blockDim = block;
    const int n = int(block.x * block.y * block.z);
    if (n % 32) { std::fprintf(stderr, "block of %d threads: not whole warps\n", n); std::abort(); }
    const long blocks = long(grid.x) * grid.y * grid.z;
    warps = std::vector<Warp>(n / 32);
    auto fresh_block = [&]() {
        dyn.assign(smem, 0xA5);  // garbage, as real shared memory starts
        block_bar.reset(n);
        for (auto& w : warps) w.bar.reset(32);
    };
    fresh_block();
    std::barrier<std::function<void()>> between(n, std::function<void()>(fresh_block));
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (int t = 0; t < n; ++t) {
        threads.emplace_back([&, t]() {
            tid = t;
            threadIdx = dim3{unsigned(t % block.x), unsigned((t / block.x) % block.y),
                             unsigned(t / (block.x * block.y))};
            for (long b = 0; b < blocks; ++b) {
                blockIdx = dim3{unsigned(b % grid.x), unsigned((b / grid.x) % grid.y),
                                unsigned(b / (long(grid.x) * grid.y))};
                body();
                warps[t / 32].bar.drop();
                block_bar.drop();
                between.arrive_and_wait();  // the next block starts when this one is done
            }
        });
    }
    for (auto& th : threads) th.join();
}
}  // namespace emu

inline void __syncthreads() { emu::block_bar.wait(); }
inline float __shfl_xor_sync(unsigned, float v, int mask) {
    auto& w = emu::warps[emu::tid / 32];
    const int lane = emu::tid % 32;
    w.buf[lane] = v;
    w.bar.wait();
    const float r = w.buf[lane ^ mask];
    w.bar.wait();
    return r;
}
"""

_DRIVER_HEAD = r"""
namespace {
struct Buf { std::string name; float* data; size_t n; };
std::vector<Buf> bufs;
std::string dir;
float* buffer(const std::string& name) {
    for (auto& b : bufs) if (b.name == name) return b.data;
    const std::string path = dir + "/" + name + ".bin";
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) { std::fprintf(stderr, "no buffer %s\n", path.c_str()); std::exit(3); }
    std::fseek(f, 0, SEEK_END);
    const size_t bytes = size_t(std::ftell(f));
    std::fseek(f, 0, SEEK_SET);
    float* p = static_cast<float*>(std::aligned_alloc(256, bytes + 256));
    if (std::fread(p, 1, bytes, f) != bytes) std::exit(3);
    std::fclose(f);
    bufs.push_back({name, p, bytes / 4});
    return p;
}
float* ptr_arg(const char* s) {  // name:offset
    std::string t(s);
    const auto colon = t.find(':');
    return buffer(t.substr(0, colon)) + std::stoll(t.substr(colon + 1));
}
void save_all() {
    for (auto& b : bufs) {
        FILE* f = std::fopen((dir + "/" + b.name + ".bin").c_str(), "wb");
        std::fwrite(b.data, 4, b.n, f);
        std::fclose(f);
    }
}
}  // namespace

int main(int argc, char** argv) {
    // argv: symbol gx gy gz bx by bz smem dir args...
    if (argc < 10) return 2;
    const std::string sym = argv[1];
    const dim3 grid{unsigned(std::atoi(argv[2])), unsigned(std::atoi(argv[3])), unsigned(std::atoi(argv[4]))};
    const dim3 block{unsigned(std::atoi(argv[5])), unsigned(std::atoi(argv[6])), unsigned(std::atoi(argv[7]))};
    const size_t smem = size_t(std::atoll(argv[8]));
    dir = argv[9];
    char** a = argv + 10;
    (void)a;
"""

def _parse_expr(ctype: str, i: int) -> str:
    base = ctype.replace("__restrict__", "").replace("const", "").strip()
    if base == "int":
        return f"std::atoi(a[{i}])"
    if base == "long long":
        return f"std::atoll(a[{i}])"
    if base == "float":
        return f"std::strtof(a[{i}], nullptr)"
    if base == "float*":
        return f"ptr_arg(a[{i}])"
    raise ValueError(f"emulator: unsupported parameter type {ctype!r}")


def driver(kernels: Sequence[Any]) -> str:
    """main() dispatching on the kernel symbol (path kernels: ``.kernel`` and ``.signature``)."""
    out = [_DRIVER_HEAD]
    for k in kernels:
        # Arguments are parsed (and buffers loaded) once, before the threads start.
        decls = "".join(f"        auto p{i} = {_parse_expr(t, i)};\n" for i, (t, _) in enumerate(k.signature))
        args = ", ".join(f"p{i}" for i in range(len(k.signature)))
        out.append(f'    if (sym == "{k.kernel}") {{\n{decls}'
                   f"        emu::launch(grid, block, smem, [&]() {{ {k.kernel}({args}); }});\n"
                   f"        save_all();\n        return 0;\n    }}\n")
    out.append('    std::fprintf(stderr, "unknown kernel %s\\n", sym.c_str());\n    return 2;\n}\n')
    return "".join(out)


@functools.lru_cache(maxsize=None)
def have_gxx() -> bool:
    """Whether g++ is there and compiles C++20 with <barrier> (what the shim needs)."""
    if shutil.which("g++") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="gemmlab-emu-probe-") as d:
        src = Path(d) / "probe.cpp"
        src.write_text("#include <barrier>\nint main() { std::barrier<> b(1); b.arrive_and_wait(); }\n")
        res = subprocess.run(["g++", "-std=c++20", "-pthread", "-o", str(Path(d) / "probe"), str(src)],
                             capture_output=True, text=True)
        return res.returncode == 0


class Emulator:
    """One compiled emulation binary for path kernels of one source file."""

    def __init__(self, kernels: Sequence[Any], workdir: Path) -> None:
        from gemmlab.kernels import paths

        text = SHIM + "\n#define GEMMLAB_HOST_EMULATION 1\n" + paths.translation_unit(kernels) + driver(kernels)
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        self.kernels = {k.kernel: k for k in kernels}
        self.binary = workdir / f"emu_{key}"
        if not self.binary.exists():
            src = workdir / f"emu_{key}.cpp"
            src.write_text(text)
            cmd = ["g++", "-std=c++20", "-O1", "-pthread", "-w", "-o", str(self.binary), str(src)]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                raise RuntimeError(f"g++ failed:\n{res.stderr[-6000:]}")

    def launch(self, symbol: str, grid: Sequence[int], block: Sequence[int], smem: int,
               args: Sequence[Any], buffers: Mapping[str, np.ndarray]) -> None:
        """Run one launch; ``buffers`` (float32, C-contiguous) are read and written back in place."""
        with tempfile.TemporaryDirectory(prefix="gemmlab-emu-") as d:
            for name, arr in buffers.items():
                assert arr.dtype == np.float32 and arr.flags.c_contiguous, name
                arr.tofile(Path(d) / f"{name}.bin")
            argv = [str(self.binary), symbol, *map(str, grid), *map(str, block), str(smem), d]
            for v in args:
                if isinstance(v, tuple):  # (buffer name, element offset)
                    argv.append(f"{v[0]}:{v[1]}")
                elif isinstance(v, str):
                    argv.append(f"{v}:0")
                elif isinstance(v, float) or isinstance(v, np.floating):
                    argv.append(repr(float(np.float32(v))))
                else:
                    argv.append(str(int(v)))
            res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
            if res.returncode != 0:
                raise RuntimeError(f"emulated {symbol} failed ({res.returncode}): {res.stderr[-3000:]}")
            for name, arr in buffers.items():
                arr[...] = np.fromfile(Path(d) / f"{name}.bin", dtype=np.float32).reshape(arr.shape)


class PlanRunner:
    """Executes a ``gemmlab.runtime.dispatch.Plan`` launch by launch in the emulator, as
    ``DispatchedGemm`` does on the GPU (workspace buffers start as NaN: a kernel that reads a
    workspace element nobody wrote produces NaN)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._emus: dict[str, Emulator] = {}

    def _emulator(self, source: str) -> Emulator:
        if source not in self._emus:
            from gemmlab.kernels import paths

            self._emus[source] = Emulator([k for k in paths.all_path_kernels() if k.source == source],
                                          self.workdir)
        return self._emus[source]

    def run(self, plan: Any, A: np.ndarray, B: np.ndarray, C: np.ndarray, alpha: float, beta: float,
            offsets: Mapping[str, int] | None = None) -> int:
        """C (updated in place) = alpha * A @ B + beta * C by the plan. ``offsets``: operands stored
        that many elements past an aligned start (the plan must be for unaligned pointers then).

        Every operand is stored between guards: NaN before and after A and B (a read out of bounds
        poisons the result), GUARD around C. Returns how many of C's guard elements changed (writes
        out of bounds)."""
        # Each operand starts LEAD elements (16 bytes: alignment kept) past its buffer's start,
        # plus its requested offset; the lead is a guard too.
        offsets = {n: LEAD + dict(offsets or {}).get(n, 0) for n in ("A", "B", "C")}
        store: dict[str, np.ndarray] = {}
        for name, x in (("A", A), ("B", B), ("C", C)):
            off = offsets[name]
            flat = np.full(off + x.size + GUARD_N, np.nan, dtype=np.float32)
            flat[off:off + x.size] = x.ravel()
            if name == "C":
                flat[:off] = GUARD
                flat[off + x.size:] = GUARD
            store[name] = flat
        for name, n in plan.buffers.items():
            store[name] = np.full(n, np.nan, dtype=np.float32)
        scal = {"alpha": alpha, "beta": beta}
        for L in plan.launches:
            args = []
            for (ctype, _), v in zip(L.kernel.signature, L.args):
                if "*" in ctype:
                    args.append((v, offsets.get(v, 0)))  # workspace buffers: offset 0
                elif isinstance(v, str):
                    args.append(float(scal[v]))
                else:
                    args.append(v)
            self._emulator(L.kernel.source).launch(L.kernel.kernel, L.grid, L.block, L.smem, args, store)
        off, flat = offsets["C"], store["C"]
        C[...] = flat[off:off + C.size].reshape(C.shape)
        return int((flat[:off] != GUARD).sum() + (flat[off + C.size:] != GUARD).sum())


GUARD_N = 64
LEAD = 4
GUARD = np.float32(7777.0)
