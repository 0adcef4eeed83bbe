#!/usr/bin/env bash
# Run 5 (H200): the 64-token tile's short-row split rule (swap_short_split) held out: 8 changed
# shapes a dtype drawn before the run (draw_short_split.py), the rules' plan against 29c2091's.
# _dev/ holds a copy of old_plans_short_split.json.
set -u
R=$OUT/r5; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
F="48,4096,4096;55,2688,2048;34,3840,7168;61,4224,5120;48,3200,1024;36,2432,7168;42,3840,2048;40,1536,1024"
B="47,4096,3072;51,3968,1024;42,4096,1024;48,2688,3072;54,3968,1024;37,2304,2048;56,2176,3072;43,2176,1024"
for d in fp8 bf16; do
  [ $d = fp8 ] && S="$F" || S="$B"
  timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$S" --keep-plans _dev/old_plans_short_split.json --rounds 3 --rep-ms 8 --json $R/short_$d.json > $R/short_$d.log 2>&1
  echo "short $d rc $? $(( $(date +%s) - t0 )) s"
  cd $OUT && tar cJf r5.tar.xz r5 && cd - > /dev/null
done
rm -rf $R
