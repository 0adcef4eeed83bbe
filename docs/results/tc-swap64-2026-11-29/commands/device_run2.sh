#!/usr/bin/env bash
# Run 2 (H200): (a) the clusters of each split swapped kernel that fit at once
# (benchmarks/probes/max_active_clusters.py --swap) against cluster_slots; (b) tuning for the
# swapped kernel's cluster residency and 64-token splits past the SMs (keep_run2.py's four
# questions: keep_run2.json); (c) fp8's 128 x 128 ping-pong among the short-K widths, held out:
# 10 changed shapes drawn before the run (draw_pp128.py), the rules' plan against 093c1e7's.
# _dev/ holds copies of keep_run2.json and old_plans_pp128.json.
set -u
R=$OUT/r2; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
pack() { cd $OUT && tar cJf r2.tar.xz r2 && cd - > /dev/null; }
Q="40,4480,4096;40,4480,8192;40,4480,14336;40,5120,4096;40,5120,8192;40,5120,14336;40,5632,4096;40,5632,8192;40,5632,14336;64,4480,4096;64,4480,8192;64,4480,14336;64,5120,4096;64,5120,8192;64,5120,14336;64,5632,4096;64,5632,8192;64,5632,14336;40,1024,4096;40,1024,8192;40,1024,14336;40,1280,4096;40,1280,8192;40,1280,14336;64,1024,4096;64,1024,8192;64,1024,14336;64,1280,4096;64,1280,8192;64,1280,14336;40,2048,4096;40,2048,8192;40,2048,14336;64,2048,4096;64,2048,8192;64,2048,14336;96,1792,6144;96,1792,15360;96,2048,6144;96,2048,15360;128,1792,6144;128,1792,15360;128,2048,6144;128,2048,15360"
PP="8192,8704,7168;3840,17152,2048;5120,7424,4096;5888,4608,3072;4864,2560,5120;2816,19456,1024;5888,11264,2048;1536,17664,5120;3072,12544,5120;4608,13056,5120"
timeout 100 python3 benchmarks/probes/max_active_clusters.py --swap --json $R/clusters.json > $R/clusters.log 2>&1
echo "probe rc $? $(( $(date +%s) - t0 )) s"; tail -1 $R/clusters.log; pack
for d in fp8 bf16; do
  timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$Q" --keep-plans _dev/keep_run2.json --rounds 2 --rep-ms 8 --json $R/q_$d.json > $R/q_$d.log 2>&1
  echo "q $d rc $? $(( $(date +%s) - t0 )) s"; pack
done
timeout 110 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$PP" --keep-plans _dev/old_plans_pp128.json --rounds 2 --rep-ms 8 --json $R/pp128_held.json > $R/pp128_held.log 2>&1
echo "pp128 held rc $? $(( $(date +%s) - t0 )) s"; pack
rm -rf $R
