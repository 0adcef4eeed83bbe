"""A user's kernel behind a Python entry point (``file.py:fn``), in the child process.

Three conventions, picked from what the file defines:

- **a GEMM callable** ``fn(a, b) -> c`` on torch tensors (a Triton matmul's launcher, a CuPy or
  torch function): checked at the run's shape and at ``CHECK_SHAPES`` against a float64 product
  with gemmlab's derived bounds (``bench.check.evaluate``), timed against cuBLAS at its best for the
  dtype in interleaved rounds, like a ``.cu`` kernel. The dtype is the file's ``GEMMLAB_DTYPE``
  ("fp32" or "bf16"; fp32 by default).
- **GPU MODE's** ``generate_input(**spec)`` / ``ref_kernel(data)`` / ``custom_kernel(data)`` (any
  kernel: a softmax, a reduction): the shapes are the file's ``benchmarks`` (timed) and ``tests``
  (checked) lists of keyword sets, as in a task.yml; ``flops(**spec)`` and ``bytes_moved(**spec)``,
  where defined, give the roofline's work. The output is compared with ``ref_kernel``'s like
  ``torch.testing.assert_close`` (its default tolerances per dtype, or the file's ``RTOL``/``ATOL``),
  with NaN and inf failing; ``ref_kernel`` is timed beside it as the reference.
- **KernelBench's** ``Model`` / ``ModelNew`` / ``get_inputs()`` / ``get_init_inputs()``: both
  models built from the same seed, outputs compared with KernelBench's ``allclose`` tolerance
  (1e-2), both timed.

A wrong result stops the run before any timing, as for a ``.cu`` kernel.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable, Optional

from gemmlab.bench.isolate import progress_line
from gemmlab.errors import InputError

GEMM_DTYPES = {"fp32": "float32", "bf16": "bfloat16"}
KERNELBENCH_TOL = 1e-2  # KernelBench's allclose atol and rtol
N_SEEDS = 2  # fresh inputs per checked shape (GPU MODE re-checks with new seeds too)


def load_module(path: Path) -> Any:
    """The user's file as a module (its folder on sys.path, so its own imports work)."""
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"gemmlab_user_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise InputError(f"{path}: cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def convention(module: Any, function: Optional[str]) -> str:
    if hasattr(module, "generate_input") and hasattr(module, "ref_kernel"):
        return "gpumode"
    if hasattr(module, "ModelNew") and hasattr(module, "Model") and hasattr(module, "get_inputs"):
        return "kernelbench"
    if function and callable(getattr(module, function, None)):
        return "gemm"
    names = ", ".join(n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_"))
    raise InputError(f"{module.__file__}: name the function (file.py:FN; callables: {names or 'none'}), or define "
                     f"generate_input/ref_kernel/custom_kernel (GPU MODE) or Model/ModelNew/get_inputs (KernelBench)")


def run_python_job(job: dict) -> dict:
    path = Path(job["file"])
    module = load_module(path)
    conv = convention(module, job.get("function"))
    if conv == "gemm":
        return _gemm(module, job)
    return _spec(module, conv, job)


# --- shared timing ----------------------------------------------------------------------------
def _bench(job: dict) -> Any:
    from gemmlab.bench import env as envmod
    from gemmlab.bench.ladder import GpuBench
    from gemmlab.bench.timer import TimingOptions
    from gemmlab.runtime import cublas

    env, reader = envmod.capture(math_mode=cublas.math_mode())
    bench = GpuBench(TimingOptions(**job.get("timing", {})), reader, seed=job.get("seed", 0))
    env["l2_flush_bytes"] = bench.backend.l2_flush_bytes
    return env, reader, bench


def _time(bench: Any, reader: Any, fn: Callable[[], Any], spec: Any, name: str, i: int, total: int) -> tuple:
    """(Measurement, clocks) of ``fn`` by the harness's rules (warm-up, L2 flush, raw samples)."""
    from gemmlab.bench.stats import Measurement
    from gemmlab.bench.timer import time_fn

    clocks: dict = {"source": reader.source}

    def phase(p: str) -> None:
        if p == "measure":
            clocks["sm_mhz_before"] = reader.sm_mhz()
        progress_line(name, i, total, p)

    result = time_fn(fn, bench.backend, bench.options, on_phase=phase)
    clocks["sm_mhz_after"] = reader.sm_mhz()
    return Measurement(spec, result.samples_s, result.to_dict()), clocks


def _profile_once(fn: Callable[[], Any], warmup: int) -> dict:
    import torch

    from gemmlab.profile.target import nvtx_range
    from gemmlab.profile.targets import NVTX_RANGE

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with nvtx_range(NVTX_RANGE):
        fn()
    torch.cuda.synchronize()
    return {"status": "ok"}


# --- a GEMM callable ----------------------------------------------------------------------------
def _gemm(module: Any, job: dict) -> dict:
    import cupy
    import torch

    from gemmlab.bench.check import evaluate, reference
    from gemmlab.bench.results import Check, Row, RunRecord
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.interleave import ROUNDS, interleaved, merge
    from gemmlab.bench.user import CHECK_SHAPES, reference_target

    fn = getattr(module, job["function"])
    dtype = getattr(module, "GEMMLAB_DTYPE", "fp32")
    if dtype not in GEMM_DTYPES:
        raise InputError(f"{job['file']}: GEMMLAB_DTYPE = {dtype!r}; expected one of {', '.join(GEMM_DTYPES)}")
    tdtype = getattr(torch, GEMM_DTYPES[dtype])
    name = job.get("name") or f"{Path(job['file']).stem}.{job['function']}"
    M, N, K = job.get("shape") or (2048, 2048, 2048)  # the first seed article's size
    gen = torch.Generator(device="cuda").manual_seed(job.get("seed", 0))

    def inputs(m: int, n: int, k: int) -> tuple:
        a = (torch.rand((m, k), device="cuda", generator=gen) * 2 - 1).to(tdtype)
        b = (torch.rand((k, n), device="cuda", generator=gen) * 2 - 1).to(tdtype)
        return a, b

    def check(m: int, n: int, k: int) -> Any:
        a, b = inputs(m, n, k)
        out = fn(a, b)
        torch.cuda.synchronize()
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != (m, n):
            raise InputError(f"{job['file']}:{job['function']} returned {type(out).__name__} "
                             f"{tuple(getattr(out, 'shape', ()))}; expected a {m}x{n} torch tensor")
        xp = cupy
        a64 = xp.asarray(a.float().contiguous()).astype(xp.float64)
        b64 = xp.asarray(b.float().contiguous()).astype(xp.float64)
        ref, absref = reference(a64, b64, 1.0, 0.0, xp=xp)
        tol = None
        if dtype == "bf16":
            from gemmlab.numerics.bf16 import tolerance

            tol = tolerance(k, "bf16" if out.dtype == torch.bfloat16 else "fp32")
            got = xp.asarray(out.contiguous().view(torch.int16)).view(xp.uint16) if out.dtype == torch.bfloat16 \
                else xp.asarray(out.float().contiguous())
        else:
            got = xp.asarray(out.float().contiguous())
        return evaluate(got, ref, absref, k, xp=xp, tol=tol)

    checked = []
    for s in [(M, N, K), *[c for c in CHECK_SHAPES if c != (M, N, K)]]:
        for _ in range(N_SEEDS):
            progress_line(name, 0, 3, f"check {s[0]}x{s[1]}x{s[2]}")
            res = check(*s)
            if not res.ok:
                checked.append({"shape": list(s), "ok": False, "reason": res.reason, "rel_err": res.rel_err})
                return {"status": "wrong", "failed": {"shape": list(s), "check": res.to_dict()}, "checked": checked}
        checked.append({"shape": list(s), "ok": True, "reason": "ok", "rel_err": res.rel_err})
    a, b = inputs(M, N, K)
    if job.get("mode") == "profile":
        return _profile_once(lambda: fn(a, b), int(job.get("warmup", 5)))
    final = check(M, N, K)  # a fresh draw for the record: a racy kernel failing it is still never timed
    if not final.ok:
        return {"status": "wrong", "failed": {"shape": [M, N, K], "check": final.to_dict()}, "checked": checked}
    env, reader, bench = _bench(job)
    spec = BenchSpec(name, M, N, K, dtype=dtype, out_dtype=dtype)
    ref_t = reference_target(dtype, dtype, M, N, K, 1.0, 0.0)
    ref_run = ref_t.prepare()
    ref_check = Check.of(bench.check(ref_t, ref_run))
    ca, cb, cc = bench._operand((M, K), dtype), bench._operand((K, N), dtype), bench._operand((M, N), dtype)
    sides = [lambda: fn(a, b), lambda: ref_run(ca, cb, cc, 1.0, 0.0)]
    specs = [spec, ref_t.spec]
    timed = interleaved(sides, lambda i, f: _time(bench, reader, f, specs[i], [name, "cublas"][i], i + 1, 3), ROUNDS)
    (m_user, c_user), (m_ref, c_ref) = merge(timed[0]), merge(timed[1])
    info = {"family": "user", "summary": f"{Path(job['file']).name}: {job['function']}(a, b)", "source": job["file"],
            "function": job["function"], "dtype": dtype, "out_dtype": dtype}
    rows = [Row(m_user, Check.of(final), False, info, {}, c_user), Row(m_ref, ref_check, True, dict(ref_t.info), {}, c_ref)]
    from gemmlab.bench import env as envmod
    from gemmlab.bench.ladder import with_tensor_peaks

    if dtype == "bf16":
        rows = with_tensor_peaks(rows, env, "bf16")
    peak = envmod.tensor_peak(dtype, env) if dtype == "bf16" else envmod.fp32_peak(env)
    meta = {"shape": {"M": M, "N": N, "K": K}, "peak": peak, "dtype": dtype, "checked": checked,
            "options": {"timing": bench.options.to_dict(), "seed": job.get("seed", 0), "dtype": dtype,
                        "out_dtype": dtype, "rounds": ROUNDS, "cublas": True}}
    return {"status": "ok", "record": RunRecord("user", tuple(rows), env, meta).to_dict(), "checked": checked,
            "ladder": None}


# --- any kernel, through a spec -------------------------------------------------------------------
def _spec_shapes(module: Any, job: dict) -> tuple[list[dict], list[dict]]:
    """(shapes to check, the shape to time): the job's own, else the file's tests and benchmarks."""
    given = job.get("shape")
    tests = list(getattr(module, "tests", None) or [])
    benchmarks = list(getattr(module, "benchmarks", None) or [])
    if isinstance(given, dict) and given:
        timed = dict(given)
    elif benchmarks:
        timed = dict(benchmarks[0])
    elif tests:
        timed = dict(tests[-1])
    else:
        raise InputError(f"{job['file']}: no shape to run: define benchmarks = [{{...}}] (GPU MODE's task.yml lists) "
                         f"or tests = [...] in the file")
    return [*tests, timed], [timed]


def clone(data: Any) -> Any:
    """A deep copy of a spec's data (tensors cloned, containers rebuilt), as GPU MODE's evaluator does:
    a kernel that writes into its inputs, or an output buffer that is part of ``data``, must not let
    the kernel and the reference see one tensor."""
    import torch

    if isinstance(data, torch.Tensor):
        return data.clone()
    if isinstance(data, (list, tuple)):
        return type(data)(clone(x) for x in data)
    if isinstance(data, dict):
        return {k: clone(v) for k, v in data.items()}
    return data


def _close(out: Any, ref: Any, rtol: Optional[float], atol: Optional[float]) -> tuple[bool, str, float]:
    """assert_close's rule (its per-dtype defaults unless given), NaN/inf in the output failing."""
    import torch

    outs = out if isinstance(out, (tuple, list)) else (out,)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    if len(outs) != len(refs):
        return False, f"returned {len(outs)} outputs, the reference {len(refs)}", float("nan")
    worst = 0.0
    for o, r in zip(outs, refs):
        if not isinstance(o, torch.Tensor) or tuple(o.shape) != tuple(r.shape):
            return False, f"output shape {tuple(getattr(o, 'shape', ()))}, expected {tuple(r.shape)}", float("nan")
        bad = (~torch.isfinite(o.float())) & torch.isfinite(r.float())
        if bool(bad.any()):
            return False, f"{int(bad.sum())} NaN/inf elements where the reference is finite", float("nan")
        try:
            torch.testing.assert_close(o, r.to(o.dtype), rtol=rtol, atol=atol, equal_nan=True)
        except AssertionError as e:
            return False, " ".join(str(e).split())[:300], float("nan")
        diff = (o.double() - r.double()).abs()
        worst = max(worst, float(diff.max()) if diff.numel() else 0.0)
    return True, "ok", worst


def _spec(module: Any, conv: str, job: dict) -> dict:
    import torch

    from gemmlab.bench.results import Check, Row, RunRecord
    from gemmlab.bench.spec import BenchSpec
    from gemmlab.bench.interleave import ROUNDS, interleaved, merge

    name = job.get("name") or Path(job["file"]).stem
    rtol, atol = getattr(module, "RTOL", None), getattr(module, "ATOL", None)
    if (rtol is None) != (atol is None):
        raise InputError(f"{job['file']}: define both RTOL and ATOL, or neither (torch.testing's defaults)")
    if conv == "kernelbench":
        rtol = atol = KERNELBENCH_TOL
        init = list(module.get_init_inputs()) if hasattr(module, "get_init_inputs") else []
        torch.manual_seed(job.get("seed", 0))
        ref_model = module.Model(*init).cuda()
        torch.manual_seed(job.get("seed", 0))
        new_model = module.ModelNew(*init).cuda()
        shapes_checked, timed_shapes = [{}], [{}]

        def make(shape: dict, seed: int) -> Any:
            torch.manual_seed(seed)
            return [x.cuda() if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]

        def custom(data: Any) -> Any:
            return new_model(*data)

        def ref(data: Any) -> Any:
            return ref_model(*data)
    else:
        shapes_checked, timed_shapes = _spec_shapes(module, job)
        fn = getattr(module, job.get("function") or "custom_kernel", None)
        if not callable(fn):
            raise InputError(f"{job['file']}: no function {job.get('function') or 'custom_kernel'}(data)")

        def make(shape: dict, seed: int) -> Any:
            kw = {k: v for k, v in shape.items()}
            kw.setdefault("seed", seed)
            return module.generate_input(**kw)

        custom, ref = fn, module.ref_kernel
    checked = []
    seed0 = int(job.get("seed", 0))
    with torch.no_grad():
        for i, shape in enumerate(shapes_checked):
            for s in range(N_SEEDS):
                progress_line(name, 0, 3, f"check {shape or 'get_inputs()'}")
                data = make(shape, seed0 + 1000 * i + s)
                ok, why, err = _close(custom(clone(data)), ref(clone(data)), rtol, atol)
                torch.cuda.synchronize()
                if not ok:
                    checked.append({"shape": shape, "ok": False, "reason": why})
                    return {"status": "wrong", "failed": {"shape": shape, "check": {"ok": False, "reason": why}},
                            "checked": checked}
            checked.append({"shape": shape, "ok": True, "reason": "ok", "max_abs_err": err})
        shape = timed_shapes[0]
        data = make(shape, seed0 + 7)
        if job.get("mode") == "profile":
            return _profile_once(lambda: custom(data), int(job.get("warmup", 5)))
        env, reader, bench = _bench(job)
        ints = {k: v for k, v in shape.items() if isinstance(v, int) and not isinstance(v, bool) and k != "seed"}
        flops = module.flops(**shape) if hasattr(module, "flops") else None
        nbytes = module.bytes_moved(**shape) if hasattr(module, "bytes_moved") else None
        specs = [BenchSpec(name, 1, 1, 1, params=ints), BenchSpec("reference", 1, 1, 1, params=ints)]
        timed = interleaved([lambda: custom(data), lambda: ref(data)],
                            lambda i, f: _time(bench, reader, f, specs[i], [name, "reference"][i], i + 1, 3), ROUNDS)
    extra = {"point": shape, "flops": flops, "bytes": nbytes}
    ref_name = "Model (the reference)" if conv == "kernelbench" else "ref_kernel (the reference)"
    rows = []
    for i, parts in enumerate(timed):
        m, clocks = merge(parts)
        info = {"family": "user" if i == 0 else "reference",
                "summary": f"{Path(job['file']).name}: {'ModelNew' if conv == 'kernelbench' else (job.get('function') or 'custom_kernel')}"
                if i == 0 else ref_name}
        # the reference is what the kernel is checked against: it carries that, not a check of its own
        chk = Check(True, "ok", None, {"checked": checked}) if i == 0 else Check(True, "the reference the kernel was checked against")
        rows.append(Row(m, chk, i == 1, info, {}, clocks, extra))
    meta = {"shape": shape, "dtype": "any", "convention": conv, "checked": checked, "reference_name": ref_name,
            "options": {"timing": bench.options.to_dict(), "seed": seed0, "rounds": ROUNDS}}
    return {"status": "ok", "record": RunRecord("user", tuple(rows), env, meta).to_dict(), "checked": checked,
            "ladder": None}
