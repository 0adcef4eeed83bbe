"""Executed warp instructions per SASS opcode (ncu's sass__inst_executed_per_opcode instances) of the
first launch of each .ncu-rep, side by side. Runs on the CPU: gemmlab's ncu_report module (the
PyPI ncu-report package here). usage: python opcode_mix.py A.ncu-rep B.ncu-rep ..."""
import sys
from gemmlab.profile.ncu_rep import ncu_report_module
m = ncu_report_module()
res = {}
names = sys.argv[1:]
for p in names:
    a = m.load_report(p).range_by_idx(0).action_by_idx(0)
    met = a.metric_by_name("sass__inst_executed_per_opcode")
    c = met.correlation_ids()
    res[p] = {c.as_string(i): met.as_uint64(i) for i in range(met.num_instances())}
ops = sorted(set().union(*res.values()), key=lambda o: -max(r.get(o, 0) for r in res.values()))
short = [p.split('/')[-1].split('_')[0] for p in names]
print("%-14s" % "opcode" + "".join("%12s" % s for s in short))
print("%-14s" % "total" + "".join("%12d" % sum(res[p].values()) for p in names))
for o in ops:
    print("%-14s" % o + "".join("%12d" % res[p].get(o, 0) for p in names))
