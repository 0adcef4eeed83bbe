#!/usr/bin/env bash
# session scratch (H100): a 128 x 192 tile (uncommitted table entries 128x192c1/c2; wgmma m64n192)
# where 192 columns waste less than 256 past N (N = 1600: 1728 vs 1792; 4800 and 6144: none) -
# correctness in the every-config GPU test, then timed against the rules' tiles and cuBLAS
set -u
R=$OUT/r7; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "test_every_config_and_split" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 3 $R/gpu_tests.log
S="8192,1600,6400;8192,4800,1600;2048,4800,1600;8192,6144,4096;4096,4096,4096;2048,6144,4096"
for dt in bf16 fp8; do
  timeout 170 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --rounds 3 \
    --only "128x192c1 S=1,128x192c2 S=1,128x256c1 S=1,128x256c2 S=1,128x160c1 S=1,128x128pp" --json $R/t192_$dt.json > $R/t192_$dt.txt 2>&1; el "t192 $dt $?"
  grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/t192_$dt.txt | cut -c1-100
done
tar czf $OUT/r7.tgz -C $OUT r7
