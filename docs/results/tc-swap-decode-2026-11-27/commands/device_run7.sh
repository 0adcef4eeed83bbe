#!/bin/bash
# H100 shape maps of the tree with the swapped-operand decode rule (bf16, fp8)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
SHAPES_TIMEOUT=285 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | tail -30
