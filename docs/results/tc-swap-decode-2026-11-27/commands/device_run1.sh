#!/bin/bash
# swap decode kernel: GPU tests (swap + the decode kernels that share cluster_reduce), then bf16 compare
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/gpu.txt
python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap or every_decode_instantiation or every_mma_decode" -x 2>&1 | tail -15 > $OUT/tests.txt
cat $OUT/tests.txt
grep -q " passed" $OUT/tests.txt && ! grep -q "failed" $OUT/tests.txt || exit 1
timeout 330 python benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "16,6144,4096;16,4096,4096;16,4096,14336;16,11008,4096;16,4800,1600;16,1600,6400;1,4096,4096;1,6144,4096" --only "swap" --rounds 3 --rep-ms 15 --json $OUT/bf16_swap.json > $OUT/bf16_swap.txt 2>&1
tail -60 $OUT/bf16_swap.txt
