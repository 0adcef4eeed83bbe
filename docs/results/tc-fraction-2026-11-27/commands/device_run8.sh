#!/bin/bash
# Run 8 (H100), the working tree (6fde3a4: the rule, 128 x 200's C in one box): the 16 held-out
# shapes of runs 1-3 again, two processes (order reversed in the second) - the score with the
# faster 128 x 200.
set -u
R=$OUT/r8; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
ONLY="128x200c1 S=1,128x160c1 S=1,128x256c1 S=1,128x128pp S=1"
S="3072,3072,3072;2560,4096,4096;2816,2816,5120;2048,3840,4096;4096,1280,6144;2500,3000,4096;3584,1600,4096;1792,4096,8192;3072,3200,4096;2560,3400,4096;2048,4000,4096;4096,1600,5120;2048,2400,8192;4096,2048,4096;2048,6144,2048;2048,2800,5120"
SR=$(echo "$S" | tr ';' '\n' | tac | paste -sd';')
for c in 128x200c1 128x160c1 128x256c1 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date +%T
for pass in 1 2; do
  SS="$S"; [ $pass = 2 ] && SS="$SR"
  timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$SS" \
    --only "$ONLY" --rounds 3 --rep-ms 8 --json $R/fp8_heldout_c200_$pass.json > $R/fp8_heldout_c200_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
done
cd $OUT && tar cJf r8.tar.xz r8 && rm -rf r8
