#!/bin/bash
# Run 5 (H100): (1) is 128x200c1's one-round rule worth extending to two rounds? 128x200c1 vs
# 128x160c1 / 128x256c1 / ping-pong at held-out shapes where 200's and 256's tiles both make two
# rounds (2048x3200 at K = 1600 and 4096, 3072x1600x4096, 4096x1600x8192, 2560x2400x4096), two
# processes; (2) the fp8 shape map of this tree (the three fp8 rules).
set -u
R=$OUT/r5; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="2048,3200,1600;2048,3200,4096;3072,1600,4096;4096,1600,8192;2560,2400,4096"
date
for c in 128x200c1 128x160c1 128x256c1 128x128pp; do
  python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > $R/warm_$c.log 2>&1 &
done
wait; date
for pass in 1 2; do
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" \
    --only "128x200c1 S=1,128x160c1 S=1,128x256c1 S=1,128x128pp S=1" --rounds 3 --rep-ms 8 \
    --json $R/fp8_two_rounds_$pass.json > $R/fp8_two_rounds_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
  cd $OUT && tar cJf r5.tar.xz r5; cd - > /dev/null
done
SHAPES_TIMEOUT=300 bash benchmarks/run_shapes_tc_device.sh $R/maps fp8 2>&1 | grep -E "geometric|meet|exit"
cd $R/maps && xz -9 *.json shapes.sqlite; cd - > /dev/null
cd $OUT && rm -f r5.tar.xz && tar cJf r5.tar.xz r5 && rm -rf r5
