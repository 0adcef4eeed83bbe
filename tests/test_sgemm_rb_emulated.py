"""The register-blocked SGEMM probe (kernels/sgemm_rb.cu), executed on the CPU in the g++ emulation
of CUDA (tests/emulate_cuda.py: the real kernel text, one std::thread per CUDA thread), every
variant at shapes that are not multiples of its tile, against a float64 product.

Operands are stored as the kernel's preconditions allow and no more: A and B with row pitches
(lda, ldb) that are multiples of 4 and larger than their widths, the padding between width and
pitch and a guard before and after each matrix all NaN (a read out of bounds, or a padding element
that reaches a stored element of C, poisons the result); C with sentinels around it and in its row
padding (a write out of bounds is counted). beta = 0 runs on a C full of NaN (C must not be read);
beta = -0.5 on random C. Skipped without g++."""

from __future__ import annotations

import hashlib
import subprocess

import numpy as np
import pytest

from emulate_cuda import SHIM, Emulator, driver, have_gxx
from gemmlab.kernels import sgemm_rb

pytestmark = pytest.mark.skipif(not have_gxx(), reason="g++ with C++20 <barrier> not found: the CUDA emulation needs it")

ALPHA = 1.25
LEAD, TAIL = 4, 64  # guard elements before (16 bytes: alignment kept) and after each operand
SENTINEL = np.float32(7777.0)


def _r4(x: int) -> int:
    return -(-x // 4) * 4


# (M, N, K, ldc): ldc = N exercises the 4-byte epilogue when N % 4 != 0; ldc % 4 == 0 with
# ldc > N the 16-byte one with a partial float4 at the right edge.
SHAPES = [
    (70, 130, 33, 130),     # K % 4 != 0: A's last chunk straddles K (NaN padding past it)
    (129, 257, 64, 264),    # one row / column past a tile; 16-byte epilogue, partial at col 256
    (1, 200, 40, 200),      # a single row; 16-byte epilogue
    (200, 3, 16, 3),        # three columns: B chunks past N
    (33, 65, 3, 68),        # K < 4: one partial chunk, all but 3 rows of B's tile zero-filled
]


def _emulator(workdir):
    """emulate_cuda.Emulator for the probe's own translation unit (Emulator's constructor builds
    the dispatch rung's; launch() only needs ``binary`` and ``kernels``)."""
    variants = list(sgemm_rb.VARIANTS)
    text = (SHIM + "\n#define GEMMLAB_HOST_EMULATION 1\n" + sgemm_rb.translation_unit(variants)
            + driver(variants))
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    emu = Emulator.__new__(Emulator)
    emu.kernels = {v.kernel: v for v in variants}
    emu.binary = workdir / f"emu_rb_{key}"
    src = workdir / f"emu_rb_{key}.cpp"
    src.write_text(text)
    res = subprocess.run(["g++", "-std=c++20", "-O1", "-pthread", "-w", "-o", str(emu.binary), str(src)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"g++ failed:\n{res.stderr[-6000:]}")
    return emu


@pytest.fixture(scope="module")
def emu(tmp_path_factory):
    return _emulator(tmp_path_factory.mktemp("emu_rb"))


def _stored(x: np.ndarray, ld: int, fill: np.float32) -> np.ndarray:
    """x (rows x cols) in a flat buffer with row pitch ld, `fill` in the padding and guards."""
    rows, cols = x.shape
    flat = np.full(LEAD + rows * ld + TAIL, fill, dtype=np.float32)
    flat[LEAD:LEAD + rows * ld].reshape(rows, ld)[:, :cols] = x
    return flat


@pytest.mark.parametrize("variant", sgemm_rb.VARIANTS, ids=lambda v: v.name)
@pytest.mark.parametrize("M, N, K, ldc", SHAPES, ids=lambda x: str(x))
def test_variant_matches_float64(emu, variant, M, N, K, ldc):
    rng = np.random.default_rng(M * 7 + N * 13 + K)
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    C0 = rng.uniform(-1, 1, (M, N)).astype(np.float32)
    lda, ldb = _r4(K) + 4, _r4(N) + 4
    ref0 = ALPHA * (A.astype(np.float64) @ B.astype(np.float64))
    for beta in (0.0, -0.5):
        bufs = {"A": _stored(A, lda, np.float32(np.nan)), "B": _stored(B, ldb, np.float32(np.nan)),
                "C": _stored(np.full((M, N), np.nan, np.float32) if beta == 0 else C0, ldc, SENTINEL)}
        args = [M, N, K, lda, ldb, ldc, ALPHA, ("A", LEAD), ("B", LEAD), beta, ("C", LEAD)]
        emu.launch(variant.kernel, variant.grid(M, N), variant.block, variant.dynamic_smem, args, bufs)
        flat = bufs["C"]
        C = flat[LEAD:LEAD + M * ldc].reshape(M, ldc)
        outside = np.concatenate([flat[:LEAD], flat[LEAD + M * ldc:], C[:, N:].ravel()])
        assert (outside == SENTINEL).all(), f"beta={beta}: {(outside != SENTINEL).sum()} writes outside C"
        got = C[:, :N]
        assert np.isfinite(got).all(), f"beta={beta}: NaN in C (unwritten, C read at beta 0, or a bad read)"
        ref = ref0 + (beta * C0.astype(np.float64) if beta else 0.0)
        err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
        assert err < 1e-5, f"beta={beta}: relative error {err:.2e}"
