#!/usr/bin/env bash
# session scratch: the final rules on the H100 - 64 x 64 where not even 64 x 128 fills (511-513^3)
# against 64 x 128, every tc GPU test, then the shape maps bf16 + fp8
set -u
R=$OUT/r5; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
for dt in bf16 fp8; do
  timeout 100 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "511,511,511;512,512,512;513,513,513" --only "64x128 S=1" --json $R/cmp_$dt.json > $R/cmp_$dt.txt 2>&1; el "cmp $dt $?"
done
grep -h "^[0-9]\|dispatch \|64x128 S=1 " $R/cmp_bf16.txt $R/cmp_fp8.txt | cut -c1-150
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
tar czf $OUT/r5.tgz -C $OUT r5
