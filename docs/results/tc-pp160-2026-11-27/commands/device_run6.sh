#!/bin/bash
# Run 6 (H100), the final tree: compute-sanitizer over the 128 x 160 cases (bf16's three-chunk B
# in clusters of 1 and 2, fp8's), and the dispatch GPU tests forcing every configuration, the
# model shapes and the edge shapes (both dtypes).
set -u
R=$OUT/r6; mkdir -p $R; nvidia-smi > $R/device.txt 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
date +%T
MATCH=128x160 bash benchmarks/run_sanitizer_device.sh $R/san tc > $R/san.log 2>&1
echo "sanitizer rc $? $(date +%T)"; cat $R/san/summary.txt
timeout 330 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_config_and_split or model_shapes or every_edge_shape" > $R/gpu_tests.log 2>&1
echo "gpu tests rc $? $(date +%T)"; tail -n 3 $R/gpu_tests.log
cd $OUT && tar cJf r6.tar.xz r6 && rm -rf r6
