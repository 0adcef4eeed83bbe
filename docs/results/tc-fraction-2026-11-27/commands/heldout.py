"""Held-out score: per shape, the new rules' pick ("dispatch"), the old rules' pick and the best
forced tile, % of cuBLAS (mean over the JSON files given).

    OLD_SRC=/tmp/old/src python3 heldout.py run1/fp8_heldout_1.json run2/fp8_heldout_2.json

OLD_SRC: a tree before the rule (git archive cf7034f src/gemmlab | tar -x -C /tmp/old)."""
import json, sys, collections, math, subprocess, os
files = sys.argv[1:]
meas = collections.defaultdict(lambda: collections.defaultdict(list))
newpick = {}
for f in files:
    for s in json.load(open(f))['shapes']:
        key = tuple(s['shape'])
        for v in s['variants']:
            if not v.get('ok'): continue
            if v['variant'] == 'dispatch':
                newpick[key] = v['ran']
            meas[key][v['ran']].append(v['vs_cublas'] * 100)
def old(M, N, K):
    out = subprocess.run([sys.executable, '-c', f"from gemmlab.runtime import dispatch_tc as d; print(d.plan('fp8',{M},{N},{K},132).config)"],
                         env={'PYTHONPATH': os.environ['OLD_SRC']}, capture_output=True, text=True).stdout.strip()
    return out
gn = go = gb = 0.0; n = 0; hits = 0
print(f"{'shape':>16} {'new':>10} {'%':>6} {'old':>10} {'%':>6} {'best':>10} {'%':>6}")
for key in meas:
    m = {c: sum(v) / len(v) for c, v in meas[key].items()}
    o = old(*key); nw = newpick[key]
    best = max(m, key=m.get)
    n += 1; gn += math.log(m[nw]); go += math.log(m[o]); gb += math.log(m[best])
    hits += m[nw] >= m[best] - 1.0
    print(f"{'x'.join(map(str,key)):>16} {nw:>10} {m[nw]:6.1f} {o:>10} {m[o]:6.1f} {best:>10} {m[best]:6.1f}")
print(f"geomean new {math.exp(gn/n):.1f} old {math.exp(go/n):.1f} best {math.exp(gb/n):.1f}; new within 1 point of best at {hits}/{n}")
