#!/bin/bash
# H200: shape maps of the tree with the swap rule, then the rule vs the previous tree's plans at the 16-token shapes
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
SHAPES_TIMEOUT=250 bash benchmarks/run_shapes_tc_device.sh $OUT/maps bf16 fp8 2>&1 | grep -E "geometric|meet|exit"
S="16,6144,4096;16,4096,4096;16,28672,4096;16,4096,14336;16,10240,8192;16,8192,8192;16,11008,4096;16,4800,1600;16,1600,6400;1,6144,4096;1,10240,8192"
for dt in bf16 fp8; do
  timeout 90 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --keep-plans old_plans.json --rounds 2 --rep-ms 10 --json $OUT/${dt}_rule_h200.json > $OUT/${dt}_rule_h200.txt 2>&1
done
cat $OUT/*_rule_h200.txt | grep -E "^[0-9]|  [a-z0-9]" | sed 's/\[cuBLAS.*\]//' | cut -c1-110
