#!/bin/bash
# swap decode kernel: every stage count correct, then ring depth x cluster size at the decode shapes
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/gpu.txt
python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap" -x 2>&1 | tail -15 > $OUT/tests.txt
cat $OUT/tests.txt
grep -q " passed" $OUT/tests.txt && ! grep -q "failed" $OUT/tests.txt || exit 1
for dt in ${DTS:-bf16 fp8}; do
  if [ $dt = bf16 ]; then S="16,6144,4096;16,4096,4096;16,4096,14336;16,4800,1600;16,1600,6400;1,4096,4096"; else S="16,6144,4096;16,4096,4096;16,10240,8192;16,4800,1600;16,1600,6400;1,10240,8192;16,11008,4096"; fi
  timeout 420 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --only "swap" --rounds 3 --rep-ms 12 --json $OUT/${dt}_stages.json > $OUT/${dt}_stages.txt 2>&1
done
cat $OUT/*_stages.txt | grep -E "^[0-9]|swap|dispatch" | sed 's/\[cuBLAS.*\]//' | cut -c1-140
