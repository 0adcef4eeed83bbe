#!/usr/bin/env bash
# session scratch (H100): the committed candidate - the rules' unclustered narrow tile is the
# ping-pong 128 x 128 (128x128pp), the timer retries batches the host fell behind in. Every tc
# GPU test and the harness hold tests; the tc sanitizer's ping-pong cases
set -u
R=$OUT/r4; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt; git log -1 --format=%H >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 90 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_harness_gpu.py -k "hold or slow_host or fell_behind" -rs > $R/harness_tests.log 2>&1; el "harness $?"; tail -n 2 $R/harness_tests.log; cp $OUT/harness_gpu.jsonl $R/ 2>/dev/null
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 4 $R/gpu_tests.log
MATCH=128x128pp timeout 200 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
tar czf $OUT/r4.tgz -C $OUT r4
