#!/bin/bash
# Run 6 (H100): 128 x 200's C in one unswizzled 200-column box a 64-row piece (_t/c200: a box row
# reaches memory as one 400-byte run) against five 40-column boxes (_t/base, HEAD), forced
# 128x200c1 beside the rules' plan, trees alternating, two passes (order reversed in the second).
set -u
R=$OUT/r6; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="4224,1600,1600;4224,1600,4096;2048,1600,6400;8192,4800,1600;8192,1600,6400;4096,1600,5120;3072,3200,4096;2560,3400,4096;2048,3200,1600;2048,4800,1600;3072,3072,3072;2000,1560,4096;2049,1601,4096"
for t in base c200; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 2048,2048,2048 --runs 1 --policy '{"config":"128x200c1"}' > $R/warm_$t.log 2>&1 &
done
PYTHONPATH=$PWD/_t/base/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 --runs 1 > $R/warm_rules.log 2>&1 &
wait; date +%T
for pass in 1 2; do
  order="base c200"; [ $pass = 2 ] && order="c200 base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$S" \
      --only "128x200c1 S=1" --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    echo "$t pass $pass rc $? $(date +%T)"
  done
done
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
