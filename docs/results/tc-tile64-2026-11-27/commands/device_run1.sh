#!/usr/bin/env bash
# session scratch: 64 x 64 tiles (c1, c2) at M = 128 - correctness of every config, then every
# variant against cuBLAS at its best (interleaved) at the M = 128 shapes under the bar
set -u
R=$OUT/r1; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 260 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_config_and_split" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 3 $R/gpu_tests.log
SH="128,1600,6400;128,4096,14336;128,4096,4096;128,4800,1600;128,11008,4096"
for dt in bf16 fp8; do
  timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$SH" --only "64x64,64x128 S=,128x128c1 S=" --json $R/cmp_$dt.json > $R/cmp_$dt.txt 2>&1; el "cmp $dt $?"
done
grep -v "^\s*$" $R/cmp_bf16.txt $R/cmp_fp8.txt | cut -c1-170 | head -150
tar czf $OUT/r1.tgz -C $OUT r1
