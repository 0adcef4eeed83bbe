#!/bin/bash
# H200: clusters x rings at the 64-strip shapes, where the H100-set rule leaves the H200's bandwidth unused
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
for dt in bf16 fp8; do
timeout 200 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "16,4096,14336;16,4096,4096;16,8192,8192" --only "swap ks=1 s=1,swap ks=2,swap ks=4" --rounds 2 --rep-ms 10 --json $OUT/${dt}_sweep_h200.json > $OUT/${dt}_sweep_h200.txt 2>&1
done
cat $OUT/*_sweep_h200.txt | grep -E "^[0-9]|  [a-z0-9]" | sed 's/\[cuBLAS.*\]//' | cut -c1-100
