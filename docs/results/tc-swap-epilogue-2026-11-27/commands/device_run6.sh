#!/bin/bash
# H200 shape maps of the committed tree (faster swap epilogue, fp8 128-token rule)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
SHAPES_TIMEOUT=260 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | grep -E "geometric|meet|exit"
cd $OUT/maps && xz -9 *.json shapes.sqlite && tar -cf ../maps_txt.tar *.txt && rm -f *.txt
