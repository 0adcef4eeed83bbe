#!/bin/bash
# memcheck of the decode split cases; main (old_src) vs this tree at the 1-token bf16 and fp8 decode shapes, alternate processes (H100)
export PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
mkdir -p $OUT/r4
for m in gemv 1600x6400; do
  PYTHONPATH=$PWD/src:$PWD/tests MATCH=$m timeout 100 bash benchmarks/run_sanitizer_device.sh $OUT/r4/san_$m tc > /dev/null 2>&1
  grep -E "^(plain|memcheck|racecheck)" $OUT/r4/san_$m/summary.txt
done
D1="1,4096,4096;1,6144,4096;1,4096,14336;1,10240,8192;1,8192,8192;1,8192,28672;1,11008,4096;1,4800,1600;1,1600,6400"
for i in 1 2; do
  for side in old new; do
    src=$PWD/src; [ $side = old ] && src=$PWD/old_src
    PYTHONPATH=$src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_$side timeout 110 python3 benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "$D1" --quick --rounds 3 --rep-ms 15 --json $OUT/r4/${side}_bf16_$i.json > $OUT/r4/${side}_bf16_$i.txt 2>&1
  done
done
for f in $OUT/r4/*_bf16_*.txt; do echo "== $f"; grep -E "dispatch" $f | cut -c1-100; done
