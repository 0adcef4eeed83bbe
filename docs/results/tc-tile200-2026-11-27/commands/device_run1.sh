#!/bin/bash
# Shape maps (both dtypes) of this tree - f22acff's stage loop, split-K through the stream-K
# fixup, the H200 128-row stream-once rule - on whichever GPU runs it
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/device.txt; date -u >> $OUT/device.txt
git rev-parse HEAD >> $OUT/device.txt 2>/dev/null
SHAPES_TIMEOUT=270 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | grep -E "geometric|meet|exit"
cd $OUT/maps && xz -9 *.json shapes.sqlite && tar -cf ../maps_txt.tar *.txt && rm -f *.txt
