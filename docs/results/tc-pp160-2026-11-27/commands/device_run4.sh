#!/bin/bash
# Run 4 (H100), held out (none of these shapes set a rule): _t/base (HEAD) against _t/new (fp8's
# 128 x 160 only past TILE160_MARGIN whatever N; bf16's clustered 128 x 160 past
# BF16_TILE160_MARGIN) - the rules' plans only, trees alternating, two passes; then the
# candidate tiles forced once (the best of them beside the rules).
set -u
R=$OUT/r4; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
F="2048,9280,4096;5120,4800,2048;8192,3520,4096;3072,5440,4096;12288,2240,2048;4096,3840,4096;8192,1920,4096;2048,7040,4096;6144,3840,2048;3072,5120,8192"
B="13312,1600,4096;3072,3520,4096;11264,960,4096;11776,1600,4096;6656,1600,4096"
for t in base new; do for c in 128x160c1 128x256c1 128x128pp; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > /dev/null 2>&1 &
done; for c in 128x160c2 128x192c1 128x256c1 128x128pp 128x256c2; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > /dev/null 2>&1 &
done; done
wait; date +%T
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
      --quick --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
      --quick --rounds 3 --rep-ms 8 --json $R/bf16_${t}_$pass.json > $R/bf16_${t}_$pass.log 2>&1
    echo "pass $pass $t $(date +%T)"
  done
done
PYTHONPATH=$PWD/_t/new/src:$PWD/tests timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
  --only "128x160c1 S=1,128x256c1 S=1,128x128pp S=1" --rounds 3 --rep-ms 8 --json $R/fp8_forced.json > $R/fp8_forced.log 2>&1
PYTHONPATH=$PWD/_t/new/src:$PWD/tests timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
  --only "128x160c2 S=1,128x192c1 S=1,128x256c1 S=1,128x256c2 S=1" --rounds 3 --rep-ms 8 --json $R/bf16_forced.json > $R/bf16_forced.log 2>&1
echo "forced $(date +%T)"
cd $OUT && tar cJf r4.tar.xz r4 && rm -rf r4
