#!/bin/bash
# Run 5 (H100): the refined fp8 128 x 160 rule (weighed against the tile the rules would run
# without it - the ping-pong 128 x 128 included - not against 128 x 256 alone), held out: 12
# shapes drawn at random (seed 20261127) from the 284 of a grid where it and HEAD's rule differ,
# none measured before. _t/base (HEAD) against _t/new, the rules' plans only, trees alternating,
# two passes; then the three tiles forced once. Also the ping-pong tile at the two run-3 shapes
# where the refined rule moves from 128 x 160 to it.
set -u
R=$OUT/r5; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
F="2048,8960,4096;4096,7680,3072;5120,4480,4096;15360,1600,3072;3072,6080,6144;5120,3520,3072;7168,3520,3072;4096,5760,3072;4096,8000,3072;3072,7040,4096;10240,1600,3072;4096,3840,2048"
for t in base new; do for c in 128x160c1 128x256c1 128x128pp; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > /dev/null 2>&1 &
done; done
wait; date +%T
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
      --quick --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    echo "pass $pass $t $(date +%T)"
  done
done
PYTHONPATH=$PWD/_t/new/src:$PWD/tests timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F;3072,4800,2048;2048,11200,4096" \
  --only "128x160c1 S=1,128x256c1 S=1,128x128pp S=1" --rounds 3 --rep-ms 8 --json $R/fp8_forced.json > $R/fp8_forced.log 2>&1
echo "forced $(date +%T)"
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5
