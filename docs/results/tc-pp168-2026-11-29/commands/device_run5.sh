#!/usr/bin/env bash
# Run 5 (H200): held-out shapes for fp8's short-K ping-pong at the widths 160/168/176 (a random 14,
# seed 20, of the 654 shapes on a 1024 x 512 grid, K 2048/4096/6144, where the plan changes - drawn
# before they ran); then the grid's four changed shapes. The rules' plan against the cooperative
# 128 x 256 tiles (the earlier plans), interleaved rounds.
set -u
R=$OUT/r5; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src
t0=$(date +%s)
( for c in 128x176pp 128x168pp; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm1.log 2>&1 &
( for c in 128x160pp 128x256c2 128x256c1; do python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2816,4096 --runs 1 --policy "{\"config\":\"$c\"}"; done ) > $R/warm2.log 2>&1 &
wait; echo "warm $(( $(date +%s) - t0 )) s"
H="2048,14336,6144;3072,15872,6144;4096,11264,6144;4096,11776,4096;5120,4096,2048;5120,12288,6144;6144,6656,6144;8192,9728,6144;9216,9216,6144;9216,11776,6144;11264,8192,6144;11264,9728,4096;15360,8192,4096;16384,15872,6144"
timeout 300 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$H" \
  --only "128x256c1 S=1,128x256c2 S=1" --rounds 2 --rep-ms 8 --json $R/held_shortk.json > $R/held_shortk.log 2>&1
echo "held rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && tar cJf r5a.tar.xz r5 && cd - > /dev/null
G="8192,6144,4096;2048,28672,4096;8192,28672,4096;8192,11008,4096"
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$G" \
  --only "128x256c2 S=1,128x160pp S=1,128x168pp S=1,128x176pp S=1" --rounds 2 --rep-ms 8 --json $R/grid.json > $R/grid.log 2>&1
echo "grid rc $? $(( $(date +%s) - t0 )) s"
cd $OUT && rm -f r5a.tar.xz && tar cJf r5.tar.xz r5 && rm -rf r5
