#!/usr/bin/env bash
# session scratch (H100): the tensor dispatch GPU tests this stop had not run since the K-tail
# change (stream-K determinism, wgmma fallback, misaligned views, decode), so all 18 have run on it
set -u
R=$OUT/r8; mkdir -p $R
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
timeout 400 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "not edge_shape and not every_config_and_split and not every_config_with_stream_k and not model_shapes" -rs > $R/gpu_tests.log 2>&1; el "gpu tests $?"; tail -n 2 $R/gpu_tests.log
tar czf $OUT/r8.tgz -C $OUT r8
