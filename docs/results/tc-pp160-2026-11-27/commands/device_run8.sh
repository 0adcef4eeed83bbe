#!/bin/bash
# Run 8 (H100), held out: bf16's clustered 128 x 160 where its pairs make no more rounds than the
# rules' 128 x 192 / 128 x 256 (a narrower tile in the same rounds does less per SM - the one-round
# argument of tile200_wins), at the only geometries of a fine grid where that holds besides
# 8192 x 1600 (which set it): the rules' plan beside 128x160c2 and 128x192c2 forced, two passes.
set -u
R=$OUT/r8; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
for c in 128x160c2 128x192c1 128x192c2; do
  python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 2048,2048,2048 --runs 1 --policy "{\"config\":\"$c\"}" > /dev/null 2>&1 &
done
wait; date +%T
B="6912,1920,4096;6784,1856,4096;11776,1088,4096;11520,1088,6144;7936,1600,4096;8448,1600,3072"
for pass in 1 2; do
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
    --only "128x160c2 S=1,128x192c2 S=1" --rounds 3 --rep-ms 8 --json $R/bf16_rounds_$pass.json > $R/bf16_rounds_$pass.log 2>&1
  echo "pass $pass rc $? $(date +%T)"
done
cd $OUT && tar cJf r8.tar.xz r8 && rm -rf r8
