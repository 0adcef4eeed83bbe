#!/bin/bash
# the swapped kernel at 64-128 tokens (m64n64 / m64n128): GPU test of every instantiation, then against the rules' 64-row tiles at 128 tokens
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/device.txt
timeout 200 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap" 2>&1 | tail -4 > $OUT/gpu_tests.log
cat $OUT/gpu_tests.log
for dt in bf16 fp8; do
  timeout 110 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "128,1600,6400;128,4096,4096" --only "swap" --rounds 2 --rep-ms 10 --json $OUT/${dt}_m128.json > $OUT/${dt}_m128.txt 2>&1
done
cat $OUT/*_m128.txt | grep -E "^[0-9]|  [a-z0-9]" | sed 's/\[cuBLAS.*\]//' | cut -c1-110
