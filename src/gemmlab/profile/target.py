"""The program ``gemmlab profile RUNG`` runs under ncu: warm-up launches, then one inside NVTX.

    python -m gemmlab.profile.target --rung coalesced --shape 2048,2048,2048 --warmup 5

Fresh random inputs; the rung is compiled before the first launch (``prepare``), launched
``--warmup`` times, then once more inside the NVTX push/pop range ``gemmlab`` — the launch ncu
profiles (``--launch-skip W`` on the kernel's name, or ``--nvtx-include gemmlab/``). It prints the
kernel symbol it launched on stderr so a filter mismatch can be told apart from a wrong rung.
Errors are one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Iterator, Optional

from gemmlab.problem import parse_shape
from gemmlab.errors import UserError
from gemmlab.profile.targets import NVTX_RANGE


@contextlib.contextmanager
def nvtx_range(name: str) -> Iterator[None]:
    """An NVTX push/pop range through CuPy (or PyTorch, where CuPy was built without NVTX)."""
    push = pop = None
    try:
        from cupy.cuda import nvtx as _nvtx

        if getattr(_nvtx, "available", True):
            push, pop = _nvtx.RangePush, _nvtx.RangePop
    except ImportError:
        pass
    if push is None:
        try:
            import torch.cuda.nvtx as _tnvtx

            push, pop = _tnvtx.range_push, _tnvtx.range_pop
        except ImportError:
            raise UserError("NVTX is not available (CuPy without NVTX and no PyTorch); "
                            "profile by kernel name instead") from None
    push(name)
    try:
        yield
    finally:
        pop()


def run(rung: str, shape: tuple[int, int, int], warmup: int, range_name: str = NVTX_RANGE) -> str:
    """Launch ``rung`` warmup + 1 times; the last one inside the NVTX range. Returns the kernel symbol."""
    from gemmlab.kernels import registry
    from gemmlab.kernels.families import b_shape
    from gemmlab.runtime.device import require_gpu
    from gemmlab.runtime.launch import prepare

    cupy = require_gpu()
    M, N, K = shape
    r = registry.get(rung)
    rng = cupy.random.default_rng()
    a = rng.standard_normal((M, K), dtype=cupy.float32)
    b = rng.standard_normal(b_shape(r.dtype, K, N), dtype=cupy.float32)  # fp8: N x K
    c = cupy.full((M, N), cupy.nan, dtype=cupy.float32)  # poisoned: an unwritten tail stays NaN
    if r.dtype in ("bf16", "fp8"):  # tensor-core ladders: bit patterns (gemmlab.numerics.bf16/fp8)
        from gemmlab.numerics import bf16, fp8

        conv = bf16.to_bits if r.dtype == "bf16" else fp8.to_bits
        a, b = conv(a), conv(b)
        if r.out_dtype == "bf16":
            c = bf16.to_bits(c)
    launch = prepare(r, M, N, K)
    for _ in range(warmup):
        launch(a, b, c)
    cupy.cuda.Device().synchronize()
    with nvtx_range(range_name):
        launch(a, b, c)
        cupy.cuda.Device().synchronize()
    if c.dtype == cupy.uint16:
        from gemmlab.numerics.bf16 import from_bits

        c = from_bits(c)
    if not bool(cupy.isfinite(c).all()):
        raise UserError(f"rung {rung} at {M}x{N}x{K}: the output has NaN/inf; the kernel did not write all of C")
    return launch.rung_for(a, b, c).kernel


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gemmlab.profile.target", description=__doc__.splitlines()[0])
    p.add_argument("--rung", required=True)
    p.add_argument("--shape", required=True, help="M,N,K")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--range", default=NVTX_RANGE, dest="range_name")
    args = p.parse_args(argv)
    try:
        kernel = run(args.rung, parse_shape(args.shape), args.warmup, args.range_name)
    except UserError as e:
        print(f"gemmlab.profile.target: error: {e.message}", file=sys.stderr)
        return 2
    print(f"gemmlab.profile.target: launched {kernel} {args.warmup + 1} times, the last inside NVTX range "
          f"{args.range_name!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
