#!/bin/bash
# H100 shape maps (bf16, fp8) of the tree as committed
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
SHAPES_TIMEOUT=270 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | tail -30
cd $OUT/maps && xz -9 *.json shapes.sqlite
