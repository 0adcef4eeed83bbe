"""Host cost of one kernel launch with packed arguments: cuda-bindings' cuLaunchKernel (what packed_launch uses)
against ctypes calling libcuda's cuLaunchKernel directly, and CuPy's own launch; the same empty kernel, 3 args.
Best of 20 repeats of 200 launches, the GPU drained between repeats."""
import ctypes
import json
import sys
import time

import cupy
import numpy as np
from cuda.bindings import driver as cu

from gemmlab.runtime import packed_launch

k = cupy.RawKernel(r'extern "C" __global__ void nop(int a, float b, unsigned long long c) {}', "nop")
args = (np.int32(1), np.float32(2.0), np.uint64(3))
k((1,), (32,), args)
cupy.cuda.Device().synchronize()
stream = cupy.cuda.get_current_stream().ptr
fast = packed_launch.packed(k, (1, 1, 1), (32, 1, 1), 0, args)
bufs, params = fast.keep
lib = ctypes.CDLL("libcuda.so.1")
launch = lib.cuLaunchKernel
launch.restype = ctypes.c_int
launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
fn = packed_launch.function_ptr(k)
addr = ctypes.addressof(params)
cfn, cs = cu.CUfunction(fn), cu.CUstream(stream)


def raw_ctypes():
    if launch(fn, 1, 1, 1, 32, 1, 1, 0, stream, addr, None):
        raise RuntimeError


def raw_bindings():
    cu.cuLaunchKernel(cfn, 1, 1, 1, 32, 1, 1, 0, cs, addr, 0)


sides = {"packed_launch (cuda-bindings, as used)": lambda: fast(stream), "cuda-bindings call alone": raw_bindings,
         "ctypes libcuda": raw_ctypes, "CuPy RawKernel": lambda: k((1,), (32,), args)}
res = {}
for name, f in sides.items():
    best = float("inf")
    for _ in range(20):
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for _ in range(200):
            f()
        best = min(best, (time.perf_counter() - t0) / 200 * 1e6)
    res[name] = round(best, 2)
    print(name, res[name], "us", flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
