#!/usr/bin/env bash
# session scratch, not committed: H100 - all tc GPU tests, harness hold tests, fp8 160 compare
set -u
R=$OUT/r2; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt; git rev-parse HEAD >> $R/device.txt 2>&1
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
OUT=$R timeout 60 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_harness_gpu.py -k "hold" -rs > $R/harness.log 2>&1; el "harness $?"; tail -n 2 $R/harness.log
S="8192,1600,6400;8192,4800,1600;2048,4800,1600;2048,1600,6400;8192,6400,1600"
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --only "128x160c2 S=1,128x256c1 S=1,128x256c2 S=1,128x128c1 S=1" --shapes "$S" --json $R/cmp160.json > $R/cmp160.txt 2>&1; el "cmp $?"; grep -E "^[0-9]|dispatch|S=1" $R/cmp160.txt | cut -c1-110
timeout 360 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 4 $R/gpu_tests.log
