#!/bin/bash
# Run 11 (H100): which operand's 128-byte lines matter? _t/padB copies only B to whole 128-byte
# lines (A keeps the 16-byte rule), against _t/pad128 (both) and _t/base (HEAD); rules' plans
# only, trees alternating, two passes.
set -u
R=$OUT/r11; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
B="4096,3000,4096;8192,1000,4096;1000,1000,1000;2048,4096,1000;4096,4800,1000"
F="2048,4096,1000;8192,1600,3000;4096,4096,1560;1000,1000,1000;4096,4096,4104"
for t in base pad128 padB; do for s in 2048,4096,1000 1000,1000,1000; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype bf16 --shape $s --runs 1 > /dev/null 2>&1 &
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape $s --runs 1 > /dev/null 2>&1 &
done; done
wait; date +%T
for pass in 1 2; do
  order="base pad128 padB"; [ $pass = 2 ] && order="padB pad128 base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 80 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
      --quick --rounds 3 --rep-ms 8 --json $R/bf16_${t}_$pass.json > $R/bf16_${t}_$pass.log 2>&1
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 80 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
      --quick --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    echo "$t pass $pass rc $? $(date +%T)"
  done
done
cd $OUT && tar cJf r11.tar.xz r11 && rm -rf r11
