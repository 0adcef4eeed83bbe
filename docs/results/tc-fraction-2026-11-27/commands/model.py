"""A calibrated alternative to the best-fraction rule, checked offline (not kept): each tile's time
per round at K = 1600 / 4096 / 8192 from run 2's exact shapes (264 tiles of each, no column
wasted), interpolated in K; predicted time = rounds x that; the pick the least. Prints it beside
the rule's pick and the best measured, for the JSON files given (run from the results dir, with
PYTHONPATH=src of the repository)."""
import json, sys, collections, math
from gemmlab.runtime import dispatch_tc as d
# per tile-round time at K from the exact shapes (264 tiles = 2 rounds)
cal = collections.defaultdict(dict)
for c in ["128x256c1", "128x200c1", "128x160c1", "128x128pp"]:
    for s in json.load(open(f'run2/fp8_exact_{c}.json'))['shapes']:
        for v in s['variants']:
            if v['ran'] == c: cal[c][s['shape'][2]] = v['median_s'] * 1e6 / 2
def t_round(c, K):
    ks = sorted(cal[c])
    if K <= ks[1]: a, b = ks[0], ks[1]
    else: a, b = ks[1], ks[2]
    return cal[c][a] + (cal[c][b] - cal[c][a]) * (K - a) / (b - a)
C = ["128x256c1", "128x200c1", "128x160c1", "128x128pp"]
def model_pick(M, N, K):
    return min(C, key=lambda c: -(-d.tiles(M, N, c) // 132) * t_round(c, K))
meas = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sys.argv[1:]:
    for s in json.load(open(f))['shapes']:
        for v in s['variants']:
            if v.get('ok') and v['ran'] in C: meas[tuple(s['shape'])][v['ran']].append(v['vs_cublas'] * 100)
gm = gf = gb = 0; n = hm = hf = 0
for key in meas:
    M, N, K = key
    r = -(-d.tiles(M, N, "128x256c1") // 132)
    if not 2 <= r <= 3: continue
    m = {c: sum(v) / len(v) for c, v in meas[key].items()}
    if len(m) < 4: continue
    mp = model_pick(M, N, K); fp = d.fraction_tile('fp8', M, N, K, 132); b = max(m, key=m.get)
    n += 1; gm += math.log(m[mp]); gf += math.log(m[fp]); gb += math.log(m[b])
    hm += m[mp] >= m[b] - 1; hf += m[fp] >= m[b] - 1
    print(f"{'x'.join(map(str,key)):>16} model {mp:>10} {m[mp]:6.1f} frac {fp:>10} {m[fp]:6.1f} best {b:>10} {m[b]:6.1f}")
print(f"n={n} model {math.exp(gm/n):.1f} ({hm}) frac {math.exp(gf/n):.1f} ({hf}) best {math.exp(gb/n):.1f}")
