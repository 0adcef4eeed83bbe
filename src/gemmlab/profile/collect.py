"""What ``gemmlab profile`` asks Nsight Compute to collect.

The default is not a section set. Sections pull in many metrics the analyzer never reads (and
their ``breakdown:`` tables), and every hardware counter costs replay passes: ``--set full`` took
38 passes per kernel on the H100, ``--section SpeedOfLight`` alone 10. Instead the default asks
for the analyzer's own metrics by name (``--metrics a,b,...``), taken from the one metric table
(``gemmlab.profile.metrics``), grouped by the diagnosis they serve. A group is collected whole or
not at all, so every diagnosis the analyzer makes from a default profile has all of its evidence.
One group is a section: the per-instruction source metrics (theoretical vs ideal sectors and
wavefronts) exist only through ``--section SourceCounters``, the lean section that defines them.

``launch__*`` and ``device__attribute_*`` metrics are read from the launch, not from counters:
they cost no replay pass (the ``launch`` group is free). ``profiler__replayer_passes`` is not
requested: the pass count comes from ncu's ``==PROF== Profiling ... - N passes`` line.

``--full`` collects ``--set full`` instead, for a report to browse in the Nsight Compute GUI.
docs/profile.md lists the groups and why each metric is there; benchmarks/profile_passes.py
measures the passes each group costs on the device.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from typing import Iterable, Optional, Sequence

from gemmlab.errors import InputError
from gemmlab.profile.metrics import DERIVED_SOL_NEEDS, METRICS, PCSAMP_REASONS, STALL_REASONS, definition


@dataclass(frozen=True)
class Group:
    name: str
    shorts: tuple[str, ...]  # short names in gemmlab.profile.metrics
    why: str
    section: str = ""  # when set, the section collects these (they are not ``--metrics`` names)
    # shorts of a section group also named in --metrics: the section collects them either way (no pass of
    # their own), but an export prints only what a section's own tables show plus the --metrics list
    listed: tuple[str, ...] = ()

    @property
    def ncu_names(self) -> tuple[str, ...]:
        """The names passed to ``--metrics`` (for a section group, only its ``listed`` shorts)."""
        shorts = self.listed if self.section else self.shorts
        return tuple(request_name(s) for s in shorts)

    @property
    def free(self) -> bool:
        """True when every metric is read from the launch (no replay pass)."""
        return not self.section and all(n.startswith(("launch__", "device__attribute_")) for n in self.ncu_names)


# Where the table's preferred name is not collected by ncu 2025.3's --set full on sm_90, ask for the
# table's fallback that is: it is proven to exist there (the H100 capture holds it) and the metric
# table notes that it counts the same events (one LSU request per warp-level global ATOM/RED; every
# L2 atomic sector of a one-GPU kernel comes from the SMs' L1/TEX).
REQUEST_INSTEAD = {
    "global_atom_inst": "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "global_red_inst": "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l2_atom_sectors": "lts__t_sectors_srcunit_tex_op_atom.sum",
    "l2_red_sectors": "lts__t_sectors_srcunit_tex_op_red.sum",
}


def request_name(short: str) -> str:
    """The ncu name gemmlab asks for: the table's first name unless ``REQUEST_INSTEAD`` says otherwise."""
    d = definition(short)
    name = REQUEST_INSTEAD.get(short, d.names[0])
    if name not in d.names:
        raise ValueError(f"{short}: {name} is not one of the metric table's names {d.names}")
    return name


def _g(name: str, shorts: Iterable[str], why: str, section: str = "", listed: Iterable[str] = ()) -> Group:
    return Group(name, tuple(shorts), why, section, tuple(listed))


