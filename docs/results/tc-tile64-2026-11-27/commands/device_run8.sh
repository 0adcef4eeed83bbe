#!/usr/bin/env bash
# session scratch: the 128-row tiles side by side at the large shapes still under the bar
# (fp8 and bf16), to see whether the wide/narrow and cluster lines hold for both dtypes
set -u
R=$OUT/r8; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
ONLY="128x256c1 S=1,128x256c2 S=1,128x128c1 S=1,128x128c2 S=1,128x160c1 S=1"
timeout 260 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "2048,11008,4096;2048,2048,2048;2048,1600,6400;8192,6144,4096;8192,4800,1600" --only "$ONLY" --json $R/cmp_fp8.json > $R/cmp_fp8.txt 2>&1; el "cmp fp8 $?"
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "8192,4800,1600;8192,1600,6400;2048,4800,1600" --only "$ONLY" --json $R/cmp_bf16.json > $R/cmp_bf16.txt 2>&1; el "cmp bf16 $?"
grep -h "^[0-9]\|  [0-9a-z]" $R/cmp_fp8.txt $R/cmp_bf16.txt | cut -c1-120
tar czf $OUT/r8.tgz -C $OUT r8
