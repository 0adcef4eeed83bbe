#!/bin/bash
# Run 7 (H100), the working tree (128 x 200's C in one 200-column box): compute-sanitizer on the
# 128x200c1 cases (ragged M and N, split-K, stream-K, misaligned C; beta 0 and 0.5), then the fp8
# dispatch GPU tests that force every configuration (edge shapes, every config and split, stream-K,
# misaligned views) and the model shapes.
set -u
R=$OUT/r7; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
date +%T
MATCH="128x200c1" timeout 260 bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc $? $(date +%T)"; tail -6 $R/sanitizer/summary.txt
cd $OUT && tar cJf r7.tar.xz r7; cd - > /dev/null
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "fp8 and (every_edge_shape or every_config_and_split or every_config_with_stream_k or misaligned or model_shapes)" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -3 $R/gpu_tests.log
cd $OUT && rm -f r7.tar.xz && tar cJf r7.tar.xz r7 && rm -rf r7
