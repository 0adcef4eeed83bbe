"""The dispatch rung's kernels, executed (CPU only): each plan runs launch by launch in a g++
emulation of CUDA (tests/emulate_cuda.py: the real kernel text, one std::thread per CUDA thread)
and is compared with a float64 product. Covers every path - skinny M and N (16-byte and 4-byte),
split-K with its reduction (including a count not a multiple of 4), padded copies of A, B or both,
the 4-byte policy, unaligned pointers - with C poisoned (NaN) for beta = 0, beta != 0, NaN guards
around A and B (an out-of-bounds read poisons the result) and sentinels around C (an out-of-bounds
write is counted). Skipped without g++. The GPU tests (tests/gpu/test_dispatch_gpu.py) run the same
plans on the device at full size."""

from __future__ import annotations

import numpy as np
import pytest

from emulate_cuda import PlanRunner, have_gxx
from gemmlab.runtime import dispatch as D
from test_dispatch_plan import H100

pytestmark = pytest.mark.skipif(not have_gxx(), reason="g++ with C++20 <barrier> not found: the CUDA emulation needs it")

ALPHA, BETA = 1.25, -0.5


@pytest.fixture(scope="module")
def runner(emu_workdir):
    return PlanRunner(emu_workdir)


def _check(runner, M, N, K, ops=D.Operands(), policy=D.Policy(), expect=None, seed=0):
    p = D.plan(M, N, K, H100, ops, policy)
    if expect is not None:
        assert p.name.startswith(expect), D.describe(p)
    rng = np.random.default_rng(seed + M * 7 + N * 13 + K)
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    C0 = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    offs = {n: 1 for n, ok in (("A", ops.a16), ("B", ops.b16), ("C", ops.c16)) if not ok}
    ref0 = ALPHA * (A.astype(np.float64) @ B.astype(np.float64))
    for beta in (0.0, BETA):
        C = np.full((M, N), np.nan, np.float32) if beta == 0 else C0.copy()
        oob = runner.run(p, A, B, C, ALPHA, beta, offs)
        ref = ref0 + (beta * C0.astype(np.float64) if beta else 0.0)
        assert oob == 0, f"{D.describe(p)}: {oob} writes outside C"
        assert np.isfinite(C).all(), f"{D.describe(p)} beta={beta}: NaN in C (unwritten or bad read)"
        err = np.linalg.norm(C - ref) / np.linalg.norm(ref)
        assert err < 1e-5, f"{D.describe(p)} beta={beta}: relative error {err:.2e}"
    return p


@pytest.mark.parametrize("dims, expect", [
    ((1, 300, 1000), "skinny-M split-K"),  # 16-byte, split: 3 column blocks x slices
    ((3, 257, 300), "skinny-M"),  # 4-byte (N odd), MR = 4 > M
    ((4, 128, 64), "skinny-M: skinny_m4_v1"),  # one slice: alpha, beta in the kernel
    ((16, 128, 512), "vector"),  # M > SKINNY_M: 64x64 tiles (measured faster at M = 16 on the H100)
    ((3, 129, 2000), "skinny-M split-K"),  # odd N, split, count 387 (reduce tail)
    ((300, 1, 1000), "skinny-N split-K"),
    ((33, 16, 512), "skinny-N split-K"),  # NR = 16: the 64-value reduce-scatter
    ((70, 3, 77), "skinny-N: skinny_n4_v0"),  # K odd: 4-byte A loads, N < NR
    ((7, 7, 2000), "skinny-N split-K"),  # both skinny
    ((9, 5, 1), "skinny-N"),  # K = 1
])
def test_skinny_paths(runner, dims, expect):
    _check(runner, *dims, expect=expect)


@pytest.mark.parametrize("dims, policy, expect", [
    ((68, 68, 600), D.Policy(), "vector split-K"),
    ((150, 140, 64), D.Policy(tile="big"), "vector: tile_ld_64x128_v1c1"),
    ((200, 300, 77), D.Policy(tiny=False), "padded: pad2 + tile_ld_64x64_v1c1"),  # A padded, N % 4 == 0
    ((96, 130, 41), D.Policy(tiny=False), "scalar"),  # copies not worth it at this size
    ((150, 141, 513), D.Policy(tile="big", split=3), "scalar split-K 3"),
    ((33, 65, 17), D.Policy(odd="scalar", tiny=False), "scalar"),
    ((127, 127, 400), D.Policy(split=2), "scalar split-K 2"),
    ((17, 17, 17), D.Policy(tiny=False), "scalar"),
    # the tiny kernel: guarded 4-byte loads at any shape, partial blocks on both edges, K < 32
    ((17, 17, 17), D.Policy(), "tiny: tiny_32x8"),
    ((96, 130, 41), D.Policy(), "tiny: tiny_32x8"),
    ((9, 33, 70), D.Policy(skinny=False), "tiny: tiny_32x8"),
    ((20, 200, 300), D.Policy(tiny=True), "tiny: tiny_32x8"),  # K > 256, forced
])
def test_tile_paths(runner, dims, policy, expect):
    _check(runner, *dims, policy=policy, expect=expect)


def test_padded_copies_of_both_operands_with_split_k(runner):
    # Force the copies at a size the rule would run on 4-byte loads: the pad kernel for A and B
    # in one launch, the 16-byte kernel on the copies (lda = 260, ldb = 132), a 4-byte epilogue
    # into the workspace (N = 130), the reduction.
    old = D.PAD_MAX_FRACTION
    try:
        D.PAD_MAX_FRACTION = 1e9
        p = _check(runner, 100, 130, 257, expect="padded split-K 2: pad2 + tile_ld_64x64_v1c0")
        assert set(p.buffers) == {"Ap", "Bp", "W"}
        p = _check(runner, 65, 131, 30, policy=D.Policy(tile="big"), expect="padded: pad2 + tile_ld_64x128_v1c0")
        assert set(p.buffers) == {"Ap", "Bp"}
    finally:
        D.PAD_MAX_FRACTION = old


@pytest.mark.parametrize("ops", [D.Operands(a16=False), D.Operands(b16=False), D.Operands(c16=False),
                                 D.Operands(False, False, False)], ids=["A", "B", "C", "ABC"])
def test_unaligned_pointers(runner, ops):
    old = D.PAD_MAX_FRACTION
    try:
        D.PAD_MAX_FRACTION = 1e9  # copy whatever is unaligned
        _check(runner, 68, 132, 260, ops=ops)
        _check(runner, 2, 132, 600, ops=ops)  # skinny-M: 4-byte loads when A or B is off
        _check(runner, 132, 2, 600, ops=ops)  # skinny-N: 4-byte A loads when A is off
    finally:
        D.PAD_MAX_FRACTION = old
