"""The FP32 roofline: where a kernel sits between the memory roof and the compute roof.

A point is (arithmetic intensity, achieved rate): FP32 FLOP per DRAM byte and FLOP/s. The roof is
``attainable(AI) = min(peak FLOP/s, AI × DRAM bytes/s)``; left of the ridge point (peak / bandwidth)
a kernel is memory-bound, right of it compute-bound.

FLOP and bytes come either from Nsight Compute (NVIDIA's roofline section: FP32 FLOP = fadd + fmul +
2 × ffma thread instructions, predicated on; bytes = ``dram__bytes``) or from the GEMM's own counts
(2·M·N·K FLOP; compulsory DRAM traffic 4·(M·K + K·N + M·N) bytes, plus 4·M·N when β ≠ 0 reads C).
Ceilings are measured (``gemmlab ceilings``), or ncu's own peaks from the capture, or spec numbers;
every result says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from gemmlab.errors import InputError

if TYPE_CHECKING:
    from gemmlab.hardware import GpuSpec
    from gemmlab.profile.records import KernelLaunch

_OPS = ("fadd", "fmul", "ffma")
_WEIGHT = {"fadd": 1.0, "fmul": 1.0, "ffma": 2.0}  # an FMA is two FLOP
TIME = "gpu__time_duration.sum"  # ns
SMSP_CYCLES = "smsp__cycles_elapsed.avg"
SMSP_HZ = "smsp__cycles_elapsed.avg.per_second"
NCU_ROOFLINE_HINT = "collect them with ncu --set roofline (or --section SpeedOfLight_RooflineChart)"


def _count_metric(op: str) -> str:
    return f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum"


def _rate_metric(op: str) -> str:
    return f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed"


@dataclass(frozen=True)
class Ceilings:
    """The two roofs of one GPU.

    The compute roof is FP32 (FFMA on the SIMT cores) unless ``compute`` names another: the report's
    BF16 ladder draws its roofline under the dense BF16 tensor peak (``with_compute_roof``); the field
    keeps its FP32 name because that is the roof every measurement and JSON document here carries.
    """

    gpu: str
    fp32_flops: float  # FLOP/s of the compute roof (FP32 unless ``compute`` says otherwise)
    dram_bytes_per_s: float  # byte/s
    source: str  # "measured" | "ncu" | "spec"
    detail: str  # when/what: "measured 2026-11-21T10:00:00Z", "NVIDIA H100 SXM5 datasheet", ...
    compute: str = "FP32"  # what the compute roof counts: "FP32", "dense BF16 tensor"

    def __post_init__(self) -> None:
        if not (self.fp32_flops > 0 and self.dram_bytes_per_s > 0):
            raise InputError(f"ceilings for {self.gpu}: peak FLOP/s and bandwidth must be > 0")

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the memory roof meets the compute roof."""
        return self.fp32_flops / self.dram_bytes_per_s

    def attainable(self, ai: float) -> float:
        return min(self.fp32_flops, ai * self.dram_bytes_per_s)

    def with_compute_roof(self, flops: float, compute: str, detail: str) -> "Ceilings":
        """The same memory roof under another compute roof (``detail`` says where it came from)."""
        return Ceilings(self.gpu, flops, self.dram_bytes_per_s, self.source,
                        f"memory roof: {self.detail}; compute roof: {detail}", compute)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "compute": self.compute,
            "fp32_flops": self.fp32_flops,
            "dram_bytes_per_s": self.dram_bytes_per_s,
            "ridge_flop_per_byte": self.ridge,
            "source": self.source,
            "detail": self.detail,
        }


def spec_ceilings(gpu: "GpuSpec") -> Ceilings:
    return Ceilings(gpu.name, gpu.fp32_flops, gpu.dram_bytes_per_s, "spec", gpu.source)


