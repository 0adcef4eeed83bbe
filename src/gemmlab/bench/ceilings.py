"""Measured roofline ceilings: the GPU's FP32 rate (cuBLAS SGEMM, TF32 off) and its copy bandwidth.

Measured once per GPU with ``gemmlab ceilings --measure`` and kept in a JSON store
(``$GEMMLAB_CEILINGS``, else ``$XDG_DATA_HOME/gemmlab/ceilings.json``, else
``~/.local/share/gemmlab/ceilings.json``), keyed by the driver's device name. A new measurement
becomes that GPU's ``latest``; every measurement stays in its ``history``.

* FP32: C = A·B in float32 through cuBLAS (``cupy.matmul``), n = 8192 or the largest power-of-two
  size whose three matrices fit in 80 % of free memory, after warm-up; 2n³ FLOP over the median of
  event-timed runs (one event pair per run). CuPy uses TF32 only when ``CUPY_TF32=1``; that setting is
  refused here.
* Bandwidth: a device-to-device copy (cudaMemcpyAsync) of ≥ 1 GiB (far beyond any L2), counting the
  bytes read plus the bytes written, over the median time.
"""

from __future__ import annotations

import json
import logging
import math
import os
import statistics
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, Protocol, Sequence

from gemmlab.errors import InputError, ToolMissing, UserError
from gemmlab.fileio import write_atomic

log = logging.getLogger(__name__)

STORE_FORMAT = "gemmlab-ceilings"
STORE_VERSION = 1
DEFAULT_GEMM_N = 8192
MIN_GEMM_N = 1024  # below this cuBLAS does not reach its FP32 peak (31 of 51 TFLOP/s at 1024 on H100)
DEFAULT_COPY_BYTES = 1 << 30  # 1 GiB: 20× the 50 MB L2 of an H100, so the copy streams from DRAM
MEMORY_FRACTION = 0.8  # leave room for cuBLAS workspace and the CUDA context

Progress = Callable[[str, int, int], None]  # (phase, done, total)


def default_store_path() -> Path:
    env = os.environ.get("GEMMLAB_CEILINGS")
    if env:
        return Path(env)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "gemmlab" / "ceilings.json"


@dataclass(frozen=True)
class CeilingMeasurement:
    gpu: str  # the driver's device name
    fp32_flops: float  # FLOP/s
    gemm_n: int
    gemm_seconds: tuple[float, ...]  # every timed run, unrounded
    copy_bytes_per_s: float  # (read + write) bytes / s
    copy_bytes: int  # size of the buffer copied
    copy_seconds: tuple[float, ...]
    timestamp: str  # ISO 8601, UTC
    cc: Optional[str] = None
    sm_count: Optional[int] = None
    software: dict[str, Any] = field(default_factory=dict)  # cupy / CUDA runtime / driver versions

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["gemm_seconds"] = list(self.gemm_seconds)
        d["copy_seconds"] = list(self.copy_seconds)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CeilingMeasurement":
        return cls(
            gpu=str(d["gpu"]),
            fp32_flops=float(d["fp32_flops"]),
            gemm_n=int(d["gemm_n"]),
            gemm_seconds=tuple(float(x) for x in d["gemm_seconds"]),
            copy_bytes_per_s=float(d["copy_bytes_per_s"]),
            copy_bytes=int(d["copy_bytes"]),
            copy_seconds=tuple(float(x) for x in d["copy_seconds"]),
            timestamp=str(d["timestamp"]),
            cc=d.get("cc"),
            sm_count=d.get("sm_count"),
            software=dict(d.get("software") or {}),
        )


# --- the store ----------------------------------------------------------------------------------


def _empty_store() -> dict[str, Any]:
    return {"format": STORE_FORMAT, "version": STORE_VERSION, "gpus": {}}


def load_store(path: Optional[Path] = None) -> dict[str, Any]:
    """The whole store; an empty one when the file does not exist. InputError if it is not a store."""
    path = Path(path) if path else default_store_path()
    if not path.exists():
        return _empty_store()
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InputError(f"{path}: not a readable gemmlab ceilings store ({e})") from None
    if not (isinstance(data, dict) and data.get("format") == STORE_FORMAT and isinstance(data.get("gpus"), dict)):
        raise InputError(f"{path}: not a gemmlab ceilings store (expected format {STORE_FORMAT!r})")
    return data


