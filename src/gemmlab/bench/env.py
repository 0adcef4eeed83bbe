"""What a result was measured on: GPU, clocks, driver and library versions.

Every stored run carries this, so two numbers are only compared when they were taken on
comparable machines. The SM clock is read through NVML (``pynvml``, shipped as ``nvidia-ml-py``)
when it is importable, else through ``nvidia-smi``; the record names which one answered (or says
that neither did), and nothing is guessed.
"""

from __future__ import annotations

import datetime as _dt
import logging
import platform
import shutil
import socket
import subprocess
from dataclasses import dataclass
from typing import Any, Optional

import gemmlab
from gemmlab.hardware import arch_for_cc

log = logging.getLogger(__name__)



def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class ClockReader:
    """Reads the current SM clock of one GPU (MHz); ``source`` says how."""

    source: str  # "nvml" | "nvidia-smi" | "unavailable"
    _handle: Any = None
    _pci_bus_id: Optional[str] = None

    def sm_mhz(self) -> Optional[int]:
        if self.source == "nvml":
            import pynvml

            return int(pynvml.nvmlDeviceGetClockInfo(self._handle, pynvml.NVML_CLOCK_SM))
        if self.source == "nvidia-smi":
            v = _smi_query("clocks.sm", self._pci_bus_id)
            return int(v) if v and v.isdigit() else None
        return None


def _smi_query(field: str, pci_bus_id: Optional[str]) -> Optional[str]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    cmd = [exe, f"--query-gpu={field}", "--format=csv,noheader,nounits"]
    if pci_bus_id:
        cmd += ["-i", pci_bus_id]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        log.info("nvidia-smi query %s failed: %s", field, e)
        return None
    if p.returncode != 0:
        log.info("nvidia-smi query %s exited %d: %s", field, p.returncode, p.stderr.strip())
        return None
    return p.stdout.strip().splitlines()[0].strip() if p.stdout.strip() else None


def _nvml_handle(pci_bus_id: str) -> Any:
    """An NVML handle for the GPU CuPy is using, matched by PCI bus id (NVML and CUDA may order
    devices differently), or None when NVML is not importable or not working."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
    except pynvml.NVMLError as e:
        log.info("NVML unavailable: %s", e)
        return None


def clock_reader(pci_bus_id: str) -> ClockReader:
    handle = _nvml_handle(pci_bus_id)
    if handle is not None:
        return ClockReader("nvml", handle, pci_bus_id)
    if _smi_query("clocks.sm", pci_bus_id) is not None:
        return ClockReader("nvidia-smi", None, pci_bus_id)
    return ClockReader("unavailable")


def _nvml_extras(handle: Any) -> dict:
    import pynvml

    out: dict = {}

    def put(key: str, f: Any) -> None:
        try:
            out[key] = f()
        except pynvml.NVMLError as e:  # a field this GPU or driver does not report
            log.info("NVML %s: %s", key, e)

    put("driver", lambda: _text(pynvml.nvmlSystemGetDriverVersion()))
    put("sm_clock_max_mhz", lambda: int(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)))
    put("mem_clock_max_mhz", lambda: int(pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)))
    put("power_limit_w", lambda: pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1000.0)
    put("temperature_c", lambda: int(pynvml.nvmlDeviceGetTemperature(handle, pynvml.NVML_TEMPERATURE_GPU)))
    put("persistence_mode", lambda: bool(pynvml.nvmlDeviceGetPersistenceMode(handle)))
    return out


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _version_str(v: int) -> str:
    """CUDA's integer versions: 13000 → "13.0"."""
    return f"{v // 1000}.{(v % 1000) // 10}"


def capture(math_mode: Optional[str] = None) -> tuple[dict, ClockReader]:
    """The environment of the current CuPy device, and a reader for its SM clock."""
    import cupy

    rt = cupy.cuda.runtime
    dev = cupy.cuda.Device()
    props = rt.getDeviceProperties(dev.id)
    pci = dev.pci_bus_id
    reader = clock_reader(pci)
    attr = rt.deviceGetAttribute
    cc = (int(props["major"]), int(props["minor"]))
    env: dict = {
        "gpu": _text(props["name"]),
        "device_index": dev.id,
        "pci_bus_id": pci,
        "compute_capability": f"{cc[0]}.{cc[1]}",
        "sm_count": int(attr(rt.cudaDevAttrMultiProcessorCount, dev.id)),
        "l2_bytes": int(attr(rt.cudaDevAttrL2CacheSize, dev.id)),
        "total_memory_bytes": int(props["totalGlobalMem"]),
        "cuda_driver_api": _version_str(rt.driverGetVersion()),
        "cuda_runtime": _version_str(rt.runtimeGetVersion()),
        "cupy": cupy.__version__,
        "gemmlab": gemmlab.__version__,
        "python": platform.python_version(),
        "hostname": socket.gethostname(),
        "captured_utc": utc_now(),
        "clock_source": reader.source,
        "cublas_math_mode": math_mode,
    }
    clock_attr = getattr(rt, "cudaDevAttrClockRate", None)  # deprecated since CUDA 12
    if clock_attr is not None:
        try:
            env["sm_clock_attr_mhz"] = int(attr(clock_attr, dev.id)) // 1000
        except rt.CUDARuntimeError as e:
            log.info("cudaDevAttrClockRate: %s", e)
    if reader.source == "nvml":
        env.update(_nvml_extras(reader._handle))
    elif reader.source == "nvidia-smi":
        env["driver"] = _smi_query("driver_version", pci)
        mx = _smi_query("clocks.max.sm", pci)
        if mx and mx.isdigit():
            env["sm_clock_max_mhz"] = int(mx)
    spec = arch_for_cc(cc) if cc else None
    env["fp32_lanes_per_sm"] = spec.fp32_lanes_per_sm if spec else None
    return env, reader


