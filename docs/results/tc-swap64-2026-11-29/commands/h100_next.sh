#!/usr/bin/env bash
# For a session with an H100 (none was lent here), after tc-pp112's commands/h100_next.sh: this
# session's swapped-kernel rules on the H100, 8 changed shapes a dtype drawn before any ran
# (draw_h100.py: cluster residency at 31 strips, the 64-token short-row split), the rules' plan
# against 093c1e7's; then the probe's cluster counts and the GPU test that checks them.
# Copy commands/old_plans_h100.json to _dev/ first (docs/results stays behind). Score with
# commands/held_both.py commands/old_plans_h100.json R/h100_fp8.json R/h100_bf16.json.
set -u
R=$OUT/h100; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
F="40,3200,3072;60,3392,4096;60,2688,6144;42,2880,3072;56,2816,2048;53,3328,5120;59,1728,1024;63,3456,5120"
B="37,1984,1024;90,1984,7168;37,3648,3072;34,3456,2048;63,1984,10240;48,2944,1024;124,1984,2048;44,1984,6144"
for d in fp8 bf16; do
  [ $d = fp8 ] && S="$F" || S="$B"
  timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$S" --keep-plans _dev/old_plans_h100.json --rounds 3 --rep-ms 8 --json $R/h100_$d.json > $R/h100_$d.log 2>&1
  echo "$d rc $?"
done
timeout 100 python3 benchmarks/probes/max_active_clusters.py --swap --json $R/clusters.json > $R/clusters.log 2>&1; tail -1 $R/clusters.log
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap_clusters_fit" > $R/gpu_test.log 2>&1; tail -1 $R/gpu_test.log
cd $OUT && tar cJf h100.tar.xz h100 && rm -rf h100
