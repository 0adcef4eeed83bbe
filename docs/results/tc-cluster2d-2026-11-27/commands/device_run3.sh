#!/usr/bin/env bash
# session scratch: the final rules' shape maps (after the relaxed cluster barriers and the 2-D cluster
# kernels), and the tc sanitizer's 2-D cluster cases as committed (64x32c2x4 plain, split-K, stream-K)
set -u
R=$OUT/r3; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
MATCH=c2x4 timeout 80 bash benchmarks/run_sanitizer_device.sh $R/san tc > /dev/null 2>&1; el "san $?"; cat $R/san/summary.txt
SHAPES_TIMEOUT=250 bash benchmarks/run_shapes_tc_device.sh $R/map bf16 fp8 > $R/map.log 2>&1; el "map $?"
grep -h "geometric\|below the 95\|meet their goal\|worst" $R/map/shapes_*.txt
tar czf $OUT/r3.tgz -C $OUT r3
