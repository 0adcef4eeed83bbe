#!/bin/bash
# the decode kernels' cluster reduction four columns at a time everywhere (decode_tc.cu too) and a
# block barrier in place of the cluster barriers for one CTA a strip (swap KS = 1): GPU tests of
# every decode instantiation, then HEAD (OLD) vs this tree (NEW) in alternation at the 16-token
# shapes the swapped kernel runs with one CTA a strip, then compute-sanitizer on the decode cases
R=$OUT/r1; mkdir -p $R
export PYTHONUNBUFFERED=1
NEW="PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc"
OLD="PYTHONPATH=$PWD/_old/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_old"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
T0=$(date +%s)
env $NEW timeout 220 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "decode" 2>&1 | tail -6 > $R/gpu_tests_decode.log
echo "tests $(( $(date +%s) - T0 )) s"; cat $R/gpu_tests_decode.log
S="16,4096,4096;16,8192,8192;16,4800,1600;16,6144,4096;16,11008,4096"
i=0
for tree in OLD NEW OLD NEW; do
  i=$((i+1))
  for dt in fp8 bf16; do
    env ${!tree} timeout 100 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --quick --rounds 2 --rep-ms 8 --json $R/ab_${i}_${tree}_${dt}.json > $R/ab_${i}_${tree}_${dt}.txt 2>&1
  done
  echo "ab $i $tree $(( $(date +%s) - T0 )) s"
done
env $NEW MATCH="gemv|swap" timeout $(( 580 - ($(date +%s) - T0) )) bash benchmarks/run_sanitizer_device.sh $R/sanitizer tc > /dev/null 2>&1
echo "sanitizer rc=$? $(( $(date +%s) - T0 )) s"; cat $R/sanitizer/summary.txt
tar cJf $OUT/r1.tar.xz -C $OUT r1
for f in $R/ab_*.txt; do echo "== $f"; grep -E "^ *dispatch" $f | cut -c1-90; done
