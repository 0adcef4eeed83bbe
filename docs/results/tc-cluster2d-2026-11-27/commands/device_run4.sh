#!/usr/bin/env bash
# session scratch: the H200 shape maps of the same code as device_run3.sh's H100 maps
set -u
R=$OUT/r4; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
SHAPES_TIMEOUT=250 bash benchmarks/run_shapes_tc_device.sh $R/map bf16 fp8 > $R/map.log 2>&1; el "map $?"
grep -h "geometric\|below the 95\|meet their goal\|worst" $R/map/shapes_*.txt
tar czf $OUT/r4.tgz -C $OUT r4
