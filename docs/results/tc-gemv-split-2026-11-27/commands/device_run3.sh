#!/bin/bash
# decode kernels (K shared by clusters, A loaded with B): GPU tests and compute-sanitizer (H100)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
mkdir -p $OUT/r3
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_decode_instantiation or decode_rule" 2>&1 | tail -15 > $OUT/r3/gpu_tests.log
cat $OUT/r3/gpu_tests.log
MATCH=gemv timeout 200 bash benchmarks/run_sanitizer_device.sh $OUT/r3/san_gemv tc > /dev/null 2>&1
MATCH=1600x6400 timeout 150 bash benchmarks/run_sanitizer_device.sh $OUT/r3/san_1600 tc > /dev/null 2>&1
cat $OUT/r3/san_gemv/summary.txt $OUT/r3/san_1600/summary.txt
