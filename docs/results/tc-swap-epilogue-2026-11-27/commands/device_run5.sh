#!/bin/bash
# strips in pairs sharing the 128-token tiles by TMA multicast (PAIR = 2, clusters 2 x KS): GPU test
# of every swap instantiation, then pairs vs single strips vs the 64 x 64 tiles at 128 tokens
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
R=$OUT/r5; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
timeout 200 python -m pytest -q -p no:cacheprovider tests/gpu/test_dispatch_tc_gpu.py -k "swap" 2>&1 | tail -6 > $R/gpu_tests_swap.log
cat $R/gpu_tests_swap.log
for dt in bf16 fp8; do
  timeout 150 python benchmarks/tc_dispatch_compare.py --dtype $dt --shapes "128,1600,6400;128,4096,4096;128,4800,1600" --only "swap ks=2,swap ks=4,64x64 S=1" --rounds 2 --rep-ms 8 --json $R/${dt}_pair.json > $R/${dt}_pair.txt 2>&1
  echo "$dt rc=$?"
done
tar cJf $OUT/r5.tar.xz -C $OUT r5
grep -hE "^[0-9]|  [a-z0-9]" $R/*_pair.txt | sed 's/\[cuBLAS.*\]//' | cut -c1-100
