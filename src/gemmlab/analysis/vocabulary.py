"""The fixed vocabulary of diagnoses: every finding the analyzer reports has one of these categories.

The list is closed on purpose: a category is a promise about what the evidence showed and which
family of fixes applies. ``docs/analyzer.md`` documents each one with the rule that produces it.
"""

from __future__ import annotations

from enum import Enum


class Category(str, Enum):
    """What limits a kernel (or one of its problems)."""

    UNCOALESCED_GLOBAL_LOADS = "uncoalesced_global_loads"
    UNCOALESCED_GLOBAL_STORES = "uncoalesced_global_stores"
    L1_LSU_BOUND = "l1_lsu_bound"
    SHARED_BANK_CONFLICTS = "shared_bank_conflicts"
    SHARED_MEMORY_THROUGHPUT = "shared_memory_throughput"
    LOCAL_MEMORY = "local_memory"
    ATOMIC_CONTENTION = "atomic_contention"
    TAIL_EFFECT = "tail_effect"
    GRID_TOO_SMALL = "grid_too_small"
    OCCUPANCY_REGISTERS = "occupancy_registers"
    OCCUPANCY_SHARED_MEMORY = "occupancy_shared_memory"
    OCCUPANCY_BLOCK_SIZE = "occupancy_block_size"
    LATENCY_BOUND = "latency_bound"
    WARP_DIVERGENCE = "warp_divergence"
    BARRIER_STALLS = "barrier_stalls"
    DRAM_BOUND = "dram_bound"
    L2_BOUND = "l2_bound"
    COMPUTE_BOUND = "compute_bound"
    TENSOR_BOUND = "tensor_bound"
    INSTRUCTION_OVERHEAD = "instruction_overhead"
    INCONCLUSIVE = "inconclusive"

    def __str__(self) -> str:
        return self.value


DESCRIPTIONS: dict[Category, str] = {
    Category.UNCOALESCED_GLOBAL_LOADS:
        "global loads request more 32-byte sectors than the bytes they use need (threads of a warp "
        "touch scattered addresses)",
    Category.UNCOALESCED_GLOBAL_STORES:
        "global stores write more sectors than needed (each thread writes its own sector)",
    Category.L1_LSU_BOUND:
        "L1/TEX or the LSU pipe is saturated by global accesses that are already coalesced and "
        "conflict-free: too many memory instructions per FMA, usually no data reuse",
    Category.SHARED_BANK_CONFLICTS:
        "shared-memory accesses need extra wavefronts because threads of a warp hit the same bank",
    Category.SHARED_MEMORY_THROUGHPUT:
        "conflict-free shared-memory traffic saturates the L1 data pipe / MIO queue: too many shared "
        "loads per FMA (no register reuse)",
    Category.LOCAL_MEMORY:
        "register spills or dynamically indexed local arrays send traffic to local memory",
    Category.ATOMIC_CONTENTION:
        "atomics or reductions serialise in L2 and throttle the LSU queue",
    Category.TAIL_EFFECT:
        "the last partial wave of blocks leaves SMs idle for a large share of the run",
    Category.GRID_TOO_SMALL:
        "the grid has fewer blocks than the GPU has SMs (or warp slots), so hardware idles",
    Category.OCCUPANCY_REGISTERS:
        "theoretical occupancy is below 80% because of registers per thread",
    Category.OCCUPANCY_SHARED_MEMORY:
        "theoretical occupancy is below 80% because of shared memory per block",
    Category.OCCUPANCY_BLOCK_SIZE:
        "theoretical occupancy is below 80% because of the block size (block or warp slot limits), "
        "or the block size is not a multiple of 32",
    Category.LATENCY_BOUND:
        "no unit is busy; warps wait on memory or instruction latency that too little parallelism hides",
    Category.WARP_DIVERGENCE:
        "fewer than 24 of 32 threads are active per executed instruction",
    Category.BARRIER_STALLS:
        "warps spend a large share of their time waiting at __syncthreads()",
    Category.DRAM_BOUND:
        "DRAM bandwidth is the busiest unit",
    Category.L2_BOUND:
        "L2 bandwidth is the busiest unit",
    Category.COMPUTE_BOUND:
        "an SM math pipe (FMA, ALU, FP64, XU) runs near its peak",
    Category.TENSOR_BOUND:
        "the tensor-core pipe runs near its peak",
    Category.INSTRUCTION_OVERHEAD:
        "the schedulers issue nearly every cycle but most instructions are neither math nor memory "
        "(address arithmetic, loop control): unroll, hoist, simplify indexing",
    Category.INCONCLUSIVE:
        "the metrics that tell the candidate causes apart are missing; see missing_evidence",
}

# Categories whose problem is wasted work in a unit (fixing it removes traffic or instructions).
WASTE = frozenset({
    Category.UNCOALESCED_GLOBAL_LOADS, Category.UNCOALESCED_GLOBAL_STORES,
    Category.SHARED_BANK_CONFLICTS, Category.LOCAL_MEMORY, Category.WARP_DIVERGENCE,
    Category.ATOMIC_CONTENTION, Category.INSTRUCTION_OVERHEAD,
})

# Categories that say "this unit is busy doing necessary work" (candidates for at_limit).
UNIT_BOUND = frozenset({
    Category.L1_LSU_BOUND, Category.SHARED_MEMORY_THROUGHPUT, Category.L2_BOUND,
    Category.DRAM_BOUND, Category.COMPUTE_BOUND, Category.TENSOR_BOUND,
})


def describe(category: Category) -> str:
    return DESCRIPTIONS[category]
