#!/bin/bash
# Run 14 (H200): the whole-line copies (_t/lines = HEAD) against the tree before them (_t/base =
# 6fde3a4) at run 12's bf16 shapes: do the H100's constants hold on the H200? Rules' plans,
# trees alternating, two passes.
set -u
R=$OUT/r14; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
B="4097,4097,4097;2049,2049,2049;16384,1000,1024;2560,3000,4096;6144,1560,2048;3072,1000,2048;8192,1000,4096;1024,3000,4096"
for t in base lines; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 4097,4097,4097 --runs 1 > /dev/null 2>&1 &
done
wait; date +%T
for pass in 1 2; do
  order="base lines"; [ $pass = 2 ] && order="lines base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 70 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
      --quick --rounds 3 --rep-ms 8 --json $R/bf16_${t}_$pass.json > $R/bf16_${t}_$pass.log 2>&1
    echo "$t pass $pass rc $? $(date +%T)"
  done
done
cd $OUT && tar cJf r14.tar.xz r14 && rm -rf r14
