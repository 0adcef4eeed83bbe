#!/usr/bin/env bash
# session scratch: streamk_fixup's two branches folded into one loop - stream-K GPU tests and sanitizer
set -u
R=$OUT/r7; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 300 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "stream_k" -rs > $R/gpu_sk.log 2>&1; el "gpu sk $?"; tail -n 3 $R/gpu_sk.log
MATCH=streamk timeout 200 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
tar czf $OUT/r7.tgz -C $OUT r7