GROUPS: tuple[Group, ...] = (
    # The SOL percentages (sm_pct, mem_pct, l1tex_pct, l2_pct) are not asked for by name: ncu's
    # breakdown metrics cost 5-9 passes each on the H100, so the group collects their sub-units
    # (1 pass each) and gemmlab.profile.metrics derives the same maxima (DERIVED_SOL).
    _g("speed_of_light",
       ("duration", "dram_pct", "sm_cycles_elapsed", "sm_clock", "dram_clock", "elapsed_cycles",
        "sm_active_cycles",
        "pipe_fma_pct", "pipe_alu_pct", "pipe_lsu_pct", "pipe_fp64_pct", "pipe_shared_pct", "pipe_xu_pct",
        "pipe_tensor_pct", "issue_active_pct",
        "l1_wavefronts_pct", "lsuin_requests_pct", "l1_xbar_req_pct", "l1_texin_req_pct",
        "l2_tex_sectors_pct", "l2_xbar_in_pct", "l2_xbar_out_pct", "l2_tag_requests_pct", "l2_data_sectors_pct",
        "l2_fabric_pct"),
       "NVIDIA's SOLBottleneck logic: compute vs memory throughput and the busiest memory unit (from the "
       "sub-units: SM pipes and issue slots, L1 wavefronts, LSU and crossbar requests, L2 stages and the "
       "fabric between its partitions, DRAM); the time"),
    _g("launch",
       ("block_size", "grid_size", "registers", "smem_static", "smem_dynamic", "smem_driver", "smem_config",
        "sm_count", "waves", "occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps",
        "occ_limit_blocks", "occ_limit_barriers", "cluster_size", "clusters_at_once"),
       "launch geometry, resources and occupancy limits: tail effect, small grid, what limits occupancy; "
       "a clustered launch's clusters and how many the GPU holds at once (its real waves)"),
    _g("occupancy", ("occ_theoretical", "occ_achieved"),
       "theoretical vs achieved occupancy (NVIDIA flags < 80% of max and a gap > 10 points)"),
    _g("coalescing",
       ("gld_sectors", "gld_requests", "gst_sectors", "gst_requests", "gld_bytes_per_sector",
        "gst_bytes_per_sector", "gld_hit_rate", "l2_sectors_total"),
       "sectors per request and bytes used per sector for global loads and stores; the excess sectors' "
       "share of L1 and L2 traffic"),
    _g("shared_memory",
       ("smem_ld_conflicts", "smem_st_conflicts", "smem_ld_wavefronts", "smem_st_wavefronts", "smem_wavefronts",
        "smem_ld_inst", "smem_st_inst", "ldsm_inst", "l1_wavefronts_pct", "l1_shared_wavefronts_pct", "ffma_rate"),
       "bank conflicts (conflicts / wavefronts, N-way) vs conflict-free shared traffic saturating the L1 data "
       "pipe (shared loads per FMA)"),
    _g("source_counters",
       ("gl_sectors_theoretical", "gl_sectors_ideal", "smem_wavefronts_theoretical", "smem_wavefronts_ideal",
        "branch_uniform_pct", *[f"pcsamp_{r}" for r in PCSAMP_REASONS]),
       "per-instruction theoretical vs ideal sectors and shared wavefronts: the exact measure of uncoalesced "
       "and conflicting accesses (NVIDIA's UncoalescedGlobalAccess/SharedAccess rules); only the section "
       "collects these source-level metrics",
       section="SourceCounters",
       # the details page shows SourceCounters' summary table, without the stall samples: named in --metrics
       # as well, they are printed there (and the stall reasons reach every export of the report)
       listed=tuple(f"pcsamp_{r}" for r in PCSAMP_REASONS)),
    _g("warp_stalls",
       # The per-reason stall counters cost 9 passes; the reasons come from SourceCounters' sampling
       # instead (metrics.DERIVED_SOL: warp_cpi × each reason's share of the samples).
       ("issue_active", "warps_eligible", "warps_active", "warp_cpi"),
       "CPIStall: which reason dominates the cycles between a warp's instructions; all reasons, so the "
       "top one is known and the shares add up to the CPI"),
    _g("local_memory", ("local_ld_sectors", "local_st_sectors", "local_ld_inst", "local_st_inst", "inst_executed"),
       "spills: local-memory traffic and its share of instructions (NVIDIA flags > 10%)"),
    _g("pipes",
       ("pipe_fma_pct", "pipe_alu_pct", "pipe_fp64_pct", "pipe_xu_pct", "pipe_lsu_pct", "pipe_shared_pct",
        "pipe_tensor_pct", "pipe_tensor_imma_pct", "pipe_tensor_dmma_pct", "pipe_tensor_gmma_pct", "ipc_active", "ffma_rate", "ffma_peak_per_sm",
        "thread_inst_per_inst", "thread_inst_pred_on_per_inst"),
       "which pipe is busy when the SM is the bottleneck, FMA rate vs peak; divergence (< 24 of 32 threads)"),
    _g("memory_hierarchy", ("l1_hit_pct", "l2_hit_pct", "dram_bytes_per_s", "lsuin_requests_pct"),
       "cache hit rates, achieved DRAM bandwidth and LSU request rate: where the traffic the SOL units carry "
       "ends up"),
    _g("roofline", ("ffma_thread_inst", "fadd_thread_inst", "fmul_thread_inst", "dram_bytes_read", "dram_bytes_write"),
       "achieved FP32 FLOP/s and arithmetic intensity for the roofline"),
    _g("atomics", ("global_atom_inst", "global_red_inst", "l2_atom_sectors", "l2_red_sectors", "smem_atom_wavefronts",
                   "smem_atom_inst"),
       "atomic and reduction traffic (hot-address contention shows as lg_throttle/drain stalls)"),
)
GROUP_NAMES = tuple(g.name for g in GROUPS)
DEFAULT_GROUPS = GROUP_NAMES

