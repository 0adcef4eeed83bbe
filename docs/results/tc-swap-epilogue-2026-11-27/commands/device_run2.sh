#!/bin/bash
# the new epilogue (cluster_reduce_x4, partials in the ring): clusters x rings again at the decode
# shapes still short of cuBLAS, and the swapped kernel at 128 tokens where 64 x 64 tiles fill the SMs
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src:$PWD/tests GEMMLAB_CACHE_DIR=/tmp/glc
R=$OUT/r2; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
sweep() { # dtype shapes name
  timeout 200 python benchmarks/tc_dispatch_compare.py --dtype $1 --shapes "$2" --only "swap,64x64 S=1" --rounds 2 --rep-ms 8 --json $R/$3.json > $R/$3.txt 2>&1
  echo "$3 rc=$?"
}
sweep bf16 "16,4096,4096;16,4800,1600;128,4096,4096" bf16_sweep
sweep fp8 "16,4096,4096;16,4800,1600;16,8192,8192;1,8192,8192;128,4096,4096" fp8_sweep
tar cJf $OUT/r2.tar.xz -C $OUT r2
grep -hE "^[0-9]|  [a-z0-9]" $R/*_sweep.txt | sed 's/\[cuBLAS.*\]//' | cut -c1-100
