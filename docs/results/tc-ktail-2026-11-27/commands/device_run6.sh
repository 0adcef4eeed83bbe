#!/usr/bin/env bash
# session scratch (H200): the shape maps of this tree
set -u
R=$OUT/r6; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
SHAPES_TIMEOUT=270 bash benchmarks/run_shapes_tc_device.sh $R/maps bf16 fp8 > $R/maps.log 2>&1; el "maps $?"
grep -h "exit\|geometric" $R/maps/*.txt | cut -c1-160
tar czf $OUT/r6.tgz -C $OUT r6
