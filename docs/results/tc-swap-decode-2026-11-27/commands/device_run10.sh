#!/bin/bash
# H200: the bandwidth-aware swap rule (64-75 strips: 2 CTAs a strip) vs the H100-set plans and the previous tree's
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/gpu.txt
S="16,4800,1600;1,4800,1600;1,4096,4096;16,4096,4096;16,4096,14336;1,4096,14336;16,6144,4096"
for dt in bf16 fp8; do
  timeout 140 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --keep-plans h200_keep.json --rounds 3 --rep-ms 10 --json $OUT/${dt}_bw_h200.json > $OUT/${dt}_bw_h200.txt 2>&1
done
cat $OUT/*_bw_h200.txt | grep -E "^[0-9]|  [a-z0-9]" | sed 's/\[cuBLAS.*\]//' | cut -c1-100
