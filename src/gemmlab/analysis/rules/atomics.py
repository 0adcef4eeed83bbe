"""Atomic contention (no NVIDIA rule): atomics/reductions that serialise on hot addresses.

Global atomics are executed in L2; many warps updating the same addresses queue there, the LSU's
queue for global operations fills (lg_throttle stalls) and warps wait for the results
(long_scoreboard) while every SOL unit stays nearly idle. gemmlab reports contention when the
kernel issues atomics or reductions and lg_throttle, drain or long_scoreboard take more than 30%
of the CPI (NVIDIA's CPIStall share) without a busy unit.
"""

from __future__ import annotations

from gemmlab.analysis.context import Context, fmt, pct
from gemmlab.analysis.evidence import Confidence, Finding
from gemmlab.analysis.rules import Outcome
from gemmlab.analysis.rules.sol import Triage
from gemmlab.analysis.rules.stalls import STALL_SHARE, issue_active, latency_impact, stall
from gemmlab.analysis.vocabulary import Category as C

CATEGORIES = (C.ATOMIC_CONTENTION,)
NEEDS = {
    "global_atom_inst": "global atomic requests",
    "global_red_inst": "global reduction requests",
}


# Atomics are a large part of the memory work when at least one global memory request in ten is an atomic
# or reduction: the same 10% line NVIDIA uses for excess wavefronts and sectors.
ATOMIC_REQUEST_SHARE = 0.10


def _without_stalls(ctx: Context, tri: Triage, out: Outcome, n: float) -> None:
    """No unit busy, atomics a large share of the memory requests, and no stall reasons to confirm that
    warps wait on them: a low-confidence finding, so the likeliest answer can name it."""
    reqs = sum(ctx.v(k) or 0.0 for k in ("gld_requests", "gst_requests")) + n
    share = n / reqs if reqs else 0.0
    if share < ATOMIC_REQUEST_SHARE:
        return
    out.needs["stall_lg_throttle"] = "stall reasons: whether warps wait on the atomics (lg_throttle, long_scoreboard)"
    headroom = tri.headroom if tri.headroom is not None else 1.0
    ev = [ctx.ev(k, "—", "atomic / reduction operations executed in L2")
          for k in ("global_atom_inst", "global_red_inst", "l2_atom_sectors", "l2_red_sectors")
          if ctx.v(k) is not None]
    ev.append(ctx.derived("atomic_request_share", "atomic+reduction requests / all global requests", share,
                          "fraction", f"{ATOMIC_REQUEST_SHARE:.0%}", "atomics that serialise in L2 while no unit is busy"))
    out.findings.append(Finding(
        C.ATOMIC_CONTENTION,
        f"Atomic contention (likely): {pct(share)} of the global memory requests are atomics or reductions "
        f"({fmt(n)}) while no unit is busy; the stall reasons that would confirm the wait are missing.",
        Confidence.LOW, headroom * share, f"busiest unit's headroom {pct(headroom)} × atomic share of requests "
        f"{pct(share)} (upper bound without stall reasons)", ev,
        ["Aggregate before the atomic: reduce within the warp (__shfl_down_sync) and block (shared memory), "
         "then issue one atomic per block.",
         "Spread hot addresses (privatised copies per block, merged at the end)."]))


