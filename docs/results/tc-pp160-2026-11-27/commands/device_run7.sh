#!/bin/bash
# Run 7 (H200): the fp8 128 x 160 rule (TILE160_MARGIN 5% over 128 x 256's fraction whatever N)
# on the other GPU - the ten held-out shapes of runs 4-5 where it changed the plan; _t/base
# (HEAD) against _t/new, the rules' plans only, trees alternating, two passes.
set -u
R=$OUT/r7; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
F="2048,9280,4096;3072,5440,4096;12288,2240,2048;4096,3840,4096;8192,1920,4096;2048,7040,4096;4096,7680,3072;7168,3520,3072;4096,5760,3072;4096,3840,2048"
for t in base new; do for c in 128x160c1 128x256c1 128x128pp; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > /dev/null 2>&1 &
done; done
wait; date +%T
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 110 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
      --quick --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    echo "pass $pass $t $(date +%T)"
  done
done
cd $OUT && tar cJf r7.tar.xz r7 && rm -rf r7
