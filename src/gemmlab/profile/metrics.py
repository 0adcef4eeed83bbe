"""The one table of metric names: short names used in gemmlab's code → Nsight Compute names.

Analysis code speaks only in short names (``"dram_pct"``); this table maps each to the ncu
metric names that carry it, in order of preference, so that exports from other ncu versions or
architectures still resolve (e.g. ``gpu__dram_throughput`` in 2025.x on sm_90 vs
``dram__throughput`` elsewhere). It also records the ncu section that collects each metric, so
the analyzer can print the exact command that fills a gap.

Values are in base units after import (ns, byte, %, counts), whatever the export showed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from gemmlab.profile.records import KernelLaunch

# ncu's stall reasons (WarpStateStats); the metric is
# smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio (cycles per issued instruction).
STALL_REASONS = (
    "barrier",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "gmma",
    "imc_miss",
    "lg_throttle",
    "long_scoreboard",
    "math_pipe_throttle",
    "membar",
    "mio_throttle",
    "misc",
    "no_instruction",
    "not_selected",
    "selected",
    "short_scoreboard",
    "sleeping",
    "tex_throttle",
    "wait",
)


@dataclass(frozen=True)
class MetricDef:
    short: str
    names: tuple[str, ...]  # ncu names, preferred first
    unit: str  # base unit after import
    section: str  # ncu --section that collects it ("" for launch__/device__ metrics: free)
    doc: str


def _d(short: str, names, unit: str, section: str, doc: str) -> MetricDef:
    return MetricDef(short, tuple([names] if isinstance(names, str) else names), unit, section, doc)


_DEFS = [
    # --- Speed of Light (section SpeedOfLight) ---
    _d("duration", "gpu__time_duration.sum", "ns", "SpeedOfLight", "kernel duration"),
    _d("sm_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "SpeedOfLight",
       "Compute (SM) throughput: the busiest SM sub-unit, % of peak"),
    _d("mem_pct", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%",
       "SpeedOfLight", "Memory throughput: the busiest memory unit (L1, L2, DRAM), % of peak"),
    _d("dram_pct", ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                    "dram__throughput.avg.pct_of_peak_sustained_elapsed"), "%", "SpeedOfLight",
       "DRAM throughput, % of peak"),
    _d("l1tex_pct", ("l1tex__throughput.avg.pct_of_peak_sustained_active",), "%", "SpeedOfLight",
       "L1/TEX cache throughput (includes shared memory), % of peak while active"),
    _d("l2_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "%", "SpeedOfLight",
       "L2 throughput, % of peak"),
    _d("sm_cycles_elapsed", "sm__cycles_elapsed.avg", "cycle", "SpeedOfLight", "SM cycles elapsed"),
    _d("sm_clock", "sm__cycles_elapsed.avg.per_second", "hz", "SpeedOfLight", "SM frequency"),
    # --- Launch statistics and occupancy (launch__ metrics cost no replay pass) ---
    _d("block_size", "launch__block_size", "", "LaunchStats", "threads per block"),
    _d("grid_size", "launch__grid_size", "", "LaunchStats", "blocks in the grid"),
    _d("registers", "launch__registers_per_thread", "register/thread", "LaunchStats",
       "registers per thread"),
    _d("smem_static", "launch__shared_mem_per_block_static", "byte/block", "LaunchStats",
       "static shared memory per block"),
    _d("smem_dynamic", "launch__shared_mem_per_block_dynamic", "byte/block", "LaunchStats",
       "dynamic shared memory per block"),
    _d("smem_driver", "launch__shared_mem_per_block_driver", "byte/block", "LaunchStats",
       "shared memory the driver reserves per block"),
    _d("smem_config", "launch__shared_mem_config_size", "byte", "LaunchStats",
       "shared memory carve-out selected for the launch"),
    _d("sm_count", ("launch__sm_count", "device__attribute_multiprocessor_count"), "SM",
       "LaunchStats", "SMs on the device"),
    _d("waves", "launch__waves_per_multiprocessor", "", "LaunchStats", "waves per SM"),
    _d("occ_limit_registers", "launch__occupancy_limit_registers", "block", "Occupancy",
       "blocks/SM allowed by registers"),
    _d("occ_limit_shared_mem", "launch__occupancy_limit_shared_mem", "block", "Occupancy",
       "blocks/SM allowed by shared memory"),
    _d("occ_limit_warps", "launch__occupancy_limit_warps", "block", "Occupancy",
       "blocks/SM allowed by warp slots"),
    _d("occ_limit_blocks", "launch__occupancy_limit_blocks", "block", "Occupancy",
       "blocks/SM hardware limit"),
    _d("occ_limit_barriers", "launch__occupancy_limit_barriers", "block", "Occupancy",
       "blocks/SM allowed by barriers"),
    _d("occ_theoretical", "sm__maximum_warps_per_active_cycle_pct", "%", "Occupancy",
       "theoretical occupancy"),
    _d("occ_achieved", "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "Occupancy",
       "achieved occupancy"),
    # --- Global memory coalescing (MemoryWorkloadAnalysis_Tables / SourceCounters) ---
    _d("gld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector",
       "MemoryWorkloadAnalysis_Tables", "global load sectors"),
    _d("gld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "request",
       "MemoryWorkloadAnalysis_Tables", "global load requests"),
    _d("gst_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sector",
       "MemoryWorkloadAnalysis_Tables", "global store sectors"),
    _d("gst_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "request",
       "MemoryWorkloadAnalysis_Tables", "global store requests"),
    _d("gld_bytes_per_sector", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
       "byte/sector", "SourceCounters", "bytes used per global load sector (32 ideal)"),
    _d("gst_bytes_per_sector", "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
       "byte/sector", "SourceCounters", "bytes used per global store sector (32 ideal)"),
    # --- Shared memory ---
    _d("smem_ld_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared load bank conflicts"),
    _d("smem_st_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared store bank conflicts"),
    _d("smem_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared load wavefronts"),
    _d("smem_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared store wavefronts"),
    _d("smem_ld_inst", "smsp__sass_inst_executed_op_shared_ld.sum", "inst", "InstructionStats",
       "shared load instructions (warp level)"),
    _d("smem_st_inst", "smsp__sass_inst_executed_op_shared_st.sum", "inst", "InstructionStats",
       "shared store instructions (warp level)"),
    _d("ldsm_inst", "smsp__inst_executed_op_ldsm.sum", "inst", "InstructionStats",
       "ldmatrix instructions"),
    # --- Local memory ---
    _d("local_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "sector",
       "MemoryWorkloadAnalysis_Tables", "local load sectors"),
    _d("local_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", "sector",
       "MemoryWorkloadAnalysis_Tables", "local store sectors"),
    _d("local_ld_inst", "smsp__sass_inst_executed_op_local_ld.sum", "inst", "InstructionStats",
       "local load instructions"),
    _d("local_st_inst", "smsp__sass_inst_executed_op_local_st.sum", "inst", "InstructionStats",
       "local store instructions"),
    _d("inst_executed", "smsp__inst_executed.sum", "inst", "InstructionStats",
       "warp instructions executed"),
    # --- Scheduler and warp state (SchedulerStats, WarpStateStats) ---
    _d("issue_active", "smsp__issue_active.avg.per_cycle_active", "inst/cycle", "SchedulerStats",
       "instructions issued per scheduler per active cycle (max 1)"),
    _d("warps_eligible", "smsp__warps_eligible.avg.per_cycle_active", "warp", "SchedulerStats",
       "eligible warps per scheduler per cycle"),
    _d("warp_cpi", "smsp__average_warp_latency_per_inst_issued.ratio", "cycle", "WarpStateStats",
       "cycles between a warp's instructions (sum of all stall reasons)"),
    *[
        _d(f"stall_{r}", f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio", "cycle",
           "WarpStateStats", f"cycles per issued instruction stalled on {r}")
        for r in STALL_REASONS
    ],
    _d("thread_inst_per_inst", "smsp__thread_inst_executed_per_inst_executed.ratio", "thread",
       "InstructionStats", "active threads per executed instruction (32 = no divergence)"),
    # --- Pipes ---
    _d("pipe_fma_pct", "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "FMA pipe utilisation"),
    _d("pipe_alu_pct", "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "ALU pipe utilisation"),
    _d("pipe_fp64_pct", "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "FP64 pipe utilisation"),
    _d("pipe_lsu_pct", "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "LSU pipe utilisation"),
    _d("pipe_shared_pct", "sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "shared pipe (FP16+tensor) utilisation"),
    _d("pipe_tensor_pct", ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                           "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
       "%", "ComputeWorkloadAnalysis", "tensor pipe utilisation"),
    _d("ipc_active", "sm__inst_executed.avg.per_cycle_active", "inst/cycle",
       "ComputeWorkloadAnalysis", "instructions per active SM cycle"),
    # --- FLOP counts (InstructionStats / roofline) ---
    _d("ffma_thread_inst", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst",
       "InstructionStats", "FP32 FMA thread instructions"),
    _d("fadd_thread_inst", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst",
       "InstructionStats", "FP32 add thread instructions"),
    _d("fmul_thread_inst", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst",
       "InstructionStats", "FP32 mul thread instructions"),
    _d("dram_bytes_read", "dram__bytes_read.sum", "byte", "MemoryWorkloadAnalysis", "DRAM bytes read"),
    _d("dram_bytes_write", "dram__bytes_write.sum", "byte", "MemoryWorkloadAnalysis",
       "DRAM bytes written"),
    # --- Atomics ---
    _d("global_atom_inst", "smsp__sass_inst_executed_op_global_atom.sum", "inst", "InstructionStats",
       "global atomic instructions"),
    _d("global_red_inst", "smsp__sass_inst_executed_op_global_red.sum", "inst", "InstructionStats",
       "global reduction instructions"),
    _d("l2_atom_sectors", "lts__t_sectors_op_atom.sum", "sector", "MemoryWorkloadAnalysis_Tables",
       "L2 atomic sectors"),
    _d("l2_red_sectors", "lts__t_sectors_op_red.sum", "sector", "MemoryWorkloadAnalysis_Tables",
       "L2 reduction sectors"),
    # --- Analyzer: SOL breakdown (SpeedOfLight collects the "breakdown:" sub-metrics) ---
    _d("l1_wavefronts_pct", ("l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed",
                             "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed"),
       "%", "SpeedOfLight", "L1 data-pipe wavefronts (global, local and shared), % of peak"),
    _d("l1_shared_wavefronts_pct",
       "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed", "%",
       "SpeedOfLight", "L1 data-pipe wavefronts for shared memory, % of peak"),
    _d("lsuin_requests_pct", ("l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed",
                              "l1tex__lsuin_requests.sum.pct_of_peak_sustained_elapsed"),
       "%", "SpeedOfLight", "LSU instructions accepted by L1/TEX, % of peak (one per cycle per SM)"),
    _d("issue_slots_pct", ("sm__inst_issued.avg.pct_of_peak_sustained_active",
                           "sm__issue_active.avg.pct_of_peak_sustained_elapsed"),
       "%", "SpeedOfLight", "issue slots busy, % of peak"),
    # --- Analyzer: exact per-instruction coalescing / conflict totals (SourceCounters) ---
    _d("gl_sectors_theoretical", "memory_l2_theoretical_sectors_global", "sector", "SourceCounters",
       "global sectors the access pattern requests (loads and stores)"),
    _d("gl_sectors_ideal", "memory_l2_theoretical_sectors_global_ideal", "sector", "SourceCounters",
       "global sectors a fully coalesced pattern would request for the same bytes"),
    _d("smem_wavefronts_theoretical", "memory_l1_wavefronts_shared", "wavefront", "SourceCounters",
       "shared-memory wavefronts the access pattern needs"),
    _d("smem_wavefronts_ideal", "memory_l1_wavefronts_shared_ideal", "wavefront", "SourceCounters",
       "shared-memory wavefronts a conflict-free pattern would need"),
    # --- Analyzer: totals for shared memory (MemoryWorkloadAnalysis_Tables) ---
    _d("smem_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "wavefront",
       "MemoryWorkloadAnalysis_Tables", "shared-memory wavefronts (all operations)"),
    _d("smem_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared-memory bank conflicts (all operations)"),
    _d("gld_hit_rate", "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "%",
       "MemoryWorkloadAnalysis_Tables", "L1 hit rate of global load sectors"),
    _d("l2_sectors_total", "lts__t_sectors.sum", "sector", "MemoryWorkloadAnalysis_Tables",
       "all L2 sectors accessed"),
    _d("l2_hit_rate", "lts__t_sector_hit_rate.pct", "%", "MemoryWorkloadAnalysis", "L2 hit rate"),
    _d("local_spill_pct", "derived__local_spilling_requests_pct", "%", "MemoryWorkloadAnalysis",
       "share of L1 requests that are register spills to local memory"),
    # --- Analyzer: FP32 work (SpeedOfLight_RooflineChart) ---
    _d("ffma_rate", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed",
       "inst/cycle", "SpeedOfLight_RooflineChart",
       "FP32 FMA thread instructions per elapsed cycle (summed over schedulers)"),
    _d("ffma_peak_per_sm", "sm__sass_thread_inst_executed_op_ffma_pred_on.avg.peak_sustained",
       "inst/cycle", "SpeedOfLight_RooflineChart", "FP32 FMA thread instructions per cycle per SM at peak"),
    _d("pipe_xu_pct", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "XU (special function) pipe utilisation"),
    _d("pipe_fma_inst_pct", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "FMA pipe utilisation by issued instructions"),
    _d("pipe_alu_inst_pct", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "ALU pipe utilisation by issued instructions"),
    _d("pipe_tensor_gmma_pct",
       "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "tensor pipe (warpgroup MMA, sm_90) utilisation"),
    # --- Analyzer: atomics (MemoryWorkloadAnalysis_Tables) ---
    _d("gatom_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "request",
       "MemoryWorkloadAnalysis_Tables", "global atomic requests"),
    _d("gred_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "request",
       "MemoryWorkloadAnalysis_Tables", "global reduction requests"),
    _d("l2_atom_sectors_tex", "lts__t_sectors_srcunit_tex_op_atom.sum", "sector",
       "MemoryWorkloadAnalysis_Tables", "L2 sectors for atomics from L1/TEX"),
    _d("l2_red_sectors_tex", "lts__t_sectors_srcunit_tex_op_red.sum", "sector",
       "MemoryWorkloadAnalysis_Tables", "L2 sectors for reductions from L1/TEX"),
    # --- Analyzer: branch efficiency and device limits ---
    _d("branch_uniform_pct", "smsp__sass_average_branch_targets_threads_uniform.pct", "%",
       "SourceCounters", "branch efficiency: branches whose targets are uniform across the warp"),
    _d("thread_inst_pred_on_per_inst", "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
       "thread", "WarpStateStats",
       "threads not predicated off per executed instruction (32 = no divergence, no predication)"),
    _d("regs_per_sm", "device__attribute_max_registers_per_multiprocessor", "register",
       "LaunchStats", "registers per SM"),
    _d("max_threads_per_sm", "device__attribute_max_threads_per_multiprocessor", "thread",
       "LaunchStats", "resident threads per SM"),
    _d("smem_per_sm", "device__attribute_max_shared_memory_per_multiprocessor", "byte",
       "LaunchStats", "shared memory per SM"),
    _d("smem_per_block_optin", "device__attribute_max_shared_memory_per_block_optin", "byte",
       "LaunchStats", "largest shared memory a block may opt in to"),
    # --- Profiler bookkeeping ---
    _d("replay_passes", "profiler__replayer_passes", "pass", "", "replay passes ncu needed"),
]

METRICS: dict[str, MetricDef] = {d.short: d for d in _DEFS}


def definition(short: str) -> MetricDef:
    try:
        return METRICS[short]
    except KeyError:
        raise KeyError(f"unknown metric short name {short!r}") from None


def resolve(launch: KernelLaunch, short: str) -> Optional[tuple[str, float]]:
    """(ncu name, numeric value) of the first name present for ``short`` in the record, else None."""
    for name in definition(short).names:
        v = launch.number(name)
        if v is not None:
            return name, v
    return None


def value(launch: KernelLaunch, short: str) -> Optional[float]:
    r = resolve(launch, short)
    return None if r is None else r[1]
