#!/bin/bash
# final tree on the H100: the tensor dispatch GPU tests (every edge shape now takes the swap rule at M = 1, 7)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/device.txt
timeout 560 python -m pytest -q -p no:cacheprovider -rA --durations=8 tests/gpu/test_dispatch_tc_gpu.py 2>&1 | tail -40 > $OUT/gpu_tests.log
tail -40 $OUT/gpu_tests.log
