#!/bin/bash
# probe: how fast weights are read once, by access pattern (H100)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
mkdir -p $OUT/r1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/r1/gpu.txt
python3 benchmarks/probes/stream_read.py --json $OUT/r1/stream_read.json 2>&1 | tee $OUT/r1/stream_read.txt
