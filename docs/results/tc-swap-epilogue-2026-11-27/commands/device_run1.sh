#!/bin/bash
# swap kernel's epilogue four columns at a time, partial sums in the ring (no static smem):
# GPU tests of every swap instantiation; the old tree (_old/src, HEAD 049e054) and the new one
# alternating (old, new, new, old) on the decode shapes, rules' plans only; then the new kernel's
# clusters x rings at 128 tokens (4-stage rings at 128 tokens now fit two CTAs an SM)
export PYTHONUNBUFFERED=1
NEW="PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc"
OLD="PYTHONPATH=$PWD/_old/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc_old"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/device.txt; date -u >> $OUT/device.txt
env $NEW timeout 200 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap" 2>&1 | tail -4 > $OUT/gpu_tests_swap.log
cat $OUT/gpu_tests_swap.log
B="16,4096,4096;16,4800,1600;16,1600,6400;16,6144,4096;16,4096,14336;1,6144,4096;128,1600,6400"
F="16,4096,4096;16,4800,1600;16,8192,8192;1,8192,8192;16,11008,4096;16,4096,14336;16,1600,6400"
i=0
for tree in OLD NEW NEW OLD; do i=$((i+1))
  for dt in bf16 fp8; do S=$B; [ $dt = fp8 ] && S=$F
    env ${!tree} timeout 100 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "$S" --quick --rounds 2 --rep-ms 10 --json $OUT/ab_${i}_${tree}_${dt}.json > $OUT/ab_${i}_${tree}_${dt}.txt 2>&1
    echo "pass $i $tree $dt rc=$?"
  done
done
for dt in bf16 fp8; do
  env $NEW timeout 60 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "128,1600,6400" --only "swap" --rounds 2 --rep-ms 10 --json $OUT/${dt}_m128.json > $OUT/${dt}_m128.txt 2>&1
done
grep -hE "^[0-9]|  [a-z0-9]" $OUT/*_m128.txt | sed 's/\[cuBLAS.*\]//' | cut -c1-110
