#!/bin/bash
# Run 12 (H100): copies padded to whole 128-byte lines, and B copied to whole lines where its rows
# are a 16-byte pitch but not whole lines (>= 16 row tiles, K >= 1024) - _t/lines (the working
# tree) against _t/base (HEAD): the grid shapes whose plans it changes (fp8 K = 1600; the +1
# neighbours, already copied) and shapes held out of runs 10-11. Rules' plans, trees alternating.
set -u
R=$OUT/r12; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
F="8192,4800,1600;2048,4800,1600;4097,4097,4097;2049,2049,2049;1025,1025,1025;4096,4096,2064;2048,8192,1040"
B="4097,4097,4097;2049,2049,2049;1025,1025,1025;3072,1000,2048;2560,3000,4096;6144,1560,2048;16384,1000,1024;1024,3000,4096"
for t in base lines; do
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 8192,4800,1600 --runs 1 > /dev/null 2>&1 &
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 4097,4097,4097 --runs 1 > /dev/null 2>&1 &
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype fp8 --shape 1025,1025,1025 --runs 1 > /dev/null 2>&1 &
  PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype bf16 --shape 1025,1025,1025 --runs 1 > /dev/null 2>&1 &
done
wait; date +%T
for pass in 1 2; do
  order="base lines"; [ $pass = 2 ] && order="lines base"
  for t in $order; do
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 70 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$F" \
      --quick --rounds 3 --rep-ms 8 --json $R/fp8_${t}_$pass.json > $R/fp8_${t}_$pass.log 2>&1
    PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 70 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$B" \
      --quick --rounds 3 --rep-ms 8 --json $R/bf16_${t}_$pass.json > $R/bf16_${t}_$pass.log 2>&1
    echo "$t pass $pass rc $? $(date +%T)"
    cd $OUT && tar cJf r12.tar.xz r12; cd - > /dev/null
  done
done
cd $OUT && rm -f r12.tar.xz && tar cJf r12.tar.xz r12 && rm -rf r12
