#!/bin/bash
# H200: the decode split rule's plans at N = 1600 against the unsplit plans they replaced
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
mkdir -p $OUT/r6
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > $OUT/r6/gpu.txt
timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "1,1600,6400;1,4800,1600" --only "gemv c=16 ks=1,gemv c=32 ks=1" --rounds 3 --rep-ms 15 --json $OUT/r6/bf16.json > $OUT/r6/bf16.txt 2>&1
timeout 120 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "1,1600,6400;8,1600,6400;16,1600,6400;1,4800,1600" --only "gemv ks=1" --rounds 3 --rep-ms 15 --json $OUT/r6/fp8.json > $OUT/r6/fp8.txt 2>&1
grep -E "^[0-9]|dispatch|gemv" $OUT/r6/bf16.txt $OUT/r6/fp8.txt | cut -c1-130
