"""Theoretical occupancy: how many blocks of a kernel fit on one SM, what limits it, what lifts it.

The rules are NVIDIA's, as implemented in ``cuda_occupancy.h`` (CUDA 13.0), the header version of
the calculator behind ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``:

* warps: ``floor(max warps per SM / ceil(threads / 32))``.
* registers: registers are allocated per warp, ``ceil(regs × 32 / 256) × 256``; each of the SM's
  sub-partitions (4; 2 on GP100) holds ``floor((65536 / 4) / regs_per_warp)`` warps; blocks =
  ``floor(warps that fit / warps per block)``. A block whose warps, rounded up to a multiple of the
  sub-partition count, need more than 64K registers cannot launch (the hardware check).
* shared memory: per block ``ceil((static + dynamic + reserved) / unit) × unit`` with the driver's
  reserve (1 KiB from sm_80) and unit (256 B; 128 B from sm_80); blocks = ``floor(carve-out /
  that)``. The carve-out is the configured shared-memory size of the SM: the driver's occupancy API
  assumes the preferred one (the largest by default), while a real launch runs with the size the
  driver configured (``launch__shared_mem_config_size`` in ncu), which is what ncu's
  ``launch__occupancy_limit_shared_mem`` divides.
* blocks: the SM's block slots (32 on sm_90).
* barriers (sm_90 on): ``floor(factor × block slots / barriers per block)``, factor 2 or 1.

The limit values are reported capped at the block-slot count: a resource that allows more blocks
than the SM has slots can never bind (ncu prints the barrier limit that way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Optional

from gemmlab.errors import InputError
from gemmlab.hardware import ARCHS, ArchSpec, find_arch

if TYPE_CHECKING:  # records are only read, never required at import
    from gemmlab.profile.records import KernelLaunch

# Order used to name "the" limiter when several bind at once (the header's bit order).
LIMIT_NAMES = ("warps", "registers", "shared_mem", "blocks", "barriers")
MAX_BARRIERS_PER_BLOCK = 16  # named barriers 0..15 per CTA (PTX ISA, bar.sync)


def _ceil_div(x: int, y: int) -> int:
    return -(-x // y)


def _round_up(x: int, y: int) -> int:
    return _ceil_div(x, y) * y


def resolve_arch(arch: str | ArchSpec) -> ArchSpec:
    """An ArchSpec from a name (``sm_90``, ``9.0``, ``90``); InputError listing the known ones."""
    if isinstance(arch, ArchSpec):
        return arch
    spec = find_arch(str(arch))
    if spec is None:
        raise InputError(f"{arch!r}: unknown architecture; known: {', '.join(ARCHS)}", option="arch")
    return spec


@dataclass(frozen=True)
class OccupancyInput:
    """One kernel launch as the occupancy calculator sees it. Validated at construction."""

    arch: ArchSpec
    threads_per_block: int
    regs_per_thread: int
    smem_per_block: int = 0  # bytes, static + dynamic, without the driver's reserve
    barriers: int = 1  # block barriers used (1 for a kernel with __syncthreads; the API's default)
    smem_config: Optional[int] = None  # bytes: the carve-out the launch ran with (ncu), if known
    carveout_pct: Optional[int] = None  # cudaFuncAttributePreferredSharedMemoryCarveout; None = default
    smem_reserved: Optional[int] = None  # bytes; None = the architecture's reserve

    def __post_init__(self) -> None:
        a = self.arch
        if not 1 <= self.threads_per_block <= a.max_threads_per_block:
            raise InputError(
                f"--threads {self.threads_per_block}: threads per block must be 1..{a.max_threads_per_block} on {a.name}"
            )
        if not 0 <= self.regs_per_thread <= a.max_regs_per_thread:
            raise InputError(
                f"--regs {self.regs_per_thread}: registers per thread must be 0..{a.max_regs_per_thread} on {a.name}"
            )
        if self.smem_per_block < 0 or self.smem_per_block > a.smem_per_block_optin:
            raise InputError(
                f"--smem {self.smem_per_block} B: shared memory per block must be 0..{a.smem_per_block_optin} B "
                f"({a.smem_per_block_optin // 1024} KiB, the opt-in maximum) on {a.name}"
            )
        if not 0 <= self.barriers <= MAX_BARRIERS_PER_BLOCK:
            raise InputError(f"{self.barriers}: must be 0..{MAX_BARRIERS_PER_BLOCK}", option="barriers")
        if self.smem_config is not None and not 0 <= self.smem_config <= a.smem_per_sm:
            raise InputError(
                f"shared-memory config {self.smem_config} B: must be 0..{a.smem_per_sm} B on {a.name}"
            )
        if self.carveout_pct is not None and not -1 <= self.carveout_pct <= 100:
            raise InputError(f"{self.carveout_pct}: a percentage 0..100, or -1 for the default", option="carveout")
        if self.smem_reserved is not None and self.smem_reserved < 0:
            raise InputError(f"reserved shared memory {self.smem_reserved} B: must be ≥ 0")

    @property
    def warps_per_block(self) -> int:
        return _ceil_div(self.threads_per_block, self.arch.warp_size)

    @property
    def reserved(self) -> int:
        return self.arch.smem_reserved_per_block if self.smem_reserved is None else self.smem_reserved

    @property
    def smem_allocated(self) -> int:
        """Bytes one block takes from the carve-out: (static + dynamic + reserve) rounded to the unit."""
        return _round_up(self.smem_per_block + self.reserved, self.arch.smem_alloc_unit)

    @property
    def regs_per_warp(self) -> int:
        """Registers allocated to one warp: regs × 32 rounded up to the allocation unit (256)."""
        return _round_up(self.regs_per_thread * self.arch.warp_size, self.arch.reg_alloc_unit)


@dataclass(frozen=True)
class Advice:
    """One computed change that would raise blocks per SM, with the result it would give."""

    resource: str  # which limit it lifts
    change: str  # "registers per thread 96 → 80"
    blocks_per_sm: int  # after the change
    occupancy: float  # after the change, fraction of the SM's warps
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "change": self.change,
            "blocks_per_sm": self.blocks_per_sm,
            "occupancy": self.occupancy,
            "text": self.text,
        }


@dataclass(frozen=True)
class OccupancyResult:
    inputs: OccupancyInput
    limits: dict[str, int]  # blocks per SM under each limit, capped at the block slots
    blocks_per_sm: int
    limiters: tuple[str, ...]  # every limit equal to blocks_per_sm (at 0: those that refuse the launch)
    smem_config: int  # bytes of carve-out the shared-memory limit divides
    smem_config_source: str  # "as launched" | "preferred carve-out" | "largest, the driver's default" | "fixed"
    min_carveout: Optional[int]  # smallest carve-out step that keeps blocks_per_sm (Volta+), bytes
    advice: tuple[Advice, ...] = field(default_factory=tuple)

    @property
    def arch(self) -> ArchSpec:
        return self.inputs.arch

    @property
    def active_warps(self) -> int:
        return self.blocks_per_sm * self.inputs.warps_per_block

    @property
    def max_warps(self) -> int:
        return self.arch.max_warps_per_sm

    @property
    def occupancy(self) -> float:
        """Theoretical occupancy: active warps / the SM's maximum warps (ncu's
        ``sm__maximum_warps_per_active_cycle_pct`` / 100)."""
        return self.active_warps / self.max_warps

    @property
    def limiter(self) -> Optional[str]:
        return self.limiters[0] if self.limiters else None

    def to_dict(self) -> dict[str, Any]:
        i = self.inputs
        return {
            "arch": self.arch.name,
            "threads_per_block": i.threads_per_block,
            "warps_per_block": i.warps_per_block,
            "regs_per_thread": i.regs_per_thread,
            "regs_allocated_per_thread": i.regs_per_warp // self.arch.warp_size,
            "regs_per_block": i.regs_per_warp * i.warps_per_block,
            "smem_per_block": i.smem_per_block,
            "smem_reserved_per_block": i.reserved,
            "smem_allocated_per_block": i.smem_allocated,
            "smem_config": self.smem_config,
            "smem_config_source": self.smem_config_source,
            "min_carveout": self.min_carveout,
            "barriers": i.barriers,
            "limits": dict(self.limits),
            "blocks_per_sm": self.blocks_per_sm,
            "active_warps": self.active_warps,
            "max_warps": self.max_warps,
            "occupancy": self.occupancy,
            "limiter": self.limiter,
            "limiters": list(self.limiters),
            "advice": [a.to_dict() for a in self.advice],
        }


# --- the five limits ---------------------------------------------------------------------------


def _register_limit(a: ArchSpec, warps_per_block: int, regs: int, sub_partitions: int) -> Optional[int]:
    """Blocks per SM allowed by registers; None = unbounded (a kernel that uses no register)."""
    if regs == 0:
        return None
    per_warp = _round_up(regs * a.warp_size, a.reg_alloc_unit)
    # The hardware checks a block's registers as if its warps were spread over all sub-partitions.
    assumed = per_warp * _round_up(warps_per_block, sub_partitions)
    if assumed > a.regs_per_block or per_warp * warps_per_block > a.regs_per_block:
        return 0
    warps_per_sub_partition = (a.regs_per_sm // sub_partitions) // per_warp
    return (warps_per_sub_partition * sub_partitions) // warps_per_block


def register_limit(a: ArchSpec, warps_per_block: int, regs: int) -> Optional[int]:
    limit = _register_limit(a, warps_per_block, regs, a.sub_partitions)
    if a.cc == (6, 0) and limit:
        # GP100 has 2 sub-partitions, GP10x 4; a kernel that cannot run on GP10x is refused on
        # every Pascal part (cudaOccMaxActiveBlocksPerMultiprocessor).
        if _register_limit(a, warps_per_block, regs, 4) == 0:
            return 0
    return limit


def align_to_carveout(a: ArchSpec, size: int) -> int:
    """The smallest carve-out step ≥ size (cudaOccAlignUpShmemSizeVoltaPlus)."""
    for step in a.smem_carveouts:
        if size <= step:
            return step
    raise InputError(f"shared memory {size} B exceeds the largest carve-out ({a.smem_per_sm} B) of {a.name}")


def _smem_config(inp: OccupancyInput) -> tuple[int, str]:
    """The carve-out the shared-memory limit divides, and where it came from."""
    a = inp.arch
    if inp.smem_config is not None:
        return inp.smem_config, "as launched"
    if not a.has_carveout:
        return a.smem_per_sm, "fixed"
    if inp.carveout_pct is None or inp.carveout_pct < 0:
        preferred, source = a.smem_per_sm, "largest, the driver's default"
    else:
        preferred = align_to_carveout(a, inp.carveout_pct * a.smem_per_sm // 100)
        source = "preferred"
    if preferred >= inp.smem_allocated:
        return preferred, source
    # A preference below one block's need is overridden by the smallest step that fits one block.
    return align_to_carveout(a, inp.smem_allocated), "smallest that fits one block"


def _raw_limits(inp: OccupancyInput) -> tuple[dict[str, Optional[int]], int, str]:
    a = inp.arch
    wpb = inp.warps_per_block
    config, source = _smem_config(inp)
    alloc = inp.smem_allocated
    limits: dict[str, Optional[int]] = {
        "warps": a.max_warps_per_sm // wpb,
        "registers": register_limit(a, wpb, inp.regs_per_thread),
        "shared_mem": (config // alloc) if alloc > 0 else None,
        "blocks": a.max_blocks_per_sm,
        "barriers": (
            (a.barrier_factor * a.max_blocks_per_sm) // inp.barriers
            if a.barrier_limit_applies and inp.barriers > 0
            else None
        ),
    }
    return limits, config, source


def _evaluate(inp: OccupancyInput) -> OccupancyResult:
    a = inp.arch
    raw, config, source = _raw_limits(inp)
    blocks = min(v for v in raw.values() if v is not None)
    limiters = tuple(n for n in LIMIT_NAMES if raw[n] == blocks)  # at 0: the limits that refuse the launch
    shown = {n: a.max_blocks_per_sm if v is None else min(v, a.max_blocks_per_sm) for n, v in raw.items()}
    min_carveout = None
    if a.has_carveout and blocks > 0:
        min_carveout = align_to_carveout(a, blocks * inp.smem_allocated)
    return OccupancyResult(
        inputs=inp,
        limits=shown,
        blocks_per_sm=blocks,
        limiters=limiters,
        smem_config=config,
        smem_config_source=source,
        min_carveout=min_carveout,
    )


def occupancy(
    arch: str | ArchSpec,
    threads_per_block: int,
    regs_per_thread: int,
    smem_per_block: int = 0,
    *,
    barriers: int = 1,
    smem_config: Optional[int] = None,
    carveout_pct: Optional[int] = None,
    smem_reserved: Optional[int] = None,
    advise: bool = True,
) -> OccupancyResult:
    """Blocks per SM under every limit, the occupancy, the limiter(s) and what would lift it.

    ``smem_per_block`` is static + dynamic shared memory in bytes (the driver's reserve is added
    here). Without ``smem_config`` the shared-memory limit uses the carve-out the occupancy API
    assumes (the largest, unless ``carveout_pct`` prefers another); pass the capture's
    ``launch__shared_mem_config_size`` to get ncu's limit for that launch.
    """
    inp = OccupancyInput(
        arch=resolve_arch(arch),
        threads_per_block=threads_per_block,
        regs_per_thread=regs_per_thread,
        smem_per_block=smem_per_block,
        barriers=barriers,
        smem_config=smem_config,
        carveout_pct=carveout_pct,
        smem_reserved=smem_reserved,
    )
    res = _evaluate(inp)
    if advise:
        res = replace(res, advice=tuple(_advise(res)))
    return res


# --- advice: computed by re-running the calculator with one thing changed ----------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _after(new: OccupancyResult, old: OccupancyResult) -> str:
    if new.blocks_per_sm > old.blocks_per_sm:
        return f"{new.blocks_per_sm} blocks/SM, {_pct(new.occupancy)} occupancy"
    others = ", ".join(n for n in new.limiters) or "another limit"
    return f"alone this gains nothing: {others} still hold it at {new.blocks_per_sm} blocks/SM"


def _advise_registers(res: OccupancyResult, target: int) -> Optional[Advice]:
    inp = res.inputs
    for regs in range(inp.regs_per_thread - 1, 0, -1):
        lim = register_limit(inp.arch, inp.warps_per_block, regs)
        if lim is None or lim >= target:
            new = _evaluate(replace(inp, regs_per_thread=regs))
            how = f"__launch_bounds__({inp.threads_per_block}, {target}) or -maxrregcount={regs}"
            return Advice(
                "registers",
                f"registers per thread {inp.regs_per_thread} → {regs}",
                new.blocks_per_sm,
                new.occupancy,
                f"cut registers per thread from {inp.regs_per_thread} to {regs} ({how}) to fit "
                f"{_n(target, 'block')}: {_after(new, res)}",
            )
    return None


def _advise_shared_mem(res: OccupancyResult, target: int) -> list[Advice]:
    inp, a = res.inputs, res.arch
    out: list[Advice] = []
    if a.has_carveout and res.smem_config < a.smem_per_sm:
        new = _evaluate(replace(inp, smem_config=None, carveout_pct=100))
        if new.limits["shared_mem"] > res.limits["shared_mem"]:
            out.append(
                Advice(
                    "shared_mem",
                    f"carve-out {res.smem_config // 1024} KiB → {a.smem_per_sm // 1024} KiB",
                    new.blocks_per_sm,
                    new.occupancy,
                    f"the launch ran with a {res.smem_config // 1024} KiB shared-memory carve-out; "
                    f"cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, "
                    f"cudaSharedmemCarveoutMaxShared) allows {new.limits['shared_mem']} blocks by shared "
                    f"memory: {_after(new, res)}",
                )
            )
    # Largest per-block size that fits `target` blocks in the largest carve-out.
    per_block = (a.smem_per_sm // target) // a.smem_alloc_unit * a.smem_alloc_unit - inp.reserved
    if 0 <= per_block < inp.smem_per_block:
        new = _evaluate(replace(inp, smem_per_block=per_block, smem_config=None, carveout_pct=None))
        out.append(
            Advice(
                "shared_mem",
                f"shared memory per block {inp.smem_per_block} B → {per_block} B",
                new.blocks_per_sm,
                new.occupancy,
                f"cut shared memory per block from {inp.smem_per_block} B to {per_block} B to fit "
                f"{_n(target, 'block')} in the {a.smem_per_sm // 1024} KiB carve-out: {_after(new, res)}",
            )
        )
    return out


def _advise_block_size(res: OccupancyResult) -> Optional[Advice]:
    """Another block size, same registers per thread and shared memory per block, if it fills more warps."""
    inp, a = res.inputs, res.arch
    best: Optional[OccupancyResult] = None
    for threads in range(a.warp_size, a.max_threads_per_block + 1, a.warp_size):
        cand = _evaluate(replace(inp, threads_per_block=threads))
        if best is None or cand.occupancy > best.occupancy or (
            cand.occupancy == best.occupancy
            and abs(threads - inp.threads_per_block) < abs(best.inputs.threads_per_block - inp.threads_per_block)
        ):
            best = cand
    if best is None or best.occupancy <= res.occupancy:
        return None
    t = best.inputs.threads_per_block
    why = (
        f"{_n(inp.warps_per_block, 'warp')} per block fill {res.active_warps} of {a.max_warps_per_sm} warp slots"
        if "warps" in res.limiters
        else f"{a.max_blocks_per_sm} block slots × {_n(inp.warps_per_block, 'warp')} = {res.active_warps} of "
        f"{a.max_warps_per_sm} warps"
    )
    return Advice(
        "warps" if "warps" in res.limiters else "blocks",
        f"threads per block {inp.threads_per_block} → {t}",
        best.blocks_per_sm,
        best.occupancy,
        f"{why}; {t}-thread blocks give {best.blocks_per_sm} blocks/SM, {_pct(best.occupancy)} occupancy "
        f"(same registers per thread and shared memory per block)",
    )


def _advise_barriers(res: OccupancyResult, target: int) -> Optional[Advice]:
    inp, a = res.inputs, res.arch
    for b in range(inp.barriers - 1, -1, -1):
        if b == 0 or (a.barrier_factor * a.max_blocks_per_sm) // b >= target:
            new = _evaluate(replace(inp, barriers=b))
            return Advice(
                "barriers",
                f"barriers per block {inp.barriers} → {b}",
                new.blocks_per_sm,
                new.occupancy,
                f"use {_n(b, 'barrier')} per block instead of {inp.barriers}: {_after(new, res)}",
            )
    return None


def _advise_cannot_launch(res: OccupancyResult) -> list[Advice]:
    inp, a = res.inputs, res.arch
    out: list[Advice] = []
    raw, _, _ = _raw_limits(inp)
    if raw["registers"] == 0:
        adv = _advise_registers(res, 1)
        if adv:
            out.append(
                replace(
                    adv,
                    text=f"a block of {inp.threads_per_block} threads × {inp.regs_per_thread} registers does not "
                    f"fit the {a.regs_per_block} registers a block may use; " + adv.text,
                )
            )
    if raw["shared_mem"] == 0:
        out.append(
            Advice(
                "shared_mem",
                "carve-out",
                0,
                0.0,
                f"{inp.smem_allocated} B per block exceed the {res.smem_config} B carve-out",
            )
        )
    return out


def _advise(res: OccupancyResult) -> list[Advice]:
    a = res.arch
    if res.blocks_per_sm == 0:
        return _advise_cannot_launch(res)
    if res.active_warps >= a.max_warps_per_sm:
        return []  # every warp slot is in use; nothing to lift
    target = res.blocks_per_sm + 1
    out: list[Advice] = []
    for name in res.limiters:
        if name == "registers":
            adv = _advise_registers(res, target)
            if adv:
                out.append(adv)
        elif name == "shared_mem":
            out.extend(_advise_shared_mem(res, target))
        elif name == "barriers":
            adv = _advise_barriers(res, target)
            if adv:
                out.append(adv)
    if "warps" in res.limiters or "blocks" in res.limiters:
        adv = _advise_block_size(res)
        if adv:
            out.append(adv)
    return out


# --- from a profiled launch ---------------------------------------------------------------------

_LAUNCH_METRICS = {
    "threads": "launch__block_size",
    "regs": "launch__registers_per_thread",
    "smem_static": "launch__shared_mem_per_block_static",
    "smem_dynamic": "launch__shared_mem_per_block_dynamic",
}
_NCU_HINT = "collect them with ncu --section LaunchStats --section Occupancy (or --set basic)"


def launch_arch(launch: "KernelLaunch") -> ArchSpec:
    """The architecture of a profiled launch, from its CC column or device attributes."""
    name = launch.arch
    if name is None:
        major = launch.number("device__attribute_compute_capability_major")
        minor = launch.number("device__attribute_compute_capability_minor")
        if major is not None and minor is not None:
            name = f"sm_{int(major)}{int(minor)}"
    if name is None:
        raise InputError(
            f"kernel {launch.name!r} in {launch.source or 'the capture'}: no compute capability "
            f"(CC column or device__attribute_compute_capability_major/minor)"
        )
    return resolve_arch(name)


def occupancy_from_launch(launch: "KernelLaunch", *, advise: bool = True) -> OccupancyResult:
    """The occupancy of a profiled launch, from its ``launch__*`` metrics, with the carve-out it ran with."""
    values: dict[str, float] = {}
    missing = []
    for key, metric in _LAUNCH_METRICS.items():
        v = launch.number(metric)
        if v is None:
            missing.append(metric)
        else:
            values[key] = v
    if "threads" not in values and launch.block is not None:
        values["threads"] = float(launch.block[0] * launch.block[1] * launch.block[2])
        missing.remove("launch__block_size")
    if missing:
        raise InputError(
            f"kernel {launch.name!r} in {launch.source or 'the capture'}: missing {', '.join(missing)}; {_NCU_HINT}"
        )
    barriers = launch.number("launch__barrier_count")
    config = launch.number("launch__shared_mem_config_size")
    reserved = launch.number("launch__shared_mem_per_block_driver")
    return occupancy(
        launch_arch(launch),
        int(values["threads"]),
        int(values["regs"]),
        int(values["smem_static"] + values["smem_dynamic"]),
        barriers=1 if barriers is None else int(barriers),
        smem_config=None if config is None else int(config),
        smem_reserved=None if reserved is None else int(reserved),
        advise=advise,
    )


# ncu's own answer for a launch, to compare with ours.
NCU_LIMIT_METRICS = {
    "warps": "launch__occupancy_limit_warps",
    "registers": "launch__occupancy_limit_registers",
    "shared_mem": "launch__occupancy_limit_shared_mem",
    "blocks": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers",
}


def ncu_disagreements(result: OccupancyResult, launch: "KernelLaunch") -> dict[str, tuple[int, int]]:
    """Limits where ncu's ``launch__occupancy_limit_*`` differs from ours: name → (ncu, ours).
    Limits the capture does not carry are skipped."""
    out = {}
    for name, metric in NCU_LIMIT_METRICS.items():
        v = launch.number(metric)
        if v is not None and int(v) != result.limits[name]:
            out[name] = (int(v), result.limits[name])
    pct = launch.number("sm__maximum_warps_per_active_cycle_pct")
    if pct is not None and not math.isclose(pct, 100 * result.occupancy, abs_tol=0.01):
        out["occupancy_pct"] = (pct, 100 * result.occupancy)  # type: ignore[assignment]
    return out
