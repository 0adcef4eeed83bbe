#!/bin/bash
# Run 4 (H200, then H100): bf16 at the grid's N = 1600 / 4800 shapes, the rules' plan against
# every 128-row tile forced - is ping-pong's better issued fraction (8192x1600x6400: 0.87 vs
# 128 x 192's 0.81; 8192x4800x1600: 0.96 vs 0.93) worth its dearer columns? Two processes.
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
ONLY="128x128pp S=1,128x192c1 S=1,128x192c2 S=1,128x256c1 S=1,128x256c2 S=1,128x128c1 S=1"
S="8192,1600,6400;8192,4800,1600;2048,4800,1600"
SR="2048,4800,1600;8192,4800,1600;8192,1600,6400"
for c in 128x128pp 128x192c1 128x192c2 128x256c1 128x256c2 128x128c1; do
  python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date +%T
for pass in 1 2; do
  SS="$S"; [ $pass = 2 ] && SS="$SR"
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$SS" \
    --only "$ONLY" --rounds 3 --rep-ms 8 --json $R/bf16_n1600_$pass.json > $R/bf16_n1600_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
done
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
