"""Run 7: the two trees' rules' plans, alternating processes (old_1, new_1, new_2, old_2), % of
cuBLAS at its best per process. Usage (repository root):
python3 docs/results/tc-pp168-2026-11-29/commands/ab_r7.py docs/results/tc-pp168-2026-11-29/r7"""
import json
import statistics as st
import sys

R = sys.argv[1]
for dt in ("fp8", "bf16"):
    runs = {t: json.load(open(f"{R}/{dt}_{t}.json")) for t in ("old_1", "new_1", "new_2", "old_2")}
    print("==", dt, runs["old_1"]["meta"]["device"], runs["old_1"]["meta"]["date"])
    gains = []
    for i, s in enumerate(runs["old_1"]["shapes"]):
        v = {t: next(x for x in runs[t]["shapes"][i]["variants"] if x["variant"] == "dispatch") for t in runs}
        old = [100 * v[t]["vs_cublas"] for t in ("old_1", "old_2")]
        new = [100 * v[t]["vs_cublas"] for t in ("new_1", "new_2")]
        gains.append(st.mean(new) - st.mean(old))
        print("%-14s %-16s old %5.1f / %5.1f  new %5.1f / %5.1f  %+5.1f  correct=%s" % (
            "x".join(map(str, s["shape"])), v["new_1"]["ran"], *old, *new, gains[-1],
            all(x.get("ok") for x in v.values())))
    print("mean %+.2f points, new ahead at %d of %d\n" % (st.mean(gains), sum(g > 0 for g in gains), len(gains)))
