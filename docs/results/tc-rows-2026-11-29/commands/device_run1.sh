#!/bin/bash
# Run 1 (H200): rows past M. A's (the tokens') TMA boxes copied only A's M rows (this tree, _t/new)
# against whole tile-high boxes whose rows past M the copy engine fills with zeros (HEAD, _t/base):
# forced 128 x 64 split 2 and 64 x 64 at 72-128 rows, the swapped decode kernel at 1-40 tokens,
# rules' plans, trees alternating, two passes, both dtypes; then the GPU tests of the paths
# that now copy fewer rows (edge shapes, every config and split, every swapped instantiation).
set -u
R=$OUT/r1; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1; date -u >> $R/device.txt
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
date +%T
for t in base new; do
  for d in bf16 fp8; do
    for pol in '{"config":"128x64c1","split":2}' '{"config":"64x64"}' '{"config":"swap","split":2,"stages":8}'; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests python3 benchmarks/tc_plan_once.py --dtype $d --shape 40,4096,14336 --runs 1 --policy "$pol" > /dev/null 2>&1 &
    done
  done
done; wait; echo "warm $(date +%T)"
S="72,4096,14336;96,4096,14336;128,4096,14336;1,4096,14336;16,4096,14336;40,4096,14336"
for pass in 1 2; do
  order="base new"; [ $pass = 2 ] && order="new base"
  for d in bf16 fp8; do
    for t in $order; do
      PYTHONPATH=$PWD/_t/$t/src:$PWD/tests timeout 75 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$S" \
        --only "128x64c1 S=2,64x64 S=1,swap ks=2 s=8,swap ks=1 s=8" --rounds 3 --rep-ms 8 \
        --json $R/${d}_${t}_$pass.json > $R/${d}_${t}_$pass.log 2>&1
      echo "pass $pass $d $t rc $? $(date +%T)"
    done
  done
done
PYTHONPATH=$PWD/_t/new/src:$PWD/tests timeout 170 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "swap_decode_instantiation or every_config_and_split" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -n 3 $R/gpu_tests.log
cd $OUT && tar cJf r1.tar.xz r1 && rm -rf r1
