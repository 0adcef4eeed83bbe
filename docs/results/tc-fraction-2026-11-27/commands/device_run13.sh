#!/bin/bash
# Run 13 (H100), the working tree (copies padded to whole 128-byte lines; bf16's B copied to whole
# lines where N is not a multiple of 64): the dispatch GPU tests of edge shapes (M, N, K in
# {1, 7, 127, 1000, 4095, 4097}), misaligned views and model shapes, both dtypes.
set -u
R=$OUT/r13; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
timeout 420 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py \
  -k "every_edge_shape or misaligned or model_shapes or wgmma_fallback" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -3 $R/gpu_tests.log
cd $OUT && tar cJf r13.tar.xz r13 && rm -rf r13
