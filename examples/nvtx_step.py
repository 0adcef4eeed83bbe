"""A training-step-like script for `gemmlab profile --script` and `gemmlab timeline --script`.

Warm-up iterations run outside the NVTX range "step"; the last iteration runs inside it, so

    gemmlab profile --script examples/nvtx_step.py --range step
    gemmlab timeline --script examples/nvtx_step.py

profiles only the kernels of the measured step (a cuBLAS SGEMM and an elementwise kernel).
"""

import cupy as cp
from cupy.cuda import nvtx

relu = cp.ElementwiseKernel("float32 x", "float32 y", "y = x > 0 ? x : 0", "gemmlab_example_relu")


def step(a, b):
    return relu(a @ b)


def main(n: int = 2048, warmup: int = 3) -> None:
    rng = cp.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=cp.float32)
    b = rng.standard_normal((n, n), dtype=cp.float32)
    for _ in range(warmup):
        step(a, b)
    nvtx.RangePush("step")
    out = step(a, b)
    nvtx.RangePop()
    cp.cuda.Device().synchronize()
    print(f"step done: {float(out.mean()):.4f}")


if __name__ == "__main__":
    main()
