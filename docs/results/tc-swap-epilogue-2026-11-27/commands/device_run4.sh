#!/bin/bash
# H100 shape maps of the committed tree (faster swap epilogue, fp8 128-token rule) + the decode rule's GPU test
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
timeout 60 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "decode_rule" 2>&1 | tail -2 > $OUT/gpu_tests_rule.log; cat $OUT/gpu_tests_rule.log
SHAPES_TIMEOUT=260 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | grep -E "geometric|meet|exit"
cd $OUT/maps && xz -9 *.json shapes.sqlite && tar -cf ../maps_txt.tar *.txt && rm -f *.txt
