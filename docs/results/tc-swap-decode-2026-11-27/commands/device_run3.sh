#!/bin/bash
# the swap rule vs the previous tree's rules at every decode shape of the grid (same process, interleaved)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/gpu.txt
S="1,6144,4096;16,6144,4096;1,4096,4096;16,4096,4096;1,28672,4096;16,28672,4096;1,4096,14336;16,4096,14336;1,10240,8192;16,10240,8192;1,8192,8192;16,8192,8192;1,28672,8192;16,28672,8192;1,8192,28672;16,8192,28672;1,11008,4096;16,11008,4096;1,4800,1600;16,4800,1600;1,1600,6400;16,1600,6400"
for dt in $DTS; do
  timeout 560 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --keep-plans old_plans.json --rounds 3 --rep-ms 12 --json $OUT/${dt}_rule.json > $OUT/${dt}_rule.txt 2>&1
done
cat $OUT/*_rule.txt | grep -E "^[0-9]|  [a-z0-9]" | sed 's/\[cuBLAS.*\]//' | cut -c1-130