def fp32_peak(env: dict) -> dict:
    """The clock-derived FP32 peak: SMs × FP32 lanes × 2 (FMA) × max SM clock.

    Returns {"flops": float | None, "formula": str, "clock_mhz": ..., "source": ...}; ``flops`` is
    None when the lanes per SM (unknown architecture) or the max clock is not known.
    """
    sms = env.get("sm_count")
    lanes = env.get("fp32_lanes_per_sm")
    clock = env.get("sm_clock_max_mhz") or env.get("sm_clock_attr_mhz")
    src = "sm_clock_max_mhz" if env.get("sm_clock_max_mhz") else ("sm_clock_attr_mhz" if clock else None)
    flops = None
    if sms and lanes and clock:
        flops = float(sms) * lanes * 2 * clock * 1e6
    return {
        "flops": flops,
        "formula": "SMs x FP32 lanes/SM x 2 x max SM clock",
        "sm_count": sms,
        "fp32_lanes_per_sm": lanes,
        "clock_mhz": clock,
        "clock_from": src,
    }


# Dense BF16 tensor-core FLOPs per SM per clock (FP32 accumulation), from NVIDIA's datasheets:
# A100 312 TFLOP/s = 108 SMs x 2048 x 1410 MHz; H100 SXM 989 TFLOP/s = 132 SMs x 4096 x 1830 MHz.
# Other architectures: unknown here, so no % of peak rather than a guess.
BF16_DENSE_FLOPS_PER_CLK_SM = {"8.0": 2048, "9.0": 4096}
# Dense FP8 (e4m3/e5m2 in, FP32 accumulate): twice BF16 on Hopper - H100 SXM 1979 TFLOP/s =
# 132 SMs x 8192 x 1830 MHz. The A100 has no FP8; others: unknown here, no guess.
FP8_DENSE_FLOPS_PER_CLK_SM = {"9.0": 8192}


def bf16_peak(env: dict, clock_mhz: Optional[float] = None) -> dict:
    """The clock-derived dense BF16 tensor peak: SMs x BF16 FLOPs/clk/SM x SM clock.

    ``clock_mhz``: the clock a run saw (then "clock_from" says so); default the maximum SM clock,
    as fp32_peak. Returns the same keys as fp32_peak (``flops`` None when unknown)."""
    return _tensor_peak(env, clock_mhz, "bf16", BF16_DENSE_FLOPS_PER_CLK_SM)


def fp8_peak(env: dict, clock_mhz: Optional[float] = None) -> dict:
    """The clock-derived dense FP8 tensor peak: SMs x FP8 FLOPs/clk/SM x SM clock (as
    bf16_peak; key ``fp8_flops_per_clk_per_sm``)."""
    return _tensor_peak(env, clock_mhz, "fp8", FP8_DENSE_FLOPS_PER_CLK_SM)


def tensor_peak(dtype: str, env: dict, clock_mhz: Optional[float] = None) -> dict:
    """bf16_peak or fp8_peak by the run's input dtype (fp16: BF16's - the same dense tensor rate on
    Ampere and Hopper, A100 and H100 datasheets)."""
    return fp8_peak(env, clock_mhz) if dtype == "fp8" else bf16_peak(env, clock_mhz)


def _tensor_peak(env: dict, clock_mhz: Optional[float], dtype: str, table: dict) -> dict:
    sms = env.get("sm_count")
    per = table.get(str(env.get("compute_capability")))
    if clock_mhz is not None:
        clock, src = clock_mhz, "observed"
    else:
        clock = env.get("sm_clock_max_mhz") or env.get("sm_clock_attr_mhz")
        src = "sm_clock_max_mhz" if env.get("sm_clock_max_mhz") else ("sm_clock_attr_mhz" if clock else None)
    flops = float(sms) * per * clock * 1e6 if (sms and per and clock) else None
    return {
        "flops": flops,
        "formula": f"SMs x dense {dtype.upper()} FLOPs/clk/SM x SM clock",
        "sm_count": sms,
        f"{dtype}_flops_per_clk_per_sm": per,
        "clock_mhz": clock,
        "clock_from": src,
    }
