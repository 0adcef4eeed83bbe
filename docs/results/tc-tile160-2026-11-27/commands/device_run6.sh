#!/usr/bin/env bash
# session scratch: the shared finish_tile (tile_finish.cuh) - all tc GPU tests and the full tc sanitizer
set -u
R=$OUT/r6; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 3 $R/gpu_tests.log
timeout 200 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
tar czf $OUT/r6.tgz -C $OUT r6
