import json,sys,collections,glob
# usage: tab.py file1.json file2.json ... ; prints per shape x variant the vs_cublas % per file
rows=collections.OrderedDict()
for f in sys.argv[1:]:
    d=json.load(open(f))
    for s in d['shapes']:
        key="x".join(map(str,s['shape']))
        r=rows.setdefault(key,collections.OrderedDict())
        for v in s['variants']:
            nm=v['variant'] if v['variant']!='dispatch' else 'dispatch('+v['ran']+')'
            r.setdefault(nm,[]).append("%.1f"%(100*v['vs_cublas']) + ("" if v['ok'] else "!BAD"))
for k,r in rows.items():
    print(k); 
    for n,x in r.items(): print("   %-28s %s"%(n," ".join(x)))
