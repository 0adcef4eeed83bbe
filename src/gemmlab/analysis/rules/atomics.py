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


def evaluate(ctx: Context, tri: Triage) -> Outcome:
    atom, red = ctx.v("global_atom_inst"), ctx.v("global_red_inst")
    out = Outcome("atomics", CATEGORIES, evaluated=atom is not None or red is not None)
    if not out.evaluated:
        out.needs.update(NEEDS)
        return out
    n = (atom or 0.0) + (red or 0.0)
    if n <= 0:
        return out
    stalls = [s for s in (stall(ctx, r) for r in ("lg_throttle", "drain", "long_scoreboard", "membar"))
              if s is not None and s.share > STALL_SHARE]
    if not stalls or tri.regime == "throughput" and not set(tri.hot) & {"l2"}:
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
