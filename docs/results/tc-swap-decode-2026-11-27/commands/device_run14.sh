#!/bin/bash
# the swapped kernel to 128 tokens (bf16 rule where even 64 x 64 tiles leave SMs idle): the rule's GPU test, compute-sanitizer on every swap case
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/device.txt
true
MATCH=swap bash benchmarks/run_sanitizer_device.sh $OUT/san tc 2>&1 | tail -6
grep -h "swap_m128\|swap_m64" $OUT/san/plain.log $OUT/san/racecheck.log | head
