#!/bin/bash
# Run 6 (H100): every tensor-dispatch GPU test on the tree as committed (757c97c), and the
# persistent ladder rungs (NVRTC).
set -u
R=$OUT/r6; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
timeout 420 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py > $R/gpu_tests.log 2>&1
echo "dispatch gpu tests rc $?"; tail -2 $R/gpu_tests.log
cd $OUT && tar cJf r6.tar.xz r6; cd - > /dev/null
timeout 100 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_bf16_gpu.py tests/gpu/test_fp8_gpu.py \
  -k "persistent or fp8_rung_correct" > $R/ladder_tests.log 2>&1
echo "ladder tests rc $?"; tail -2 $R/ladder_tests.log
cd $OUT && rm -f r6.tar.xz && tar cJf r6.tar.xz r6 && rm -rf r6
