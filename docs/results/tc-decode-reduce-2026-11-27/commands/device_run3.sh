#!/bin/bash
# bf16, one token: the CUDA-core kernel (gemv_m1_c64) vs the swapped kernel on the H200 where its
# 64-column strips number 128 (N = 8192: 4 SMs idle), 160 and 172 (every SM busy)
export PYTHONPATH=$PWD/src:$PWD/tests PYTHONUNBUFFERED=1 GEMMLAB_CACHE_DIR=/tmp/glc
R=$OUT/r3; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/device.txt; date -u >> $R/device.txt
timeout 400 python benchmarks/tc_dispatch_compare.py --dtype bf16 --shapes "1,8192,8192;1,8192,28672;1,10240,8192;1,11008,4096" --only "gemv c=64 ks=1,swap ks=1 s=8,swap ks=1 s=6,swap ks=2 s=8" --rounds 3 --rep-ms 8 --json $R/gemv_swap_h200.json > $R/gemv_swap_h200.txt 2>&1
echo "rc=$?"
grep -E "^[0-9]|^  [a-z]" $R/gemv_swap_h200.txt | sed 's/\[cuBLAS.*\]//' | cut -c1-120
