#!/bin/bash
# the tree as committed: decode GPU tests, compute-sanitizer on the split decode cases, the rules' plans at the N = 1600 decode shapes (H100)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
mkdir -p $OUT/r5
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "every_decode_instantiation or decode_rule or every_mma_decode" 2>&1 | tail -5 > $OUT/r5/gpu_tests.log
cat $OUT/r5/gpu_tests.log
for m in gemv 1600x6400; do
  MATCH=$m timeout 110 bash benchmarks/run_sanitizer_device.sh $OUT/r5/san_$m tc > /dev/null 2>&1
done
cat $OUT/r5/san_*/summary.txt
for dt in bf16 fp8; do
  timeout 60 python3 benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "1,1600,6400;16,1600,6400;8,1600,6400" --quick --rounds 3 --rep-ms 15 --json $OUT/r5/rule_$dt.json > $OUT/r5/rule_$dt.txt 2>&1
  grep -E "^[0-9]|dispatch" $OUT/r5/rule_$dt.txt | cut -c1-120
done
cd $OUT/r5 && tar cf san.tar san_* && rm -rf san_*