def _shared(ctx: Context, tri: Triage, out: Outcome) -> None:
    """Shared-memory atomics on few addresses (a histogram into a handful of bins): each ATOMS instruction
    whose lanes hit the same address replays as several L1 data-pipe wavefronts (ideal: one). Reported when
    atomics are at least half of the shared wavefronts and at least 10% of their wavefronts are replays
    (NVIDIA's 10% line for excess shared wavefronts); impact: L1 busy × atomic share × replay share."""
    wf, inst, total = ctx.v("smem_atom_wavefronts"), ctx.v("smem_atom_inst"), ctx.v("smem_wavefronts")
    l1 = tri.busy("l1")
    if not wf or not inst or not total or l1 is None:
        return
    share, per_inst = min(1.0, wf / total), wf / inst
    replay = 1.0 - 1.0 / per_inst if per_inst > 1 else 0.0
    if share < SHARED_ATOMIC_DOMINANT or replay < SHARED_REPLAY_FLAG:
        return
    ev = [ctx.ev("smem_atom_inst", "—", "shared-memory atomic instructions"),
          ctx.ev("smem_atom_wavefronts", "one per instruction when the lanes hit distinct addresses",
                 "replays: lanes of a warp updating the same address serialise"),
          ctx.derived("smem_atom_wavefronts_per_inst", "shared atomic wavefronts / instructions", per_inst,
                      "wavefront/inst", "1 (no two lanes on one address)", "each extra wavefront is a serialised replay"),
          ctx.derived("smem_atom_share", "shared atomic wavefronts / all shared wavefronts", share, "fraction",
                      f"{SHARED_ATOMIC_DOMINANT:.0%}", "atomics are most of the shared-memory work")]
    ev += [e for e in tri.evidence if e.metric == "l1tex_pct"]
    out.findings.append(Finding(
        C.ATOMIC_CONTENTION,
        f"Atomic contention in shared memory: {pct(share)} of the shared-memory wavefronts are atomics, "
        f"{fmt(per_inst)} wavefronts per atomic instruction (lanes of a warp updating the same address serialise).",
        Confidence.HIGH, l1 * share * replay,
        f"L1/TEX busy {pct(l1)} × atomic share of shared wavefronts {pct(share)} × replayed share {pct(replay)}", ev,
        ["Aggregate within the warp first (match the values with __match_any_sync, or sort keys) so one lane "
         "updates each address, or give each warp its own copy of the bins and merge them at the end.",
         "For a library op (a histogram, bincount, index_add), pre-sort the keys or use a segmented reduction."]))


# Shared atomics are most of the shared-memory work; NVIDIA's 10% excess-wavefront line for replays.
SHARED_ATOMIC_DOMINANT = 0.5
SHARED_REPLAY_FLAG = 0.10


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    atom, red = ctx.v("global_atom_inst"), ctx.v("global_red_inst")
    out = Outcome("atomics", CATEGORIES, evaluated=atom is not None or red is not None)
    _shared(ctx, tri, out)
    if not out.evaluated:
        out.needs.update(NEEDS)
        return out
    n = (atom or 0.0) + (red or 0.0)
    if n <= 0:
        return out
    stalls = [s for s in (stall(ctx, r) for r in ("lg_throttle", "drain", "long_scoreboard", "membar"))
              if s is not None and s.share > STALL_SHARE]
    if tri.regime == "throughput" and not set(tri.hot) & {"l2"}:
        return out
    if not stalls:
        if stall(ctx, "long_scoreboard") is None and tri.regime == "latency":
            _without_stalls(ctx, tri, out, n)  # a page without stall reasons (details of a --metrics capture)
        return out
    share = sum(s.share for s in stalls)
    impact, basis = latency_impact(share, issue_active(ctx), tri.headroom)
    ev = [ctx.ev(k, "—", "atomic / reduction operations executed in L2")
          for k in ("global_atom_inst", "global_red_inst", "l2_atom_sectors", "l2_red_sectors")
          if ctx.v(k) is not None] + [s.evidence for s in stalls]
    out.findings.append(Finding(
        C.ATOMIC_CONTENTION,
        f"Atomic contention: {fmt(n)} atomic/reduction requests while warps stall "
        + ", ".join(f"{s.reason} {pct(s.share)}" for s in stalls) + " of their cycles.",
        Confidence.MEDIUM, impact, basis, ev,
        ["Aggregate before the atomic: reduce within the warp (__shfl_down_sync) and block (shared memory), "
         "then issue one atomic per block.",
         "Spread hot addresses (privatised copies per block, merged at the end)."]))
    return out
