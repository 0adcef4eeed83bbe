#!/bin/bash
# Run 10 (H100): operands whose rows are a 16-byte pitch but not whole 128-byte lines (bf16 N or K
# not a multiple of 64, fp8 K not a multiple of 128) - run 9 read bf16 2000 x 1560 x 4096 at 64%
# of cuBLAS where 2048 x 1600 x 6400 reads 100. _t/pad128 copies such an operand to a pitch of
# whole 128-byte lines inside the call (the repitch the 16-byte case uses); _t/base is HEAD. The
# rules' plans only (--quick), trees alternating, two passes.
set -u
R=$OUT/r10; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
B="2000,1560,4096;2048,1560,4096;4096,3000,4096;1000,1000,1000;8192,1000,4096;2048,4096,1000;2048,2048,2048"
F="2000,1560,4096;1000,1000,1000;2048,4096,1000;4096,4096,1560;8192,1600,3000;2048,2048,2048"
for t in base pad128; do for s in 2000,1560,4096 1000,1000,1000 2048,4096,1000; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype bf16 --shape $s --runs 1 > /dev/null 2>&1 &
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 1 > /dev/null 2>&1 &
done; done
wait; date +%T
for pass in 1 2; do
  order="base pad128"; [ $pass = 2 ] && order="pad128 base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
      --quick --rounds 3 --rep-ms 8 --json $R/bf16_${t}_$pass.json > $R/bf16_${t}_$pass.log 2>&1
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
      --quick --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    echo "$t pass $pass rc $? $(date +%T)"
  done
done
cd $OUT && tar cJf r10.tar.xz r10 && rm -rf r10
