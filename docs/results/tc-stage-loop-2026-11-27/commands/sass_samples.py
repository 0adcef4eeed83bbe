"""every SASS instruction with executed count and samples, in PC order (local)"""
import sys
from gemmlab.profile.ncu_rep import ncu_report_module
from gemmlab.profile import source_lines as S
mod = ncu_report_module()
ctx = mod.load_report(sys.argv[1]); a = ctx.range_by_idx(0).action_by_idx(0)
samp = {}
for n in a.metric_names():
    if n.startswith(S.STALL_PREFIX) and not n.endswith(S.NOT_ISSUED):
        for pc, v in (S._per_pc(mod, a, n) or {}).items(): samp[pc] = samp.get(pc, 0) + v
ex = S._per_pc(mod, a, S.EXECUTED) or {}
for pc in sorted(set(ex) | set(samp)):
    print("%6x %9d %5d  %s" % (pc, ex.get(pc, 0), samp.get(pc, 0), " ".join((a.sass_by_pc(pc) or "?").split())))
