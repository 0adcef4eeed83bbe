"""Your own kernel on the GPU: each example through the isolated child (checked at odd shapes,
timed against cuBLAS), wrong, crashing and hanging kernels, a compile error, and the Python entries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gemmlab.bench.isolate import ChildFailed, ChildTimeout
from gemmlab.errors import UserError
from gemmlab.workflows.user_run import WrongResult, bench_user, read_input

pytestmark = pytest.mark.gpu
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "your-kernel"
QUICK = {"warmup_ms": 2.0, "rep_ms": 10.0}


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("0*.cu")))
def test_each_article_kernel_is_checked_timed_and_compared(name):
    run = bench_user(read_input(str(EXAMPLES / name)), (384, 320, 200), QUICK, place_it=False)
    rec = run.record
    user, ref = rec.rows
    assert user.correct and ref.reference and ref.correct
    assert [c["ok"] for c in rec.meta["checked"]] == [True, True, True]  # 384x320x200, 127x129x67, 65x33x1000
    assert rec.pct_of_reference(user) > 0 and user.measurement.timing["rounds"] == 2
    assert user.launched["registers"] > 0


def test_a_kernel_without_bounds_checks_fails_at_an_odd_shape_and_is_not_timed(tmp_path):
    src = tmp_path / "nobounds.cu"
    src.write_text("// gemmlab: block=16,16\n"
                   "__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {\n"
                   "  int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x; float acc = 0.f;\n"
                   "  for (int k = 0; k < K; ++k) acc += A[r * K + k] * B[k * N + c];\n"
                   "  C[r * N + c] = acc; }\n")
    with pytest.raises(WrongResult) as e:
        bench_user(read_input(str(src)), (256, 256, 256), QUICK, place_it=False)
    assert "127,129,67" in e.value.message and "not timed" in e.value.message


def test_an_illegal_address_is_one_line_and_gemmlab_goes_on(tmp_path):
    src = tmp_path / "oob.cu"
    src.write_text("// gemmlab: block=16,16\n"
                   "__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {\n"
                   "  C[(size_t)1 << 40] = A[0]; }\n")
    with pytest.raises(ChildFailed) as e:
        bench_user(read_input(str(src)), (64, 64, 64), QUICK, place_it=False)
    assert "illegal" in e.value.message.lower() or "CUDA" in e.value.message
    run = bench_user(read_input(str(EXAMPLES / "02_coalesced.cu")), (128, 128, 128), QUICK, place_it=False)
    assert run.record.rows[0].correct  # the parent process and its GPU are fine


def test_a_hanging_kernel_is_killed(tmp_path):
    src = tmp_path / "hang.cu"
    src.write_text("// gemmlab: block=16,16\n"
                   "__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {\n"
                   "  while (atomicAdd((int*)C, 0) != 12345) {} }\n")  # C holds the poison NaN: never 12345
    with pytest.raises(ChildTimeout):
        bench_user(read_input(str(src)), (64, 64, 64), QUICK, place_it=False, timeout_s=20)


def test_a_compile_error_shows_the_numbered_source(tmp_path):
    src = tmp_path / "typo.cu"
    src.write_text("// gemmlab: block=16,16\n"
                   "__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {\n"
                   "  C[0] = A[0] + undefined_name; }\n")
    with pytest.raises(UserError) as e:
        bench_user(read_input(str(src)), (64, 64, 64), QUICK, place_it=False)
    assert e.value.code == 2 and "3 |   C[0] = A[0] + undefined_name; }" in e.value.message
    assert "-lineinfo" in e.value.message


def test_placement_measures_the_ladder_once_when_none_is_stored(tmp_path):
    run = bench_user(read_input(str(EXAMPLES / "02_coalesced.cu")), (256, 256, 256), QUICK, db=tmp_path / "x.sqlite")
    assert run.ladder is not None and run.ladder.kind == "ladder"
    assert run.record.meta["placement"]["text"]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_nvcc_compiles_a_non_template_kernel():
    run = bench_user(read_input(str(EXAMPLES / "02_coalesced.cu"), {"compiler": "nvcc"}), (128, 128, 128), QUICK,
                     place_it=False)
    assert run.record.rows[0].correct


def _has(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


@pytest.mark.skipif(not _has("triton"), reason="triton is not installed")
def test_triton_matmul_through_the_python_entry(tmp_path):
    run = bench_user(read_input(str(EXAMPLES / "triton_matmul.py") + ":matmul"), (512, 384, 256), QUICK,
                     db=tmp_path / "runs.sqlite")
    user, ref = run.record.rows
    assert user.correct and ref.reference and run.record.meta["dtype"] == "bf16"
    assert run.ladder.meta["dtype"] == "bf16" and run.record.meta["placement"]["text"]  # placed on the BF16 ladder


@pytest.mark.skipif(not _has("triton"), reason="triton is not installed")
def test_triton_softmax_through_a_gpu_mode_spec():
    run = bench_user(read_input(str(EXAMPLES / "triton_softmax.py")), {"rows": 1024, "cols": 1000}, QUICK)
    user, ref = run.record.rows
    assert user.correct and ref.reference and user.extra["bytes"] == 2 * 1024 * 1000 * 4


def test_a_cuda_softmax_through_a_spec():
    run = bench_user(read_input(str(EXAMPLES / "row_softmax_spec.py")), None, QUICK)
    assert run.record.rows[0].correct and run.record.meta["convention"] == "gpumode"


@pytest.mark.skipif(not _has("triton"), reason="triton is not installed")
def test_a_kernelbench_model_new():
    run = bench_user(read_input(str(EXAMPLES / "kernelbench_swish.py")), None, QUICK)
    user, ref = run.record.rows
    assert user.correct and ref.reference and run.record.meta["convention"] == "kernelbench"


HGEMM = """#include <cuda_fp16.h>
// gemmlab: block=16,16
__global__ void hgemm(const __half* A, const __half* B, OUT* C, int M, int N, int K) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M || col >= N) return;
  ACC acc = ACC(0.f);
  for (int k = 0; k < K; ++k) acc = STEP;
  C[row * N + col] = STORE;
}
"""


@pytest.mark.parametrize("out", ["__half", "float"])
def test_an_fp16_kernel_is_checked_and_timed_against_cublas_fp16(tmp_path, out):
    src = tmp_path / "hgemm.cu"
    src.write_text(HGEMM.replace("OUT", out).replace("ACC", "float")
                   .replace("STEP", "acc + __half2float(A[row * K + k]) * __half2float(B[k * N + col])")
                   .replace("STORE", "__float2half(acc)" if out == "__half" else "acc"))
    run = bench_user(read_input(str(src)), (256, 320, 192), QUICK, place_it=False)
    user, ref = run.record.rows
    assert run.record.meta["dtype"] == "fp16" and user.correct and ref.correct and ref.reference
    assert "CUDA_R_16F" in ref.info["summary"]


def test_an_fp16_kernel_that_accumulates_in_half_fails_the_check(tmp_path):
    src = tmp_path / "hgemm_half_acc.cu"
    src.write_text(HGEMM.replace("OUT", "__half").replace("ACC", "__half")
                   .replace("STEP", "__hfma(A[row * K + k], B[k * N + col], acc)").replace("STORE", "acc"))
    with pytest.raises(WrongResult, match="FP16-input"):
        bench_user(read_input(str(src)), (128, 128, 1024), QUICK, place_it=False)


@pytest.mark.parametrize("rung", ["blocktile_2d", "warptiling", "mma_sync_bf16", "wgmma_bf16"])
def test_an_exported_rung_benches_unchanged_as_a_user_file(tmp_path, rung):
    from gemmlab.kernels import registry
    from gemmlab.kernels.export import user_file

    r = registry.get(rung)
    src = tmp_path / f"my_{rung}.cu"
    src.write_text(user_file(r))
    run = bench_user(read_input(str(src)), (512, 384, 256), QUICK, place_it=False)
    assert run.record.rows[0].correct and run.record.meta["dtype"] == r.dtype


@pytest.mark.ncu
def test_profile_reports_the_kernels_own_failure_not_ncus(tmp_path):
    import shutil as sh

    from gemmlab.profile.runner import find_ncu
    from gemmlab.workflows.user_profile import profile_user

    if sh.which("ncu") is None:
        pytest.skip("ncu is not on PATH")
    src = tmp_path / "nobounds.cu"
    src.write_text("// gemmlab: block=16,16\n"
                   "__global__ void k(const float* A, const float* B, float* C, int M, int N, int K) {\n"
                   "  int r = blockIdx.y * 16 + threadIdx.y, c = blockIdx.x * 16 + threadIdx.x;\n"
                   "  if (r < M && c < N && c % 2 == 0) C[r * N + c] = 0.f; }\n")  # leaves half of C unwritten
    with pytest.raises(WrongResult, match="not profiled"):
        profile_user(read_input(str(src)), (64, 64, 64), find_ncu(None), timeout_s=300)
