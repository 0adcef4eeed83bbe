"""The one table of metric names: short names used in gemmlab's code → Nsight Compute names.

Analysis code speaks only in short names (``"dram_pct"``); this table maps each to the ncu
metric names that carry it, in order of preference, so that exports from other ncu versions or
architectures still resolve (e.g. ``gpu__dram_throughput`` in 2025.x on sm_90 vs
``dram__throughput`` elsewhere). It also records the ncu section that collects each metric, so
the analyzer can print the exact command that fills a gap.

Values are in base units after import (ns, byte, %, counts), whatever the export showed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

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

# The warp-state sampler's reasons (smsp__pcsamp_warps_issue_stalled_<r>): the counters' list with
# "no_instructions" spelled in the plural, "gmma" absent and "warpgroup_arrive" added.
PCSAMP_NAME = {"no_instruction": "no_instructions"}
PCSAMP_REASONS = tuple(r for r in STALL_REASONS if r != "gmma") + ("warpgroup_arrive",)


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
    # The details page's SOL "SM Frequency" is the GPC clock; it agrees with the SM clock to
    # within 0.2% in the H100 captures, so it stands in when only the details page was exported.
    _d("sm_clock", ("sm__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second"), "hz",
       "SpeedOfLight", "SM frequency"),
    _d("dram_clock", "dram__cycles_elapsed.avg.per_second", "hz", "SpeedOfLight", "DRAM frequency"),
    _d("elapsed_cycles", "gpc__cycles_elapsed.max", "cycle", "SpeedOfLight",
       "elapsed cycles of the slowest GPC"),
    _d("sm_active_cycles", "sm__cycles_active.avg", "cycle", "SpeedOfLight",
       "cycles an SM had at least one warp, averaged over SMs"),
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
    _d("cluster_size", "launch__cluster_size", "", "LaunchStats",
       "CTAs per thread-block cluster (0: no cluster)"),
    _d("clusters_at_once", "launch__cluster_max_active", "cluster", "Occupancy",
       "clusters the GPU holds at once (a cluster's CTAs share one GPC)"),
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
       "byte/sector", "MemoryWorkloadAnalysis_Tables", "bytes used per global load sector (32 ideal)"),
    _d("gst_bytes_per_sector", "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
       "byte/sector", "MemoryWorkloadAnalysis_Tables", "bytes used per global store sector (32 ideal)"),
    # --- Shared memory ---
    _d("smem_ld_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared load bank conflicts"),
    _d("smem_st_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared store bank conflicts"),
    _d("smem_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared load wavefronts"),
    _d("smem_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "",
       "MemoryWorkloadAnalysis_Tables", "shared store wavefronts"),
    _d("smem_ld_inst", "smsp__sass_inst_executed_op_shared_ld.sum", "inst", "MemoryWorkloadAnalysis_Tables",
       "shared load instructions (warp level)"),
    _d("smem_st_inst", "smsp__sass_inst_executed_op_shared_st.sum", "inst", "MemoryWorkloadAnalysis_Tables",
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
    # --- Memory workload analysis (headline numbers) ---
    _d("l1_hit_pct", "l1tex__t_sector_hit_rate.pct", "%", "MemoryWorkloadAnalysis",
       "L1/TEX sector hit rate"),
    _d("l2_hit_pct", "lts__t_sector_hit_rate.pct", "%", "MemoryWorkloadAnalysis", "L2 sector hit rate"),
    _d("dram_bytes_per_s", "dram__bytes.sum.per_second", "byte/s", "MemoryWorkloadAnalysis",
       "DRAM bandwidth achieved"),
    _d("branch_uniform_pct", "smsp__sass_average_branch_targets_threads_uniform.pct", "%",
       "SourceCounters", "branch efficiency: branches whose threads all took the same target"),
    # --- Scheduler and warp state (SchedulerStats, WarpStateStats) ---
    _d("issue_active", "smsp__issue_active.avg.per_cycle_active", "inst/cycle", "SchedulerStats",
       "instructions issued per scheduler per active cycle (max 1)"),
    _d("warps_eligible", "smsp__warps_eligible.avg.per_cycle_active", "warp", "SchedulerStats",
       "eligible warps per scheduler per cycle"),
    _d("warps_active", "smsp__warps_active.avg.per_cycle_active", "warp", "SchedulerStats",
       "active warps per scheduler per cycle"),
    _d("warp_cpi", "smsp__average_warp_latency_per_inst_issued.ratio", "cycle", "WarpStateStats",
       "cycles between a warp's instructions (sum of all stall reasons)"),
    *[
        _d(f"stall_{r}", f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio", "cycle",
           "WarpStateStats", f"cycles per issued instruction stalled on {r}")
        for r in STALL_REASONS
    ],
    _d("thread_inst_per_inst", "smsp__thread_inst_executed_per_inst_executed.ratio", "thread",
       "WarpStateStats", "active threads per executed instruction (32 = no divergence)"),
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
       "", "FP32 FMA thread instructions"),
    _d("fadd_thread_inst", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst",
       "", "FP32 add thread instructions"),
    _d("fmul_thread_inst", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst",
       "", "FP32 mul thread instructions"),
    # Blackwell GB20x (RTX 50) names them dram__bytes_op_read / _op_write (ncu 2025.3.1 --query-metrics
    # --chip gb202, docs/results/corpus-clusters-2026-11-29): an export from there is read too
    _d("dram_bytes_read", ("dram__bytes_read.sum", "dram__bytes_op_read.sum"), "byte", "MemoryWorkloadAnalysis",
       "DRAM bytes read"),
    _d("dram_bytes_write", ("dram__bytes_write.sum", "dram__bytes_op_write.sum"), "byte",
       "MemoryWorkloadAnalysis", "DRAM bytes written"),
    # --- Atomics ---
    # The first names are not in --set full (ncu 2025.3, sm_90); the fallbacks are, and count the
    # same events: the LSU makes one request per warp-level global ATOM/RED instruction, and in a
    # one-GPU kernel every L2 atomic sector comes from the SMs' L1/TEX (srcunit_tex).
    _d("global_atom_inst", ("smsp__sass_inst_executed_op_global_atom.sum",
                            "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"), "inst",
       "InstructionStats", "global atomic instructions"),
    _d("smem_atom_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum", "wavefront",
       "MemoryWorkloadAnalysis_Tables", "shared-memory atomic wavefronts (same-address lanes serialise into more)"),
    _d("smem_atom_inst", "smsp__inst_executed_op_shared_atom.sum", "inst", "MemoryWorkloadAnalysis_Tables",
       "warp-level shared-memory atomic instructions (ATOMS)"),
    _d("global_red_inst", ("smsp__sass_inst_executed_op_global_red.sum", "smsp__inst_executed_op_global_red.sum",
                           "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"), "inst",
       "InstructionStats", "global reduction instructions"),
    _d("l2_atom_sectors", ("lts__t_sectors_op_atom.sum", "lts__t_sectors_srcunit_tex_op_atom.sum"), "sector",
       "MemoryWorkloadAnalysis_Tables", "L2 atomic sectors"),
    _d("l2_red_sectors", ("lts__t_sectors_op_red.sum", "lts__t_sectors_srcunit_tex_op_red.sum"), "sector",
       "MemoryWorkloadAnalysis_Tables", "L2 reduction sectors"),
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
    _d("gld_hit_rate", "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "%",
       "MemoryWorkloadAnalysis_Tables", "L1 hit rate of global load sectors"),
    _d("l2_sectors_total", "lts__t_sectors.sum", "sector", "MemoryWorkloadAnalysis_Tables",
       "all L2 sectors accessed"),
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
    _d("pipe_tensor_imma_pct", "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "integer tensor (IMMA) pipe utilisation"),
    _d("pipe_tensor_dmma_pct", "sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "FP64 tensor (DMMA) pipe utilisation"),
    _d("pipe_tensor_gmma_pct",
       "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active", "%",
       "ComputeWorkloadAnalysis", "tensor pipe utilisation by warpgroup MMA instructions (sm_90)"),
    _d("tensor_fp8_ops", ("sm__ops_path_tensor_src_fp8.sum", "sm__ops_path_tensor_src_fp8_sparsity_off.sum"),
       "op", "SpeedOfLight_HierarchicalTensorRooflineChart",
       "math ops the tensor path executed with FP8 sources (sm_90): > 0 when the kernel already runs FP8"),
    # --- Analyzer: divergence ---
    _d("thread_inst_pred_on_per_inst", "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
       "thread", "WarpStateStats",
       "threads not predicated off per executed instruction (32 = no divergence, no predication)"),
    # --- Profiler bookkeeping ---
    _d("replay_passes", "profiler__replayer_passes", "pass", "", "replay passes ncu needed"),
    # --- Cheap constituents of the Speed-of-Light throughputs (see derived_sol below) ---
    _d("issue_active_pct", "smsp__issue_active.avg.pct_of_peak_sustained_active", "%", "SchedulerStats",
       "issue slots used, % of one instruction per scheduler per active cycle"),
    _d("l2_tex_sectors_pct", "lts__t_sectors_srcunit_tex.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "L2 sectors requested by the SMs' L1/TEX, % of peak"),
    _d("l2_tag_requests_pct", "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "L2 tag lookups, % of peak"),
    _d("l2_xbar_in_pct", "lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "cycles the crossbar delivered requests into L2, % of elapsed"),
    _d("l2_xbar_out_pct", "lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "cycles L2 returned data to the crossbar, % of elapsed"),
    _d("l2_data_sectors_pct", "lts__d_sectors.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "L2 data-bank sector accesses, % of peak"),
    _d("l2_fabric_pct", "lts__ltcfabric2ltc_cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "cycles the fabric between the two L2 partitions delivered into this slice "
       "(data homed in the far partition), % of elapsed"),
    _d("l1_xbar_req_pct", "l1tex__m_l1tex2xbar_req_cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "cycles L1/TEX sent requests to the crossbar (toward L2), % of elapsed"),
    _d("l1_texin_req_pct", "l1tex__texin_sm2tex_req_cycles_active.avg.pct_of_peak_sustained_elapsed", "%",
       "MemoryWorkloadAnalysis", "cycles the SM sent requests into the texture path of L1/TEX, % of elapsed"),
    # --- Sampled stall reasons (SourceCounters' warp-state sampling; see derived stalls below) ---
    *[
        _d(f"pcsamp_{r}", f"smsp__pcsamp_warps_issue_stalled_{PCSAMP_NAME.get(r, r)}", "sample",
           "SourceCounters", f"PC samples of warps stalled on {r}")
        for r in PCSAMP_REASONS
    ],
]

METRICS: dict[str, MetricDef] = {d.short: d for d in _DEFS}


def definition(short: str) -> MetricDef:
    try:
        return METRICS[short]
    except KeyError:
        raise KeyError(f"unknown metric short name {short!r}") from None


def resolve(launch: KernelLaunch, short: str) -> Optional[tuple[str, float]]:
    """(ncu name, numeric value) of the first name present for ``short`` in the record; else, for
    the Speed-of-Light throughputs, the value derived from their cheap constituents (the name then
    says how: ``max(...)``); else None."""
    for name in definition(short).names:
        v = launch.number(name)
        if v is not None:
            return name, v
    derive = DERIVED_SOL.get(short)
    return derive(launch) if derive is not None else None


# --- Speed of Light from its constituents ---------------------------------------------------
# sm__throughput, gpu__compute_memory_throughput, l1tex__throughput and lts__throughput are
# "breakdown" metrics: each is the maximum over many sub-unit counters, and asking for them costs
# 9, 6, 6 and 5 replay passes on the H100 (benchmarks/metric_pass_costs.py, 2026-11-21), while each
# constituent below costs one. ncu defines each throughput as the max of its sub-units' % of peak,
# so the max of the sub-units the analyzer collects anyway is the same number whenever the busiest
# sub-unit is among them — on the nine --set full H100 captures in tests/fixtures it is within
# 0.3 points for SM, 0.3 for L1/TEX and memory, and 0.1 for L2 (tests/test_derived_sol.py).
# Those were GEMMs. On the 150 launches of the grown corpus (elementwise, reductions, optimizers, FFT,
# sorting) the busiest L2 sub-unit was the fabric between the H100's two L2 partitions in 135 of them
# and the busiest L1 one the L1→crossbar request path in 67 (the breakdown: prefix over every sub-unit,
# benchmarks/probes/sol_breakdown.sh, docs/results/sol-breakdown-h100-2026-11-25): without them the
# derived L2 read up to 35 points low. With them the maxima match ncu's to 0.5 points (L2) and exactly
# (L1) on those launches.
# Only used when the breakdown metric itself is absent.
_SM_PIPES = ("pipe_fma_pct", "pipe_alu_pct", "pipe_lsu_pct", "pipe_fp64_pct", "pipe_shared_pct",
             "pipe_xu_pct", "pipe_tensor_pct", "issue_active_pct")  # % of active cycles
_L2_UNITS = ("l2_tex_sectors_pct", "l2_xbar_in_pct", "l2_xbar_out_pct", "l2_tag_requests_pct",
             "l2_data_sectors_pct", "l2_fabric_pct")


def _direct(launch: KernelLaunch, shorts) -> list[tuple[str, float]]:
    out = []
    for s in shorts:
        for name in definition(s).names:
            v = launch.number(name)
            if v is not None:
                out.append((name, v))
                break
    return out


def _active_fraction(launch: KernelLaunch) -> Optional[float]:
    active = _direct(launch, ("sm_active_cycles",))
    elapsed = _direct(launch, ("sm_cycles_elapsed",))
    if not active or not elapsed or elapsed[0][1] <= 0:
        return None
    return active[0][1] / elapsed[0][1]


def _max_of(parts: list[tuple[str, float]], scale: float = 1.0, how: str = "") -> Optional[tuple[str, float]]:
    if not parts:
        return None
    names = ", ".join(n for n, _ in parts)
    return f"max({names}){how}", max(v for _, v in parts) * scale


def _sm_pct(launch: KernelLaunch) -> Optional[tuple[str, float]]:
    frac = _active_fraction(launch)
    parts = _direct(launch, _SM_PIPES)
    if frac is None or "pipe_lsu_pct" not in {s for s in _SM_PIPES if _direct(launch, (s,))}:
        return None  # without the LSU pipe and the active fraction the max would understate
    return _max_of(parts, frac, " × active/elapsed cycles")


def _l1_elapsed(launch: KernelLaunch) -> list[tuple[str, float]]:
    return _direct(launch, ("l1_wavefronts_pct", "lsuin_requests_pct", "l1_xbar_req_pct", "l1_texin_req_pct"))


def _l1tex_pct(launch: KernelLaunch) -> Optional[tuple[str, float]]:
    frac = _active_fraction(launch)
    parts = _l1_elapsed(launch)
    if frac is None or frac <= 0 or not parts:
        return None
    return _max_of(parts, 1.0 / frac, " ÷ active/elapsed cycles")


def _l2_pct(launch: KernelLaunch) -> Optional[tuple[str, float]]:
    return _max_of(_direct(launch, _L2_UNITS))


# gpu__compute_memory_throughput's own sub-units: neither the fabric between the L2 partitions nor the L1
# request paths are among them (on the grown corpus, adding them read up to 24 points above it)
_MEM_UNITS = ("l1_wavefronts_pct", "lsuin_requests_pct", "dram_pct", "l2_tex_sectors_pct", "l2_xbar_in_pct",
              "l2_xbar_out_pct", "l2_tag_requests_pct", "l2_data_sectors_pct")


def _mem_pct(launch: KernelLaunch) -> Optional[tuple[str, float]]:
    l2 = _max_of(_direct(launch, _MEM_UNITS[3:]))
    parts = _direct(launch, _MEM_UNITS[:3]) + ([l2] if l2 else [])
    return _max_of(parts) if len(parts) >= 3 else None  # needs L1, L2 and DRAM


DERIVED_SOL = {"sm_pct": _sm_pct, "l1tex_pct": _l1tex_pct, "l2_pct": _l2_pct, "mem_pct": _mem_pct}


# --- Stall reasons from the warp-state sampler --------------------------------------------------
# The per-reason counters (smsp__average_warps_issue_stalled_<r>_per_issue_active.ratio) need one
# hardware counter each: the 19 of them cost 9 replay passes on the H100 (benchmarks/metric_pass_costs.py),
# while SourceCounters' PC sampling, which the default collects for the per-instruction sectors anyway,
# samples every warp's state in one pass. A reason's share of the samples times the cycles between a
# warp's instructions (warp_cpi, one counter) estimates the same cycles-per-issue: on the nine
# --set full H100 captures within 0.2 cycles or 15% of the counter for every reason above 0.5 cycles
# (tests/test_derived_sol.py). Only used when the counter itself is absent.
def _stall_from_samples(reason: str):
    def derive(launch: KernelLaunch) -> Optional[tuple[str, float]]:
        cpi = _direct(launch, ("warp_cpi",))
        samples = _direct(launch, tuple(f"pcsamp_{r}" for r in PCSAMP_REASONS))
        total = sum(v for _, v in samples)
        mine = _direct(launch, (f"pcsamp_{reason}",)) if reason in PCSAMP_REASONS else []
        if not cpi or total <= 0 or len(samples) < len(PCSAMP_REASONS) // 2:
            return None
        share = mine[0][1] / total if mine else 0.0
        return (f"{cpi[0][0]} × {mine[0][0] if mine else 'no samples of ' + reason} / all stall samples",
                cpi[0][1] * share)
    return derive


DERIVED_SOL.update({f"stall_{r}": _stall_from_samples(r) for r in STALL_REASONS})


def _sm_cycles_elapsed(launch: KernelLaunch) -> Optional[tuple[str, float]]:
    """sm__cycles_elapsed.avg is the sum over SMs divided by their count: the details page's
    SourceCounters/WorkloadDistribution section gives the sum ("Total SM Elapsed Cycles") and the launch
    statistics the count ("# SMs"), so the average is exact there too."""
    total = launch.number("sm__cycles_elapsed.sum")
    sms = _direct(launch, ("sm_count",))
    if total is None or not sms or sms[0][1] <= 0:
        return None
    return f"sm__cycles_elapsed.sum / {sms[0][0]}", total / sms[0][1]


DERIVED_SOL["sm_cycles_elapsed"] = _sm_cycles_elapsed
# The constituents each derivation cannot do without (a collection holding these covers the short).
DERIVED_SOL_NEEDS = {
    "sm_pct": ("pipe_lsu_pct", "pipe_fma_pct", "issue_active_pct", "sm_active_cycles", "sm_cycles_elapsed"),
    "l1tex_pct": ("l1_wavefronts_pct", "sm_active_cycles", "sm_cycles_elapsed"),
    "l2_pct": ("l2_tex_sectors_pct", "l2_xbar_in_pct"),
    "mem_pct": ("l1_wavefronts_pct", "dram_pct", "l2_tex_sectors_pct", "l2_xbar_in_pct"),
    **{f"stall_{r}": ("warp_cpi", "pcsamp_long_scoreboard", "pcsamp_selected") for r in STALL_REASONS},
}


def value(launch: KernelLaunch, short: str) -> Optional[float]:
    r = resolve(launch, short)
    return None if r is None else r[1]


def missing(launch: KernelLaunch, shorts: Iterable[str]) -> list[MetricDef]:
    """The definitions of ``shorts`` with no value in the record (absent, n/a, or text).

    Each carries the ncu section that collects it, so a caller can say what to add to the
    ncu command (``--section WarpStateStats``) rather than guess.
    """
    return [definition(s) for s in shorts if resolve(launch, s) is None]


# --- Display labels → ncu names -------------------------------------------------------------
# ``--page details`` (and what ``ncu --csv APP`` prints) names each value by its section's display
# name and a label ("GPU Speed Of Light Throughput", "Memory Throughput"), not by the metric.
# The pairs below are the header metrics of ncu 2025.3's section files, read from the sections of
# tests/fixtures/ncu/h100/gemm_tiled16.ncu-rep (ISection.header_metrics: name + label), and each
# is checked against the raw page of the same capture in tests/test_metric_table.py.
# Labels repeat across sections with different metrics ("Memory Throughput" is a % in Speed Of
# Light and byte/s in Memory Workload Analysis), so the key is (section, label).
_SOL = "GPU Speed Of Light Throughput"
_CWA = "Compute Workload Analysis"
_MWA = "Memory Workload Analysis"
_SCHED = "Scheduler Statistics"
_WARP = "Warp State Statistics"
_INST = "Instruction Statistics"
_LAUNCH = "Launch Statistics"
_OCC = "Occupancy"
_DIST = "GPU and Memory Workload Distribution"
_SRC = "Source Counters"
_PM = "PM Sampling"

_LABELS: tuple[tuple[str, str, str], ...] = (
    (_SOL, "DRAM Frequency", "dram__cycles_elapsed.avg.per_second"),
    (_SOL, "SM Frequency", "gpc__cycles_elapsed.avg.per_second"),
    (_SOL, "Elapsed Cycles", "gpc__cycles_elapsed.max"),
    (_SOL, "Memory Throughput", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
    (_SOL, "DRAM Throughput", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    (_SOL, "Duration", "gpu__time_duration.sum"),
    (_SOL, "L1/TEX Cache Throughput", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
    (_SOL, "L2 Cache Throughput", "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    (_SOL, "SM Active Cycles", "sm__cycles_active.avg"),
    (_SOL, "Compute (SM) Throughput", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
    (_PM, "Maximum Buffer Size", "profiler__pmsampler_buffer_size_bytes"),
    (_PM, "Maximum Sampling Interval", "profiler__pmsampler_interval_time"),
    (_PM, "# Pass Groups", "profiler__pmsampler_pass_groups"),
    (_CWA, "Executed Ipc Active", "sm__inst_executed.avg.per_cycle_active"),
    (_CWA, "Executed Ipc Elapsed", "sm__inst_executed.avg.per_cycle_elapsed"),
    (_CWA, "Issue Slots Busy", "sm__inst_issued.avg.pct_of_peak_sustained_elapsed"),
    (_CWA, "Issued Ipc Active", "sm__inst_issued.avg.per_cycle_active"),
    (_CWA, "SM Busy", "sm__instruction_throughput.avg.pct_of_peak_sustained_elapsed"),
    (_MWA, "Local Memory Spilling Requests", "derived__local_spilling_requests"),
    (_MWA, "Local Memory Spilling Request Overhead", "derived__local_spilling_requests_pct"),
    (_MWA, "Memory Throughput", "dram__bytes.sum.per_second"),
    (_MWA, "Mem Busy", "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed"),
    (_MWA, "Max Bandwidth", "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed"),
    (_MWA, "L1/TEX Hit Rate", "l1tex__t_sector_hit_rate.pct"),
    (_MWA, "L2 Persisting Size", "launch__persisting_l2_cache_size"),
    (_MWA, "L2 Compression Success Rate", "lts__average_gcomp_input_sector_success_rate.pct"),
    (_MWA, "L2 Compression Ratio", "lts__average_gcomp_output_sector_compression_achieved_rate.ratio"),
    (_MWA, "L2 Compression Input Sectors", "lrc__ilc_input_sectors.sum"),
    (_MWA, "L2 Hit Rate", "lts__t_sector_hit_rate.pct"),
    (_MWA, "Mem Pipes Busy", "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed"),
    (_SCHED, "One or More Eligible", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
    (_SCHED, "Issued Warp Per Scheduler", "smsp__issue_active.avg.per_cycle_active"),
    (_SCHED, "No Eligible", "smsp__issue_inst0.avg.pct_of_peak_sustained_active"),
    (_SCHED, "Active Warps Per Scheduler", "smsp__warps_active.avg.per_cycle_active"),
    (_SCHED, "Eligible Warps Per Scheduler", "smsp__warps_eligible.avg.per_cycle_active"),
    (_WARP, "Warp Cycles Per Issued Instruction", "smsp__average_warp_latency_per_inst_issued.ratio"),
    (_WARP, "Warp Cycles Per Executed Instruction", "smsp__average_warps_active_per_inst_executed.ratio"),
    (_WARP, "Avg. Active Threads Per Warp", "smsp__thread_inst_executed_per_inst_executed.ratio"),
    (_WARP, "Avg. Not Predicated Off Threads Per Warp",
     "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio"),
    (_INST, "Avg. Executed Instructions Per Scheduler", "smsp__inst_executed.avg"),
    (_INST, "Executed Instructions", "smsp__inst_executed.sum"),
    (_INST, "Avg. Issued Instructions Per Scheduler", "smsp__inst_issued.avg"),
    (_INST, "Issued Instructions", "smsp__inst_issued.sum"),
    (_LAUNCH, "Block Size", "launch__block_size"),
    (_LAUNCH, "Cluster Scheduling Policy", "launch__cluster_scheduling_policy"),
    (_LAUNCH, "Cluster Size", "launch__cluster_size"),
    (_LAUNCH, "Function Cache Configuration", "launch__func_cache_config"),
    (_LAUNCH, "Grid Size", "launch__grid_size"),
    (_LAUNCH, "Registers Per Thread", "launch__registers_per_thread"),
    (_LAUNCH, "Shared Memory Configuration Size", "launch__shared_mem_config_size"),
    (_LAUNCH, "Driver Shared Memory Per Block", "launch__shared_mem_per_block_driver"),
    (_LAUNCH, "Dynamic Shared Memory Per Block", "launch__shared_mem_per_block_dynamic"),
    (_LAUNCH, "Static Shared Memory Per Block", "launch__shared_mem_per_block_static"),
    (_LAUNCH, "# SMs", "launch__sm_count"),
    (_LAUNCH, "Stack Size", "launch__stack_size"),
    (_LAUNCH, "Threads", "launch__thread_count"),
    (_LAUNCH, "# TPCs", "launch__tpc_count"),
    (_LAUNCH, "Enabled TPC IDs", "launch__tpc_enabled"),
    (_LAUNCH, "Uses Green Context", "launch__uses_green_context"),
    (_LAUNCH, "Waves Per SM", "launch__waves_per_multiprocessor"),
    (_OCC, "Max Active Clusters", "launch__cluster_max_active"),
    (_OCC, "Max Cluster Size", "launch__cluster_max_potential_size"),
    (_OCC, "Overall GPU Occupancy", "launch__occupancy_cluster_gpu_pct"),
    (_OCC, "Cluster Occupancy", "launch__occupancy_cluster_pct"),
    (_OCC, "Block Limit Barriers", "launch__occupancy_limit_barriers"),
    (_OCC, "Block Limit SM", "launch__occupancy_limit_blocks"),
    (_OCC, "Block Limit Registers", "launch__occupancy_limit_registers"),
    (_OCC, "Block Limit Shared Mem", "launch__occupancy_limit_shared_mem"),
    (_OCC, "Block Limit Warps", "launch__occupancy_limit_warps"),
    (_OCC, "Theoretical Active Warps per SM", "sm__maximum_warps_avg_per_active_cycle"),
    (_OCC, "Theoretical Occupancy", "sm__maximum_warps_per_active_cycle_pct"),
    (_OCC, "Achieved Occupancy", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    (_OCC, "Achieved Active Warps Per SM", "sm__warps_active.avg.per_cycle_active"),
    (_DIST, "Average DRAM Active Cycles", "dram__cycles_active.avg"),
    (_DIST, "Total DRAM Elapsed Cycles", "dram__cycles_elapsed.sum"),
    (_DIST, "Average L1 Active Cycles", "l1tex__cycles_active.avg"),
    (_DIST, "Total L1 Elapsed Cycles", "l1tex__cycles_elapsed.sum"),
    (_DIST, "Average L2 Active Cycles", "lts__cycles_active.avg"),
    (_DIST, "Total L2 Elapsed Cycles", "lts__cycles_elapsed.sum"),
    (_DIST, "Average SM Active Cycles", "sm__cycles_active.avg"),
    (_DIST, "Total SM Elapsed Cycles", "sm__cycles_elapsed.sum"),
    (_DIST, "Average SMSP Active Cycles", "smsp__cycles_active.avg"),
    (_DIST, "Total SMSP Elapsed Cycles", "smsp__cycles_elapsed.sum"),
    (_SRC, "Branch Instructions Ratio", "derived__smsp__inst_executed_op_branch_pct"),
    (_SRC, "Branch Instructions", "smsp__inst_executed_op_branch.sum"),
    (_SRC, "Branch Efficiency", "smsp__sass_average_branch_targets_threads_uniform.pct"),
    (_SRC, "Avg. Divergent Branches", "smsp__sass_branch_targets_threads_divergent.avg"),
)

LABELS: dict[tuple[str, str], str] = {(sec, label): name for sec, label, name in _LABELS}

# The section of ncu's --metrics output (a raw metric name in the Metric Name column).
COMMAND_LINE_SECTION = "Command line profiler metrics"
# ncu metric names: unit__counter[.rollup[.submetric]], optionally prefixed (breakdown:, group:)
# or qualified by a triage unit (FBSP.TriageCompute.dramc__...).
# SourceCounters' per-instruction metrics have no unit prefix (memory_l2_theoretical_sectors_global,
# inst_executed, thread_inst_executed_true).
_METRIC_NAME = re.compile(r"^(?:(?:[A-Za-z0-9_]+[.:])*[a-z0-9]+__[A-Za-z0-9_.]+"
                          r"|(?:memory|inst|thread_inst)_[a-z0-9_]+)$")


def is_metric_name(text: str) -> bool:
    """True for an ncu metric name (``gpu__time_duration.sum``), false for a display label."""
    return bool(_METRIC_NAME.match(text))


def name_for_label(section: str, label: str) -> str:
    """The key a details-page row is stored under.

    A known (section, label) gives its ncu metric name; a label that already is a metric name
    (``--print-metric-name name``, ``--metrics``) stays as it is; anything else is kept under
    ``label:<section>/<label>`` so no value is lost.
    """
    name = LABELS.get((section, label))
    if name is not None:
        return name
    if is_metric_name(label):
        return label
    return f"label:{section}/{label}"
