#!/usr/bin/env bash
# session scratch: 2-D clusters (64x32c2x4, 64x32c2x2, 64x64c2x2) against the 64 x 64 / 64 x 128 tiles at
# M = 128, both dtypes; every tc GPU test; the tc sanitizer's 2-D cluster cases
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
S="128,1600,6400;128,4096,4096;128,4800,1600;128,11008,4096;128,4096,14336"
for dt in fp8 bf16; do
  timeout 130 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --rounds 3 \
    --only "64x32c2x4,64x32c2x2,64x64c2x2,64x64 S=1,64x128 S=1" --json $R/cmp_$dt.json > $R/cmp_$dt.txt 2>&1; el "cmp $dt $?"
  grep -h "^[0-9]\|  [0-9a-z]" $R/cmp_$dt.txt | cut -c1-130
done
timeout 235 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 3 $R/gpu_tests.log
MATCH=c2x timeout 95 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
tar czf $OUT/r1.tgz -C $OUT r1
