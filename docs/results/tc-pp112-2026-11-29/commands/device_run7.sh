#!/usr/bin/env bash
# Run 7 (H200): run 6's rule with the narrow width tried where the wide pick falls short (made
# after run 6). A fresh random 16 of the 4273 shapes changed against a87cc89, run 6's excluded
# (draw_held_out_r7.py, seed 7; drawn before they ran): the rules plan against a87cc89's.
set -u
R=$OUT/r7; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
S=2048,1792,4096
( for c in 128x112pp 128x160pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x144pp 128x256c2; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x168pp 128x176pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm3.log 2>&1 &
( for c in 128x256c1 128x200c1 128x160c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm4.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
H="4096,6080,4096;1792,9120,6144;5376,2560,4096;11776,3360,8192;1280,21440,16384;1536,13280,4096;5120,2720,8192;1280,11200,2048;8960,3360,4096;2560,27680,6144;10752,3840,6144;1280,8960,8192;6400,7360,2048;5888,7040,2048;1280,18400,6144;2816,8000,4096"
timeout 420 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$H" \
  --keep-plans _dev/cmd/old_plans_r7.json --rounds 2 --rep-ms 8 --json $R/held_r7.json > $R/held_r7.log 2>&1
echo "held rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r7.tar.xz r7 && rm -rf r7
