#!/bin/bash
# Run 5 (H200), tree bd20fad:
#  a. the tensor-batches map again (run 4's came back without its files), both dtypes;
#  b. the stream-once rule (128 x 64 split 2 in place of 64 x 64 at 65-128 rows, long K, N <= 4224)
#     now that 64 x 64's last row-tile no longer fills: both forced, beside the rules' plan, two
#     processes per dtype (passes), at 72-128 rows; shapes after the ';;' are held out (scored
#     after any rule is set from the others).
set -u
R=$OUT/r5; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1; date -u >> $R/device.txt
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc PYTHONPATH=$PWD/src:$PWD/tests
S="72,4096,14336;96,4096,14336;128,4096,14336;128,4096,8192;128,4096,28672;96,4096,28672"
H="80,4096,14336;104,4096,28672;88,4096,12288;120,3584,14336"
for d in bf16 fp8; do for s in ${S//;/ } ${H//;/ }; do
  for pol in '{"config":"64x64"}' '{"config":"128x64c1","split":2}'; do
    timeout 200 python3 benchmarks/tc_plan_once.py --dtype $d --shape $s --runs 1 --policy "$pol" > /dev/null 2>&1 &
  done; done; done; wait; echo "warm $(date +%T)"
for pass in 1 2; do for d in bf16 fp8; do
  timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype $d --shapes "$S;$H" \
    --only "128x64c1 S=2,64x64 S=1" --rounds 3 --rep-ms 8 --json $R/once_${d}_$pass.json > $R/once_${d}_$pass.log 2>&1
  echo "once $pass $d rc $? $(date +%T)"
done; done
(cd $OUT && tar cJf once.tar.xz r5)
SHAPES_TIMEOUT=125 bash benchmarks/run_shapes_tc_device.sh $R/batches bf16 fp8 -- --preset tensor-batches > $R/batches.log 2>&1
echo "map rc $? $(date +%T)"
cd $OUT && tar cJf r5.tar.xz r5 && rm -rf r5 once.tar.xz
