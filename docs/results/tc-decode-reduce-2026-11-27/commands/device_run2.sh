#!/bin/bash
# H100 shape maps of this tree (the decode kernels' reduction four columns at a time, one CTA a
# strip without cluster barriers)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt; date -u >> $OUT/device.txt
SHAPES_TIMEOUT=260 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | grep -E "geometric|meet|exit"
cd $OUT/maps && xz -9 *.json shapes.sqlite && tar -cf ../maps_txt.tar *.txt && rm -f *.txt
