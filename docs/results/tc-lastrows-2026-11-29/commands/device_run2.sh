#!/bin/bash
# Run 2 (H200): A's last row-tile boxed to its rows through a second map (this tree, _t/new)
# against 3bfd1b6 (_t/base: the last tree timed, whole boxes past M on every row-tile past the
# first) - the rules' plans at 65-127-row products on 64-row tiles (96 x 4096 x 4096 64x64,
# 112 x 6144 x 4096 and 72 x 8192 x 28672 64x128), odd squares whose last row-tile holds one row
# (513, 2049, 4097), and shapes whose kernels the last stop changed without a GPU run: 128 x 4096
# x 4096 (64x64, no rows past M), 2048^3, 72 x 4096 x 14336 (128x64 split 2), 16 x 4096 x 14336
# (swapped decode). Trees alternating, two passes, both dtypes.
set -u
R=$OUT/r2; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1; date -u >> $R/device.txt
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
S="96,4096,4096;112,6144,4096;72,8192,28672;513,513,513;2049,2049,2049;4097,4097,4097;128,4096,4096;2048,2048,2048;72,4096,14336;16,4096,14336"
for t in base new; do
  for d in bf16 fp8; do
    for s in ${S//;/ }; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 200 python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1 > /dev/null 2>&1 &
    done
  done
done; wait; echo "warm $(date +%T)"
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for d in bf16 fp8; do
    for t in $order; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 75 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$S" \
        --quick --rounds 3 --rep-ms 8 --json $R/${d}_${t}_$pass.json > $R/${d}_${t}_$pass.log 2>&1
      echo "pass $pass $d $t rc $? $(date +%T)"
    done
  done
done
cd $OUT && tar cJf r2.tar.xz r2 && rm -rf r2
