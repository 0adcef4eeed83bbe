#!/usr/bin/env bash
# session scratch (H100): the 128 x 192 rule for bf16 - the stream-K GPU tests (every config,
# 128x192 included), the tc sanitizer's 128x192 cases, then the shapes the rule moves (the odd
# cubes 4097^3 and 8193^3 were not timed with 128 x 192 before)
set -u
R=$OUT/r8; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "stream_k" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
MATCH=128x192 timeout 120 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; tail -n 4 $R/san/summary.txt
tar czf $OUT/r8a.tgz -C $OUT r8
timeout 150 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "4097,4097,4097;8193,8193,8193;8192,1600,6400;8192,4800,1600" --rounds 3 \
  --only "128x192c1 S=1,128x192c2 S=1,128x256c1 S=1,128x256c2 S=1" --json $R/t192_rule.json > $R/t192_rule.txt 2>&1; el "cmp $?"
grep -h "^[0-9]\|  [0-9a-z]\|WRONG\|rror" $R/t192_rule.txt | cut -c1-110
tar czf $OUT/r8.tgz -C $OUT r8
