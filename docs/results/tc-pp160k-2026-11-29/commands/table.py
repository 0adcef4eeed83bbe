"""Per shape: each variant's % of cuBLAS (median of per-round ratios) from compare JSONs."""
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    print("==", f, d['meta']['device'], d['meta']['dtype'])
    labs = []
    for s in d['shapes']:
        for x in s['variants']:
            if x['variant'] not in labs: labs.append(x['variant'])
    print("%-16s" % "shape" + "".join("%15s" % l[:14] for l in labs))
    for s in d['shapes']:
        v = {x['variant']: x for x in s['variants']}
        cells = []
        for l in labs:
            x = v.get(l)
            cells.append("%15s" % ("-" if x is None else ("BAD" if not x.get('ok') else "%.1f" % (100 * x['vs_cublas']))))
        disp = v['dispatch']['ran']
        print("%-16s" % "x".join(map(str, s['shape'])) + "".join(cells) + "   [" + disp + "]")
