#!/usr/bin/env bash
# main as it stands (H200): every tensor-dispatch GPU test, then the profiler's GPU tests (ncu on
# the device: the analyzer's recorded-command split changed in 72ca6ad)
set -u
R=$OUT/r4; mkdir -p $R
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; date -u; git log -1 --format=%H; } > $R/device.txt 2>&1
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src:/opt/nvidia/nsight-compute/2025.3.1/extras/python GEMMLAB_CACHE_DIR=/tmp/glc
T0=$(date +%s)
timeout 430 python3 -m pytest -q -p no:cacheprovider -rs tests/gpu/test_dispatch_tc_gpu.py > $R/gpu_tc.log 2>&1; echo "tc tests rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/gpu_tc.log
tail -3 $R/gpu_tc.log
cd $OUT && tar cJf r4.tar.xz r4 && cd - > /dev/null
timeout 120 python3 -m pytest -q -p no:cacheprovider -rs tests/gpu/test_profile_gpu.py > $R/gpu_profile.log 2>&1; echo "profile tests rc $? $(( $(date +%s) - T0 )) s" | tee -a $R/gpu_profile.log
tail -3 $R/gpu_profile.log
cd $OUT && tar cJf r4.tar.xz r4 && cd - > /dev/null
