#!/usr/bin/env bash
# session scratch: the bf16 and fp8 shape maps of the candidate (ping-pong narrow tile, timer
# retry) on the H200
set -u
R=$OUT/r6; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
SHAPES_TIMEOUT=285 bash benchmarks/run_shapes_tc_device.sh $R/map bf16 fp8 > $R/map.log 2>&1; el "map $?"
grep -h "geometric\|below the 95\|^(host)\|meet their goal" $R/map/shapes_*.txt | cut -c1-300
tar czf $OUT/r6.tgz -C $OUT r6