def save_measurement(m: CeilingMeasurement, path: Optional[Path] = None) -> Path:
    """Make ``m`` its GPU's latest measurement and append it to that GPU's history (atomic write)."""
    path = Path(path) if path else default_store_path()
    store = load_store(path)
    entry = store["gpus"].setdefault(m.gpu, {"latest": None, "history": []})
    entry["latest"] = m.to_dict()
    entry.setdefault("history", []).append(m.to_dict())
    write_atomic(path, json.dumps(store, indent=2) + "\n", make_parents=True)
    log.info("stored ceilings of %s in %s", m.gpu, path)
    return path


def stored(path: Optional[Path] = None) -> list[CeilingMeasurement]:
    """The latest measurement of every GPU in the store."""
    out = []
    for name, entry in load_store(path)["gpus"].items():
        if entry.get("latest"):
            try:
                out.append(CeilingMeasurement.from_dict(entry["latest"]))
            except (KeyError, TypeError, ValueError) as e:
                raise InputError(f"{path or default_store_path()}: entry {name!r} is malformed ({e})") from None
    return out


def latest_for(gpu: str, path: Optional[Path] = None) -> Optional[CeilingMeasurement]:
    """The latest measurement of a GPU: by exact device name, or by the spec table's product when
    ``gpu`` is a short key (``h100``) or another spelling of the same product."""
    from gemmlab.hardware import find_gpu

    all_m = stored(path)
    for m in all_m:
        if m.gpu == gpu:
            return m
    want = find_gpu(gpu)
    if want is None:
        return None
    for m in all_m:
        got = find_gpu(m.gpu)
        if got is not None and got.key == want.key:
            return m
    return None


# --- measuring ----------------------------------------------------------------------------------


class Backend(Protocol):
    """What the measurement needs from a GPU; CuPy in real life, a fake in tests."""

    def device_name(self) -> str: ...
    def device_info(self) -> dict[str, Any]: ...  # cc, sm_count, software versions
    def free_bytes(self) -> int: ...
    def prepare_gemm(self, n: int) -> Callable[[], None]: ...
    def prepare_copy(self, nbytes: int) -> Callable[[], None]: ...
    def time_runs(self, fn: Callable[[], None], runs: int) -> list[float]: ...  # seconds per run
    def release(self) -> None: ...


def choose_gemm_n(free_bytes: int, n: int = DEFAULT_GEMM_N) -> int:
    """``n``, halved until three n×n float32 matrices fit in MEMORY_FRACTION of free memory."""
    while n >= MIN_GEMM_N and 3 * n * n * 4 > MEMORY_FRACTION * free_bytes:
        n //= 2
    if n < MIN_GEMM_N:
        raise UserError(f"GPU memory: {free_bytes / 2**30:.1f} GiB free is too little for a {MIN_GEMM_N}² SGEMM")
    return n


def measure(
    backend: Backend,
    *,
    gemm_n: int = DEFAULT_GEMM_N,
    copy_bytes: int = DEFAULT_COPY_BYTES,
    runs: int = 10,
    warmup: int = 2,
    progress: Optional[Progress] = None,
    now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
) -> CeilingMeasurement:
    """Measure both ceilings on ``backend``'s GPU."""
    if runs < 3:
        raise InputError(f"{runs}: at least 3 timed runs, so that a median means something", option="runs")
    if copy_bytes < DEFAULT_COPY_BYTES:
        raise InputError(f"{copy_bytes // 2**20}: at least 1024 MiB, to stream from DRAM rather than L2", option="copy_mib")
    n = choose_gemm_n(backend.free_bytes(), gemm_n)
    if n != gemm_n:
        log.warning("SGEMM size reduced from %d to %d to fit free memory", gemm_n, n)
    report = progress or (lambda phase, done, total: None)
    try:
        report("sgemm", 0, runs)
        gemm = backend.prepare_gemm(n)
        backend.time_runs(gemm, warmup)
        gemm_s = backend.time_runs(gemm, runs)
        report("sgemm", runs, runs)
        del gemm
        backend.release()
        nbytes = min(copy_bytes, int(MEMORY_FRACTION * backend.free_bytes() / 2))
        if nbytes < DEFAULT_COPY_BYTES:
            raise UserError(f"GPU memory: {backend.free_bytes() / 2**30:.1f} GiB free is too little for two 1 GiB buffers")
        report("copy", 0, runs)
        copy = backend.prepare_copy(nbytes)
        backend.time_runs(copy, warmup)
        copy_s = backend.time_runs(copy, runs)
        report("copy", runs, runs)
    finally:
        backend.release()
    for what, samples in (("SGEMM", gemm_s), ("copy", copy_s)):
        if len(samples) != runs or not all(math.isfinite(s) and s > 0 for s in samples):
            raise UserError(f"{what} timing returned {samples!r}: expected {runs} positive durations")
    info = backend.device_info()
    return CeilingMeasurement(
        gpu=backend.device_name(),
        fp32_flops=2.0 * n**3 / statistics.median(gemm_s),
        gemm_n=n,
        gemm_seconds=tuple(gemm_s),
        copy_bytes_per_s=2.0 * nbytes / statistics.median(copy_s),  # read + write
        copy_bytes=nbytes,
        copy_seconds=tuple(copy_s),
        timestamp=now().isoformat(timespec="seconds"),
        cc=info.get("cc"),
        sm_count=info.get("sm_count"),
        software=dict(info.get("software") or {}),
    )


