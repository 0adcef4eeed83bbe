"""The child process that runs a user's kernel: ``python -m gemmlab.bench.user_child JOB RESULT``.

JOB (JSON, written by the parent, ``gemmlab.workflows.user_run``)::

    {"entry": "cuda" | "python", "file": "/abs/my.cu", "flags": {...declaration flags...},
     "text": "<the file's text, as hashed>", "function": "fn" (python), "mode": "bench" | "profile", "shape": [M, N, K] | {"n": 4096, ...},
     "alpha": 1.0, "beta": 0.0, "timing": {...TimingOptions...}, "seed": 0, "cublas": true,
     "ladder": ["naive_uncoalesced", ...], "warmup": 5}

RESULT (JSON, written atomically): ``{"status": "ok", "record": {...}, "ladder": {...} | null,
"checked": [...]}``, ``{"status": "wrong", "failed": {...}, "checked": [...]}``, or
``{"status": "error", "message": "...", "code": 2}`` for the user's input (a compile error, a
declaration that does not fit the shape). A CUDA error in the user's kernel ("an illegal memory
access was encountered") is ``{"status": "crash", "message": ...}``: the context is unusable after
it, so nothing more runs. Progress goes to stderr (``isolate.progress_line``).

``mode == "profile"``: compile, check once (a wrong kernel is not worth profiling), launch
``warmup`` times, then once inside the NVTX range ``gemmlab`` (what ncu profiles).
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Any

from gemmlab.bench.isolate import progress_line, write_result
from gemmlab.errors import UserError


def _cuda_errors() -> tuple[type, ...]:
    try:
        from cupy.cuda.driver import CUDADriverError
        from cupy.cuda.runtime import CUDARuntimeError

        return (CUDARuntimeError, CUDADriverError)
    except ImportError:
        return ()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m gemmlab.bench.user_child JOB RESULT", file=sys.stderr)
        return 2
    import json

    job_path, result_path = Path(argv[0]), Path(argv[1])
    job = json.loads(job_path.read_text(encoding="utf-8"))
    cuda_errors = _cuda_errors()
    try:
        result = run_job(job)
    except UserError as e:
        result = {"status": "error", "message": e.message, "code": e.code}
    except cuda_errors as e:  # the user's kernel broke the context: report it, run nothing more
        result = {"status": "crash", "message": f"CUDA error: {e}"}
    except Exception as e:  # noqa: BLE001 - a user's Python raising: one line, the traceback kept
        tb = traceback.format_exc()
        result = {"status": "crash", "message": f"{type(e).__name__}: {e}", "traceback": tb}
    write_result(result_path, result)
    return 0


def run_job(job: dict) -> dict:
    from gemmlab.runtime.device import require_gpu

    require_gpu()
    if job.get("entry") == "python":
        from gemmlab.bench.user_python import run_python_job

        return run_python_job(job)
    if job.get("entry") == "ladder":  # gemmlab's own rungs, to place a Python entry on
        return _run_ladder(job)
    return _run_cuda(job)


def _run_ladder(job: dict) -> dict:
    from gemmlab.bench.ladder import measure
    from gemmlab.bench.timer import TimingOptions
    from gemmlab.kernels import registry

    M, N, K = job["shape"]
    record = measure("ladder", [registry.get(n) for n in job["ladder"]], M, N, K, TimingOptions(**job.get("timing", {})),
                     seed=job.get("seed", 0), progress=progress_line)
    return {"status": "ok", "record": record.to_dict()}


def _run_cuda(job: dict) -> dict:
    from gemmlab.bench.timer import TimingOptions
    from gemmlab.bench.user import measure_user
    from gemmlab.kernels.declared import declare

    path = Path(job["file"])
    text = job["text"] if "text" in job else path.read_text(encoding="utf-8")  # the version the parent hashed
    decl = declare(path, text, job.get("flags") or {})
    shape = tuple(job["shape"])
    if job.get("mode") == "profile":
        return _profile_cuda(decl, path, text, shape, int(job.get("warmup", 5)))
    rungs = []
    if job.get("ladder"):
        from gemmlab.kernels import registry

        rungs = [registry.get(n) for n in job["ladder"]]
    outcome = measure_user(decl, path, text, shape, TimingOptions(**job.get("timing", {})),
                           alpha=job.get("alpha", 1.0), beta=job.get("beta", 0.0), seed=job.get("seed", 0),
                           with_cublas=job.get("cublas", True), ladder_rungs=rungs, progress=progress_line)
    checked = list(outcome.checked)
    if outcome.failed is not None:
        return {"status": "wrong", "failed": outcome.failed, "checked": checked}
    return {"status": "ok", "record": outcome.record.to_dict(), "checked": checked,
            "ladder": None if outcome.ladder is None else outcome.ladder.to_dict()}


def _profile_cuda(decl: Any, path: Path, text: str, shape: tuple, warmup: int) -> dict:
    import cupy

    from gemmlab.bench.ladder import GpuBench
    from gemmlab.bench.timer import TimingOptions
    from gemmlab.bench.user import user_target
    from gemmlab.profile.target import nvtx_range
    from gemmlab.profile.targets import NVTX_RANGE

    M, N, K = shape
    target = user_target(decl, path, text, M, N, K)
    run = target.prepare()

    from gemmlab.bench.env import ClockReader

    bench = GpuBench(TimingOptions(), ClockReader("unavailable"))  # nothing is timed under ncu
    check = bench.check(target, run)
    if not check.ok:
        return {"status": "wrong", "failed": {"shape": list(shape), "check": check.to_dict()}, "checked": []}
    a = bench._operand((M, K), decl.dtype)
    from gemmlab.kernels.families import b_shape

    b = bench._operand(b_shape(decl.dtype, K, N), decl.dtype)
    c = bench._operand((M, N), decl.out_dtype)
    for _ in range(warmup):
        run(a, b, c, 1.0, 0.0)
    cupy.cuda.get_current_stream().synchronize()
    with nvtx_range(NVTX_RANGE):
        run(a, b, c, 1.0, 0.0)
    cupy.cuda.get_current_stream().synchronize()
    return {"status": "ok", "launched": run.launched}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
