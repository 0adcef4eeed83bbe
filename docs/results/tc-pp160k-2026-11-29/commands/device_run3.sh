#!/usr/bin/env bash
# Run 3 (H200): the held-out shapes (_dev/held_out_pp160.txt, never used to set the rule) on the
# tree with pingpong_short_k: the rules' plan against the earlier rules' plan (forced) and the
# ping-pong tile (forced where the rule kept the cooperative one), interleaved rounds.
set -u
R=$OUT/r3; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src GEMMLAB_CACHE_DIR=/tmp/glc_new
H=$(grep -v '^#' _dev/held_out_pp160.txt | paste -sd';')
t0=$(date +%s)
( for c in 128x160pp 128x160c1 128x256c1 128x256c2; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm_fp8.log 2>&1 &
( for c in 128x128pp 128x192c1 128x256c2 128x256c1; do python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 8192,4800,1600 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm_bf16.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
for d in fp8 bf16; do
  timeout 250 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$H" --keep-plans _dev/old_plans.json \
    --rounds 2 --rep-ms 8 --json $R/held_$d.json > $R/held_$d.log 2>&1
  echo "$d rc $? $(( $(date +%s) - t0 )) s"
  cd $OUT && rm -f r3.tar.xz && tar cJf r3.tar.xz r3 && cd - > /dev/null
done
cd $OUT && rm -f r3.tar.xz && tar cJf r3.tar.xz r3 && rm -rf r3
