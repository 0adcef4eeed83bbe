#!/usr/bin/env bash
# Run 6 (H200): where 160 divides N, the short-K pick takes a wider width past PINGPONG_WIDTH_MARGIN
# (no new constant). A random 16 of the 4243 changed shapes (draw_held_out_r6.py, seed 160; drawn
# before they ran): the rules plan against the earlier rules plan (old_plans_r6.json).
set -u
R=$OUT/r6; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
S=2048,1792,4096
( for c in 128x112pp 128x160pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x144pp 128x256c2; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x168pp 128x176pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm3.log 2>&1 &
( for c in 128x256c1 128x200c1 128x160c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm4.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
H="1792,11520,4096;8960,3360,8192;4608,5440,6144;5376,8800,8192;2048,8480,2048;4864,3360,16384;8192,5760,4096;2560,4320,16384;6400,4800,2048;768,18400,4096;1024,17280,6144;3584,10080,16384;1536,8960,4096;4352,4000,8192;11776,3520,4096;2816,16480,2048"
timeout 420 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$H" \
  --keep-plans _dev/cmd/old_plans_r6.json --rounds 2 --rep-ms 8 --json $R/held_r6.json > $R/held_r6.log 2>&1
echo "held rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