def ncu_ceilings(launch: "KernelLaunch") -> Optional[Ceilings]:
    """ncu's own peaks for this launch's clocks (what its roofline chart draws), if captured:
    2 × ``sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained`` × SM clock, and
    ``dram__bytes.sum.peak_sustained`` × DRAM clock."""
    ffma_peak = launch.number("sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
    sm_hz = launch.number("sm__cycles_elapsed.avg.per_second")
    dram_peak = launch.number("dram__bytes.sum.peak_sustained")
    dram_hz = launch.number("dram__cycles_elapsed.avg.per_second")
    if None in (ffma_peak, sm_hz, dram_peak, dram_hz):
        return None
    gpu = launch.device or "capture"
    name = launch.metrics.get("device__attribute_display_name")
    if name is not None and isinstance(name.value, str):
        gpu = name.value
    return Ceilings(
        gpu,
        2.0 * ffma_peak * sm_hz,  # type: ignore[operator]
        dram_peak * dram_hz,  # type: ignore[operator]
        "ncu",
        f"ncu peak_sustained × elapsed clocks of kernel {launch.name!r}",
    )


@dataclass(frozen=True)
class RooflinePoint:
    name: str
    flops: float  # FP32 FLOP
    dram_bytes: float
    seconds: float
    source: str  # "ncu" | "analytic"

    def __post_init__(self) -> None:
        for what, v in (("FLOP", self.flops), ("DRAM bytes", self.dram_bytes), ("time", self.seconds)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise InputError(f"roofline point {self.name!r}: {what} is {v!r}; it must be a positive number")

    @property
    def intensity(self) -> float:
        """FLOP per DRAM byte."""
        return self.flops / self.dram_bytes

    @property
    def rate(self) -> float:
        """Achieved FLOP/s."""
        return self.flops / self.seconds


@dataclass(frozen=True)
class Placement:
    point: RooflinePoint
    ceilings: Ceilings

    @property
    def attainable(self) -> float:
        return self.ceilings.attainable(self.point.intensity)

    @property
    def bound(self) -> str:
        return "memory" if self.point.intensity < self.ceilings.ridge else "compute"

    @property
    def pct_of_attainable(self) -> float:
        return 100.0 * self.point.rate / self.attainable

    @property
    def pct_of_peak(self) -> float:
        return 100.0 * self.point.rate / self.ceilings.fp32_flops

    def to_dict(self) -> dict[str, Any]:
        p = self.point
        return {
            "name": p.name,
            "source": p.source,
            "flops": p.flops,
            "dram_bytes": p.dram_bytes,
            "seconds": p.seconds,
            "intensity_flop_per_byte": p.intensity,
            "achieved_flops": p.rate,
            "attainable_flops": self.attainable,
            "bound": self.bound,
            "pct_of_attainable": self.pct_of_attainable,
            "pct_of_peak": self.pct_of_peak,
        }


def place(point: RooflinePoint, ceilings: Ceilings) -> Placement:
    return Placement(point, ceilings)


# How far above a roof a point may sit before its inputs are called impossible, by the source of the
# ceilings. Every point is a real kernel's rate, so it cannot beat the hardware; the margins are what
# separates each kind of ceiling from the hardware's true peak at the clocks a user gets:
# - "ncu": peak_sustained × the launch's own elapsed clocks is the hardware's peak at the clocks it ran;
#   only the gap between gpu__time_duration and the cycle counters (a clock change within the launch,
#   timer granularity on microsecond kernels) lies between a real point and it: 10 %.
# - "spec": the table's FP32 peak is 2 × lanes × SMs × the listed boost clock, and its bandwidth the
#   datasheet's. Data-centre parts do not boost above the listed clock, but GeForce and workstation
#   boards sustain more (an RTX 4090 listed at 2520 MHz runs 2.7-2.8 GHz, +10 %; factory-overclocked
#   boards +15 %), memory overclocks add ~10 % of bandwidth, and a --ms typed with few digits is
#   rounded by a few %: 25 %.
# - "measured": cuBLAS SGEMM and a device-to-device copy reach 75-90 % of the hardware's peak (H100:
#   51 of 67 TFLOP/s), and a hand-written kernel may beat them up to that peak, itself up to 25 %
#   above the listed one: 1.25 / 0.75 ≈ 1.7, so 2×.
# Any other source gets the widest margin.
PLAUSIBLE_MARGIN = {"ncu": 1.10, "spec": 1.25, "measured": 2.0}


def margin_of(ceilings: Ceilings) -> float:
    return PLAUSIBLE_MARGIN.get(ceilings.source, max(PLAUSIBLE_MARGIN.values()))


def impossible(point: RooflinePoint, ceilings: Ceilings, l2_bytes: Optional[float] = None) -> Optional[str]:
    """Why ``point`` cannot be a real kernel's under ``ceilings`` (the rate it implies and the roof it
    beats by more than ``margin_of``), or None when it can.

    FLOP/s is checked against the compute roof. Bytes/s is checked against the memory roof for the
    DRAM traffic that must have happened: all of ncu's measured ``dram__bytes``; for analytic counts
    (compulsory traffic) only what exceeds the L2 (``l2_bytes``), since a benchmark that repeats a
    GEMM whose operands fit in the L2 legitimately sits above the memory roof; without ``l2_bytes``
    analytic bytes are not checked.
    """
    margin = margin_of(ceilings)
    over = f"more than {margin:g} × the"
    roof_of = f"of {ceilings.gpu} ({ceilings.source} ceilings)"
    took = f"in {point.seconds * 1e3:.4g} ms"
    if point.rate > margin * ceilings.fp32_flops:
        return (f"{point.flops / 1e9:.4g} GFLOP {took} is {point.rate / 1e12:,.1f} TFLOP/s, {over} "
                f"{ceilings.fp32_flops / 1e12:.1f} TFLOP/s {ceilings.compute} roof {roof_of}")
    if point.source == "analytic":
        if l2_bytes is None:
            return None
        dram, what = max(0.0, point.dram_bytes - l2_bytes), f"beyond the {l2_bytes / 2**20:g} MiB L2"
    else:
        dram, what = point.dram_bytes, "measured"
    if dram / point.seconds > margin * ceilings.dram_bytes_per_s:
        return (f"{dram / 1e6:.4g} MB of DRAM traffic ({what}) {took} is {dram / point.seconds / 1e9:,.0f} GB/s, "
                f"{over} {ceilings.dram_bytes_per_s / 1e9:.0f} GB/s memory roof {roof_of}")
    return None


def gemm_counts(m: int, n: int, k: int, *, beta_nonzero: bool = False, elem_bytes: int = 4,
                out_bytes: Optional[int] = None) -> tuple[float, float]:
    """(FLOP, compulsory DRAM bytes) of C = αAB + βC with A m×k, B k×n: 2mnk FLOP; A, B read and
    C written once (C also read when β ≠ 0). ``elem_bytes``: per element of A and B; ``out_bytes``:
    per element of C (default the same; the BF16 ladder reads 2-byte A, B and writes 2- or 4-byte C)."""
    for name, v in (("M", m), ("N", n), ("K", k)):
        if v < 1:
            raise InputError(f"GEMM {name} = {v}: must be ≥ 1")
    c_bytes = float(elem_bytes if out_bytes is None else out_bytes)
    flops = 2.0 * m * n * k
    nbytes = float(elem_bytes) * (m * k + k * n) + c_bytes * (m * n + (m * n if beta_nonzero else 0))
    return flops, nbytes


def point_from_gemm(
    name: str, m: int, n: int, k: int, seconds: float, *, beta_nonzero: bool = False, elem_bytes: int = 4,
    out_bytes: Optional[int] = None,
) -> RooflinePoint:
    flops, nbytes = gemm_counts(m, n, k, beta_nonzero=beta_nonzero, elem_bytes=elem_bytes, out_bytes=out_bytes)
    return RooflinePoint(name, flops, nbytes, seconds, "analytic")


def _missing(launch: "KernelLaunch", names: list[str]) -> list[str]:
    return [n for n in names if launch.number(n) is None]


def _seconds(launch: "KernelLaunch") -> float:
    ns = launch.number(TIME)
    if ns is None:
        raise InputError(f"kernel {launch.name!r} in {launch.source or 'the capture'}: no {TIME}; {NCU_ROOFLINE_HINT}")
    return ns * 1e-9


def fp32_flops_of(launch: "KernelLaunch") -> float:
    """FP32 FLOP of a profiled launch: fadd + fmul + 2·ffma thread instructions (predicated on).

    From the ``.sum`` counts when exported, else from the ``.sum.per_cycle_elapsed`` rates the
    roofline section exports, times the SM sub-partition cycles elapsed."""
    counts = [_count_metric(op) for op in _OPS]
    if not _missing(launch, counts):
        return sum(_WEIGHT[op] * launch.number(_count_metric(op)) for op in _OPS)  # type: ignore[operator]
    rates = [_rate_metric(op) for op in _OPS]
    missing = _missing(launch, rates)
    if not missing:
        cycles = launch.number(SMSP_CYCLES)
        if cycles is None:
            hz = launch.number(SMSP_HZ)
            if hz is None:
                missing = [SMSP_CYCLES]
            else:
                cycles = hz * _seconds(launch)
        if cycles is not None:
            return cycles * sum(_WEIGHT[op] * launch.number(_rate_metric(op)) for op in _OPS)  # type: ignore[operator]
    raise InputError(
        f"kernel {launch.name!r} in {launch.source or 'the capture'}: no FP32 instruction counts "
        f"({', '.join(_missing(launch, counts))}); {NCU_ROOFLINE_HINT}, or give the GEMM shape for analytic counts"
    )


def dram_bytes_of(launch: "KernelLaunch") -> float:
    """DRAM bytes of a profiled launch: ``dram__bytes.sum``, else read + write, else rate × time."""
    total = launch.number("dram__bytes.sum")
    if total is not None:
        return total
    rd, wr = launch.number("dram__bytes_read.sum"), launch.number("dram__bytes_write.sum")
    if rd is not None and wr is not None:
        return rd + wr
    rate = launch.number("dram__bytes.sum.per_second")
    if rate is not None:
        return rate * _seconds(launch)
    raise InputError(
        f"kernel {launch.name!r} in {launch.source or 'the capture'}: no DRAM byte count "
        f"(dram__bytes.sum or dram__bytes_read.sum + dram__bytes_write.sum); {NCU_ROOFLINE_HINT}"
    )


def point_from_launch(launch: "KernelLaunch", *, gemm: Optional[tuple[int, int, int]] = None,
                      beta_nonzero: bool = False) -> RooflinePoint:
    """A point from ncu's counts, or (with ``gemm`` = (M, N, K)) from the GEMM's analytic counts
    and the launch's measured duration."""
    seconds = _seconds(launch)
    if gemm is not None:
        flops, nbytes = gemm_counts(*gemm, beta_nonzero=beta_nonzero)
        return RooflinePoint(launch.name, flops, nbytes, seconds, "analytic")
    return RooflinePoint(launch.name, fp32_flops_of(launch), dram_bytes_of(launch), seconds, "ncu")
