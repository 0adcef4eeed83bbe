#!/bin/bash
# Run 3 (H100): (a) fp8, held out: shapes where tile160_wins picks 128 x 160 for N a multiple of
# 160 that 128 does not divide although its issued fraction is not TILE160_MARGIN better than
# 128 x 256's (run 1: 4096x4800x1600 and 8192x3200x1600 lost 2-8 points that way) - the rules'
# plan beside 128 x 256 in clusters of 1 and 2. (b) bf16's 128 x 160 in clusters of 2 (run 2:
# 8192x1600x6400 96.8 / 96.0 against the rules' 128x192c1 93.0 / 92.6) at shapes where its
# issued fraction beats the rules' tile, K long and short. Two passes each.
set -u
R=$OUT/r3; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
date +%T
for c in 128x160c1 128x256c1 128x256c2; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > /dev/null 2>&1 &
done
for c in 128x160c2 128x192c2 128x192c1 128x256c2 128x256c1 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > /dev/null 2>&1 &
done
wait; date +%T
F="2048,8000,4096;3072,4800,2048;3072,8000,4096;6144,4800,4096;2048,14400,2048;4096,8000,1600;2048,11200,4096;6144,4800,1600"
B="8192,1600,4096;8192,1600,8192;4096,3200,4096;4096,3200,8192;8192,3200,4096;16384,1600,4096;8192,1600,2048;4096,1600,6400"
for pass in 1 2; do
  timeout 140 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
    --only "128x256c1 S=1,128x256c2 S=1,128x160c1 S=1" --rounds 3 --rep-ms 8 \
    --json $R/fp8_t160_$pass.json > $R/fp8_t160_$pass.log 2>&1
  echo "fp8 pass $pass rc $? $(date +%T)"
  timeout 140 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
    --only "128x160c2 S=1,128x192c2 S=1,128x256c2 S=1" --rounds 3 --rep-ms 8 \
    --json $R/bf16_c2_$pass.json > $R/bf16_c2_$pass.log 2>&1
  echo "bf16 pass $pass rc $? $(date +%T)"
done
cd $OUT && tar cJf r3.tar.xz r3 && rm -rf r3
