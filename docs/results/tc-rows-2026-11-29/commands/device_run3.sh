#!/bin/bash
# Run 3 (H200): the shape maps (both dtypes) of this tree (A's boxes stop at M; fp8's stream-once
# rule from 65 rows), the memcheck cases' kernels compiled meanwhile (no launches), then
# compute-sanitizer memcheck over every path (sanitize_dispatch_tc.py --set memcheck).
set -u
T0=$(date +%s)
R=$OUT/r3; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
git rev-parse HEAD >> $R/device.txt 2>/dev/null
nice -n 19 python3 _dev/warm_cases.py > $R/warm.log 2>&1 &
SHAPES_TIMEOUT=250 bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 fp8 2>&1 | grep -E "geometric|meet|exit"
wait; echo "maps $(date +%T)"; tail -1 $R/warm.log
left=$(( 575 - ($(date +%s) - T0) )); echo "memcheck gets $left s"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout $left $CS --tool memcheck --error-exitcode 3 --print-limit 20 --report-api-errors no \
  python3 benchmarks/sanitize_dispatch_tc.py --set memcheck > $R/memcheck.log 2>&1
echo "memcheck rc $? $(date +%T)"; grep -E "ERROR SUMMARY|cases, " $R/memcheck.log | tail -2
cd $R/maps && xz -9 *.json shapes.sqlite; cd $OUT && tar cf r3.tar r3 && rm -rf r3
