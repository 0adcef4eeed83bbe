import csv,sys,re
pat=re.compile(sys.argv[1])
cols=None; rows={}
for f in sys.argv[2:]:
    r=list(csv.reader(open(f)))
    hdr,units,vals=r[0],r[1],r[2]
    rows[f.split('/')[-1].split('_')[0]]=dict(zip(hdr,vals))
    units_d=dict(zip(hdr,units))
names=sorted(set().union(*[set(d) for d in rows.values()]))
for n in names:
    if pat.search(n):
        print("%-90s %s"%(n[:90], "  ".join("%s=%s"%(k,rows[k].get(n,"-")[:14]) for k in rows)))
