import json,glob,sys
order=sys.argv[1].split(","); res={}
for f in sorted(glob.glob("*_[12].json")):
    dt,v,p=f[:-5].split("_")
    for s in json.load(open(f))["shapes"]:
        sh="x".join(map(str,s["shape"]))
        for var in s["variants"]:
            lab=var["variant"]+(" ["+var.get("plan","")+"]" if var["variant"]=="dispatch" else "")
            val="ERR" if "vs_cublas" not in var else "%.1f%s"%(100*var["vs_cublas"],"" if var["ok"] else "!")
            res.setdefault((dt,sh,var["variant"]),{}).setdefault(v,[]).append(val)
for k,d in res.items():
    print("%-5s %-16s %-15s"%k, "  ".join("%s: %-12s"%(v," ".join(d.get(v,[]))) for v in order))