class CupyBackend:
    """The real GPU through CuPy: cuBLAS SGEMM and cudaMemcpyAsync, timed with CUDA events."""

    def __init__(self, device: int = 0) -> None:
        try:
            import cupy
        except ImportError as e:
            raise ToolMissing(f"CuPy is not importable ({e}); install gemmlab[gpu] on a machine with a GPU") from None
        if os.environ.get("CUPY_TF32", "0") not in ("", "0"):
            raise UserError("CUPY_TF32 is set: cuBLAS would run TF32, not FP32; unset it to measure the FP32 ceiling")
        self.cp = cupy
        try:
            cupy.cuda.Device(device).use()
            self.props = cupy.cuda.runtime.getDeviceProperties(device)
        except cupy.cuda.runtime.CUDARuntimeError as e:
            raise ToolMissing(f"no usable CUDA device {device} ({e})") from None
        self._keep: list[Any] = []

    def device_name(self) -> str:
        name = self.props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)

    def device_info(self) -> dict[str, Any]:
        rt = self.cp.cuda.runtime
        return {
            "cc": f"{self.props['major']}.{self.props['minor']}",
            "sm_count": int(self.props["multiProcessorCount"]),
            "software": {
                "cupy": self.cp.__version__,
                "cuda_runtime": rt.runtimeGetVersion(),
                "driver": rt.driverGetVersion(),
            },
        }

    def free_bytes(self) -> int:
        return int(self.cp.cuda.runtime.memGetInfo()[0])

    def prepare_gemm(self, n: int) -> Callable[[], None]:
        cp = self.cp
        rng = cp.random.default_rng(12345)
        a = rng.standard_normal((n, n), dtype=cp.float32)
        b = rng.standard_normal((n, n), dtype=cp.float32)
        c = cp.empty((n, n), dtype=cp.float32)
        self._keep += [a, b, c]
        return lambda: cp.matmul(a, b, out=c)

    def prepare_copy(self, nbytes: int) -> Callable[[], None]:
        cp = self.cp
        src = cp.ones(nbytes, dtype=cp.uint8)
        dst = cp.empty(nbytes, dtype=cp.uint8)
        self._keep += [src, dst]
        stream = cp.cuda.get_current_stream()
        return lambda: dst.data.copy_from_device_async(src.data, nbytes, stream)

    def time_runs(self, fn: Callable[[], None], runs: int) -> list[float]:
        cp = self.cp
        out = []
        for _ in range(runs):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            out.append(cp.cuda.get_elapsed_time(start, stop) * 1e-3)  # ms → s
        return out

    def release(self) -> None:
        self._keep.clear()
        self.cp.get_default_memory_pool().free_all_blocks()


def summarize(samples: Sequence[float]) -> dict[str, float]:
    """Median and interquartile range of timing samples (seconds)."""
    q = statistics.quantiles(samples, n=4) if len(samples) >= 2 else [samples[0]] * 3
    return {"median": statistics.median(samples), "q1": q[0], "q3": q[2]}


def copy_ceiling(gpu: str) -> dict:
    """The copy bandwidth (read + write bytes/s): stored for this GPU, else measured now."""
    try:
        m = latest_for(gpu)
    except Exception as e:  # an unreadable store: measure instead
        log.warning("ceilings store: %s", e)
        m = None
    if m is not None:
        return {"copy_bytes_per_s": m.copy_bytes_per_s, "source": f"stored ({m.timestamp})"}
    backend = CupyBackend()
    try:
        copy = backend.prepare_copy(DEFAULT_COPY_BYTES)
        backend.time_runs(copy, 2)
        secs = backend.time_runs(copy, 10)
    finally:
        backend.release()
    return {"copy_bytes_per_s": 2.0 * DEFAULT_COPY_BYTES / statistics.median(secs),
            "source": "measured in this run (1 GiB device-to-device copy, median of 10)"}
