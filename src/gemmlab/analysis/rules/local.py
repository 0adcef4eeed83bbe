"""Local memory: register spills and dynamically indexed per-thread arrays.

Local memory lives in device memory and is cached in L1/L2 like global memory, so its sectors
compete with the kernel's real traffic and add memory latency to what should be register
accesses. NVIDIA's MemoryWorkloadAnalysis reports spilling requests; the reference threshold for
local instructions is 10% of all instructions. gemmlab reports any local traffic that reaches 1% of
the L1 global+local sectors (below that it cannot move the kernel's time), and ranks it by what the
mechanism costs: its share of L1 traffic × the L1 busy fraction, or, when warps mostly wait rather than
keep L1 busy, the memory-wait share of the CPI × its share of that traffic × the idle issue slots.
"""

from __future__ import annotations

from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import Triage
from gemmlab.analysis.rules.stalls import issue_active, stall, stall_evidence
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.LOCAL_MEMORY,)
NEEDS = {
    "local_ld_sectors": "local-memory load sectors (spills, local arrays)",
    "local_st_sectors": "local-memory store sectors",
}

LOCAL_SHARE_FLAG = 0.01  # 1% of L1 global+local sectors


def _from_rule(ctx: Context, out: Outcome, keys: list) -> None:
    """No local sector counts, but ncu's MemoryCacheAccessPattern rule quotes local loads/stores: the
    kernel has local traffic (how much is unknown, so the impact is not estimated; the latency regime's
    check in ``analysis.limits`` decides whether it explains the waits)."""
    ev = [ctx.from_rule(ctx.facts.bytes_per_sector[k], f"{k[0]}_{k[1]}_bytes_per_sector", "byte/sector", "32",
                        f"ncu quotes the access pattern of local {k[1]}s: the kernel moves local-memory traffic")
          for k in keys]
    ev += stall_evidence(ctx, ("long_scoreboard", "lg_throttle"), "waiting on local-memory accesses")
    out.findings.append(Finding(
        C.LOCAL_MEMORY, "Local memory: ncu reports local " + " and ".join(f"{k[1]}s" for k in keys)
        + " (spills or local arrays); the local sector counts that size it are not in this export.",
        Confidence.LOW, 0.0, "not estimated: no local sector counts", ev,
        ["Compile with -Xptxas -v to see spill stores/loads and the stack frame; index per-thread arrays only "
         "with compile-time constants (unrolled loops) so they stay in registers."]))


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    out = Outcome("local", CATEGORIES, evaluated=ctx.has("local_ld_sectors", "local_st_sectors"))
    for k, why in NEEDS.items():
        if ctx.v(k) is None:
            out.needs[k] = why
    if not out.evaluated:
        spill = ctx.v("local_spill_pct")
        local_rule = [k for k in ctx.facts.bytes_per_sector if k[0] == "local"]
        if local_rule:
            _from_rule(ctx, out, local_rule)
        elif spill == 0:  # ncu's spill counter says there is no register spilling (local arrays may remain)
            out.evaluated = True
            out.needs.clear()
        return out
    loc = ctx.v("local_ld_sectors") + ctx.v("local_st_sectors")
    if loc <= 0:
        return out
    total = loc + (ctx.v("gld_sectors") or 0.0) + (ctx.v("gst_sectors") or 0.0)
    share = loc / total if total > 0 else 1.0
    if share < LOCAL_SHARE_FLAG:
        return out
    busy = tri.busy("l1") or tri.busy("memory") or 1.0
    impact, basis = busy * share, f"L1 busy {pct(busy)} × local share of L1 sectors {pct(share)}"
    waits = [x for x in (stall(ctx, r) for r in ("long_scoreboard", "lg_throttle")) if x is not None]
    issue = issue_active(ctx)
    if waits and issue is not None:
        # the mechanism's own cost when no unit is busy: the cycles warps wait on the L1TEX scoreboard and
        # LSU queue, in the share local traffic has of what those waits are for, over the idle issue slots
        wait = min(1.0, sum(x.share for x in waits))
        cost = wait * share * (1.0 - issue)
        if cost > impact:
            impact = cost
            basis = (f"warps waiting on global/local memory {pct(wait)} of the CPI × local share of L1 sectors "
                     f"{pct(share)} × idle issue slots {pct(1 - issue)}")
    ev = [ctx.ev("local_ld_sectors", "0", "local loads: spilled registers or local arrays read back"),
          ctx.ev("local_st_sectors", "0", "local stores"),
          ctx.derived("local_sector_share", "local sectors / (global + local sectors)", share, "fraction",
                      f"{LOCAL_SHARE_FLAG:.0%}", "local traffic competes with the kernel's global traffic")]
    for k in ("local_ld_inst", "local_st_inst", "registers"):
        if ctx.v(k) is not None:
            ev.append(ctx.ev(k, "—", "per-thread local accesses" if k != "registers" else "registers per thread"))
    ev += stall_evidence(ctx, ("long_scoreboard", "lg_throttle"), "waiting on local-memory accesses")
    out.findings.append(Finding(
        C.LOCAL_MEMORY, f"Local memory: {pct(share)} of L1 global+local sectors are local (spills or local arrays, "
        f"{fmt(loc)} sectors).", Confidence.HIGH, impact, basis, ev,
        ["Compile with -Xptxas -v to see spill stores/loads and the stack frame; index per-thread arrays only "
         "with compile-time constants (fully unrolled loops) so they stay in registers.",
         "If registers are capped (__launch_bounds__, -maxrregcount), relax the cap or shrink per-thread tiles."]))
    return out
