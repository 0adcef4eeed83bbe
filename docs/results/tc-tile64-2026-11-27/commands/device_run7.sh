#!/usr/bin/env bash
# session scratch: decode_tc.cu's two-stage loops folded into two_stages() - every tc GPU test and
# the whole tc compute-sanitizer set (decode kernels included)
set -u
R=$OUT/r7; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 260 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
timeout 300 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
tar czf $OUT/r7.tgz -C $OUT r7
