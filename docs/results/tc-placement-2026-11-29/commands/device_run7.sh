#!/usr/bin/env bash
# run 7: main after the cluster-slot change (4562be0): every tensor-dispatch GPU test and the
# driver occupancy tests (the cluster counts the grids now read)
set -u
R=$OUT/r7; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s)
timeout 120 python3 -m pytest -q -p no:cacheprovider -rs tests/gpu/test_occupancy_driver.py > $R/gpu_occupancy.log 2>&1; echo "occupancy tests rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/gpu_occupancy.log
tail -2 $R/gpu_occupancy.log
timeout 400 python3 -m pytest -q -p no:cacheprovider -rs tests/gpu/test_dispatch_tc_gpu.py > $R/gpu_tc.log 2>&1; echo "tc tests rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/gpu_tc.log
tail -3 $R/gpu_tc.log
cd $OUT && tar cJf r7.tar.xz r7 && rm -rf r7
