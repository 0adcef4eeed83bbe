#!/usr/bin/env bash
# session scratch (run inline on the warm machine right after device_run8.sh): fp8 at 9+ waves,
# 128 x 160 against 128 x 256, four interleaved rounds
export PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc; mkdir -p $OUT/r8b
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/r8b/device.txt
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "8192,4800,1600;8192,4800,4096" --only "128x256c1 S=1,128x160c1 S=1" --rounds 4 --json $OUT/r8b/cmp_fp8_9waves.json 2>&1 | grep -v warn | cut -c1-130
