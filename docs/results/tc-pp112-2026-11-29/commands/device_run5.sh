#!/usr/bin/env bash
# Run 5 (H200): held-out shapes for LONG_K_MARGIN (draw_held_out_r5.py, seed 64: a random 18 of
# the 1652 long-K shapes where the plan changes; drawn before they ran, never used to set the
# rule): the rules' plan against the earlier rules' plan (old_plans_r5.json), interleaved rounds;
# then 8192 x 4800 x 8192 (the grid's 8192 x 4800 family at a long K; not counted).
set -u
R=$OUT/r5; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
S=2048,1792,4096
( for c in 128x112pp 128x160pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x144pp 128x256c2; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
( for c in 128x168pp 128x176pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm3.log 2>&1 &
( for c in 128x256c1 128x200c1 128x160c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $S --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm4.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
H="3840,3840,12288;1536,20224,8192;5376,2048,8192;512,23040,12288;3072,8704,8192;4608,5888,8192;6400,1024,16384;1024,15616,28672;1792,3840,28672;2304,12032,28672;6656,3584,16384;8192,3328,28672;5376,4864,12288;8192,3328,12288;768,12032,16384;1792,26880,28672;6400,9472,16384;768,15616,16384"
timeout 420 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$H" \
  --keep-plans _dev/cmd/old_plans_r5.json --rounds 2 --rep-ms 8 --json $R/held_longk.json > $R/held_longk.log 2>&1
echo "held rc $? $(( $(date +%s) - t0 )) s"
timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "8192,4800,8192" \
  --only "128x256c2 S=1,128x256c1 S=1" --rounds 2 --rep-ms 8 --json $R/extra.json > $R/extra.log 2>&1
echo "extra rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5
