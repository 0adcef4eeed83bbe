"""samples by SASS opcode and stall reason (works without line info), local ncu_report"""
import sys, collections
from gemmlab.profile.ncu_rep import ncu_report_module
from gemmlab.profile import source_lines as S
mod = ncu_report_module()
for path in sys.argv[1:]:
    ctx = mod.load_report(path)
    a = ctx.range_by_idx(0).action_by_idx(0)
    stalls = {}
    for n in a.metric_names():
        if n.startswith(S.STALL_PREFIX) and not n.endswith(S.NOT_ISSUED):
            v = S._per_pc(mod, a, n)
            if v: stalls[n[len(S.STALL_PREFIX):]] = v
    ex = S._per_pc(mod, a, S.EXECUTED) or {}
    by = collections.Counter(); st = collections.defaultdict(collections.Counter); exe = collections.Counter()
    tot = 0
    for r, v in stalls.items():
        for pc, n in v.items():
            s = " ".join((a.sass_by_pc(pc) or "?").split())
            w = s.split()
            op = (w[1] if w[0].startswith("@") and len(w) > 1 else w[0]).split(".")[0]
            by[op] += n; st[op][r] += n; tot += n
    for pc, n in ex.items():
        s = " ".join((a.sass_by_pc(pc) or "?").split()); w = s.split()
        op = (w[1] if w[0].startswith("@") and len(w) > 1 else w[0]).split(".")[0]; exe[op] += n
    print("==", path.split("/")[-1], a.name()[:60], "samples", tot)
    for op, n in by.most_common(16):
        print("  %-10s %5.1f%% exec %8d %s" % (op, 100*n/tot, exe[op], st[op].most_common(4)))
