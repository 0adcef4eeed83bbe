#!/bin/bash
# Runs 1 and 3 (H200; RUN=r1 / RUN=r3): run 1 on 2b4177a - the last stop's kernels (zeroing in the
# producer's first warp), owed from then; run 3 on the tree that became bd20fad. The whole GPU
# test file of the tensor dispatch, with compute-sanitizer memcheck over every tc case beside it
# (same kernel cache), then racecheck.
set -u
R=$OUT/${RUN:-r1}; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1; date -u >> $R/device.txt
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc PYTHONPATH=$PWD/src:$PWD/tests
git log -1 --format=%H >> $R/device.txt 2>&1
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
$CS --version | tail -1 >> $R/device.txt
( timeout 420 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py > $R/gpu_tests.log 2>&1
  echo "gpu tests rc $? $(date +%T)" >> $R/status.txt ) &
sleep 20
timeout 380 $CS --tool memcheck --error-exitcode 3 --print-limit 20 --report-api-errors no \
  python3 benchmarks/sanitize_dispatch_tc.py --set memcheck > $R/memcheck.log 2>&1
echo "memcheck rc $? $(date +%T)" >> $R/status.txt
timeout 120 $CS --tool racecheck --error-exitcode 3 --print-limit 20 --report-api-errors no \
  python3 benchmarks/sanitize_dispatch_tc.py --set racecheck > $R/racecheck.log 2>&1
echo "racecheck rc $? $(date +%T)" >> $R/status.txt
wait
cat $R/status.txt; tail -n 3 $R/gpu_tests.log; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|cases, " $R/memcheck.log $R/racecheck.log | tail -6
cd $OUT && tar cJf ${RUN:-r1}.tar.xz ${RUN:-r1} && rm -rf ${RUN:-r1}
