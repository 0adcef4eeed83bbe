import json,glob,sys
res={}
order=sys.argv[1].split(",")
for f in sorted(glob.glob("*_[12].json")):
    dt,v,p=f[:-5].split("_")
    d=json.load(open(f))
    for s in d["shapes"]:
        key=(dt,"x".join(map(str,s.get("shape") or [s.get("M"),s.get("N"),s.get("K")])))
        for var in s["variants"]:
            if "vs_cublas" not in var: res.setdefault(key,{}).setdefault(v,[]).append("ERR"); continue
            res.setdefault(key,{}).setdefault(v,[]).append("%.1f%s"%(100*var["vs_cublas"], "" if var["ok"] else "!"))
for k,d in res.items():
    print("%-5s %-16s"%k, "  ".join("%s: %-12s"%(v," ".join(d.get(v,[]))) for v in order))
