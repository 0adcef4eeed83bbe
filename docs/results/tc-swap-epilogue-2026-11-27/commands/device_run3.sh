#!/bin/bash
# committed tree (0b601e7): GPU tests of every path kind the rules launch (swap, model shapes with
# fp8's 128-token swap, edge shapes, the decode rule), compute-sanitizer on every swap case
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
R=$OUT/r3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
timeout 330 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap or model_shapes or decode_rule or every_edge_shape or misaligned" 2>&1 | tail -4 > $R/gpu_tests.log
cat $R/gpu_tests.log
MATCH=swap bash benchmarks/run_sanitizer_device.sh $R/san tc 2>&1 | tail -6
cat $R/san/summary.txt
tar cJf $OUT/r3.tar.xz -C $OUT r3