# Metrics in the table that the default leaves out, and why (docs/profile.md repeats this).
NOT_COLLECTED = {
    **{f"stall_{r}": "derived from SourceCounters' warp-state samples × warp_cpi (the 19 counters cost 9 passes)"
       for r in STALL_REASONS},
    "sm_pct": "derived from the SM pipes and issue slots (sm__throughput costs 9 passes alone)",
    "mem_pct": "derived from L1, L2 and DRAM (gpu__compute_memory_throughput costs 6 passes alone)",
    "l1tex_pct": "derived from L1 wavefronts and LSU requests (l1tex__throughput costs 6 passes alone)",
    "l2_pct": "derived from the L2 stages (lts__throughput costs 5 passes alone)",
    "local_spill_pct": "a derived__ metric the MemoryWorkloadAnalysis section defines; local sectors and "
                       "instructions (local_memory group) carry the same evidence",
    "replay_passes": "read from ncu's ==PROF== line instead",
    "tensor_fp8_ops": "read where an export has it (--set full: the tensor roofline section); it only words "
                      "the ladder advice of a kernel that already runs FP8, and its pass cost is unmeasured",
}


@dataclass(frozen=True)
class Collection:
    """What to collect: a metric list (``--metrics``), sections, or a named set (``--set``)."""

    name: str
    metrics: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    set_name: Optional[str] = None
    groups: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not (self.metrics or self.sections or self.set_name):
            raise ValueError("a Collection needs metrics, sections or a set")

    def to_dict(self) -> dict:
        return {"name": self.name, "set": self.set_name, "sections": list(self.sections),
                "groups": list(self.groups), "metrics": list(self.metrics)}


def group(name: str) -> Group:
    for g in GROUPS:
        if g.name == name:
            return g
    raise InputError(f"{name!r}: unknown metric group; expected some of {', '.join(GROUP_NAMES)}", option="groups")


def default_collection(groups: Optional[Sequence[str]] = None) -> Collection:
    """The analyzer's metrics, for the named groups (all by default), each name once, in group order."""
    return _default_collection(tuple(groups) if groups else None)


@functools.lru_cache(maxsize=32)  # a Collection is frozen; every diagnosis's collect command asks for it
def _default_collection(groups: Optional[tuple[str, ...]]) -> Collection:
    chosen = [group(n) for n in (DEFAULT_GROUPS if not groups else groups)]
    names: list[str] = []
    sections: list[str] = []
    for g in chosen:
        if g.section and g.section not in sections:
            sections.append(g.section)
        for n in g.ncu_names:
            if n not in names:
                names.append(n)
    label = "default" if not groups or tuple(groups) == DEFAULT_GROUPS else "groups:" + ",".join(g.name for g in chosen)
    return Collection(name=label, metrics=tuple(names), sections=tuple(sections), groups=tuple(g.name for g in chosen))


def collected_names(collection: Collection) -> set[str]:
    """Every ncu name the collection yields that gemmlab's table knows: its --metrics, plus the table's
    names for the shorts of its section groups (what the analyzer will find in the report)."""
    out = set(collection.metrics)
    for g in GROUPS:
        if g.section and g.section in collection.sections:
            out |= {n for s in g.shorts for n in definition(s).names}
    return out


def full_collection() -> Collection:
    return Collection(name="full", set_name="full")


def parse_groups(text: Optional[str]) -> Optional[list[str]]:
    """``"speed_of_light,coalescing"`` → the list; None/empty → None (all groups)."""
    if not text:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    for n in names:
        group(n)  # validates
    return names


def uncovered(shorts: Iterable[str], collection: Collection) -> list[str]:
    """Short names (e.g. the analyzer's needs) whose metric the collection would not collect."""
    if collection.set_name == "full":
        return []
    have = collected_names(collection)

    def covered(short: str) -> bool:
        if set(METRICS[short].names) & have:
            return True
        needs = DERIVED_SOL_NEEDS.get(short)  # derived from its constituents (metrics.DERIVED_SOL)
        return needs is not None and all(set(METRICS[n].names) & have for n in needs)

    return [s for s in shorts if not covered(s)]


def base_name(ncu_name: str) -> str:
    """``sm__throughput.avg.pct_of_peak_sustained_elapsed`` → ``sm__throughput``, as ``--query-metrics`` lists it."""
    return ncu_name.split(".", 1)[0]
