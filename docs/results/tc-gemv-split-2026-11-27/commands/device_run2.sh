#!/bin/bash
# decode kernels with K shared by a cluster of 1-8 blocks: correctness, then speed (H100)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
mkdir -p $OUT/r2
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > $OUT/r2/gpu.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_decode_instantiation or decode_rule" 2>&1 | tail -15 > $OUT/r2/gpu_tests.log
cat $OUT/r2/gpu_tests.log
D1="1,4096,4096;1,6144,4096;1,28672,4096;1,4096,14336;1,10240,8192;1,8192,8192;1,28672,8192;1,8192,28672;1,11008,4096;1,4800,1600;1,1600,6400"
D16="16,4096,4096;16,6144,4096;16,28672,4096;16,4096,14336;16,10240,8192;16,8192,8192;16,28672,8192;16,8192,28672;16,11008,4096;16,4800,1600;16,1600,6400"
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$D1" --only gemv --rounds 3 --rep-ms 15 --json $OUT/r2/gemv_bf16.json > $OUT/r2/gemv_bf16.txt 2>&1
timeout 200 python3 benchmarks/tc_dispatch_compare.py --dtype fp8 --shapes "$D1;$D16" --only gemv --rounds 3 --rep-ms 15 --json $OUT/r2/gemv_fp8.json > $OUT/r2/gemv_fp8.txt 2>&1
grep -E "^[0-9]|dispatch|gemv" $OUT/r2/gemv_bf16.txt $OUT/r2/gemv_fp8.txt | cut -c1-150
