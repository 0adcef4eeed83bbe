#!/bin/bash
# after the map-cache / shared-memory-check refactor of dispatch_tc_gemm (behaviour unchanged): the GPU tests that launch every path kind
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/device.txt
timeout 400 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap or model_shapes or misaligned or decode_rule or wgmma_fallback or deterministic or every_edge_shape" 2>&1 | tail -4 > $OUT/gpu_tests.log
cat $OUT/gpu_tests.log
